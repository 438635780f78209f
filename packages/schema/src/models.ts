import { z } from 'zod';
import { TimestampSchema, dataOf } from './common.js';
import { CatalogImageEndpointSchema, CatalogVideoModelSchema } from './media-specs.js';

/** A decimal numeral as a string, exactly as published: "0", "0.0000025", "12". */
export const PriceSchema = z
  .string()
  .regex(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/, 'must be a non-negative decimal numeral')
  .describe('USD, a decimal numeral as a string');

export const ReasoningEffortSchema = z.enum(['high', 'medium', 'low', 'minimal']);

export const ModelReasoningSchema = z
  .object({
    default_effort: ReasoningEffortSchema.describe('Effort used when the request sets none'),
    default_enabled: z.boolean().describe('Whether reasoning is on unless the request turns it off'),
    mandatory: z.boolean().describe('Whether reasoning cannot be turned off'),
    supported_efforts: z.array(ReasoningEffortSchema).min(1).describe('Efforts a request may ask for'),
  })
  .describe('How the model reasons');
export type ModelReasoning = z.infer<typeof ModelReasoningSchema>;

/** The most tokens one request may carry (admin-api.md, the Model record): two numbers, or null. */
export const PerRequestLimitsSchema = z
  .strictObject({
    prompt_tokens: z.number().nonnegative().describe('Most prompt tokens per request'),
    completion_tokens: z.number().nonnegative().describe('Most completion tokens per request'),
  })
  .describe('Per-request token limits');
export type PerRequestLimits = z.infer<typeof PerRequestLimitsSchema>;

export const ModelPricingSchema = z.object({
  prompt: PriceSchema.describe('Per prompt token'),
  completion: PriceSchema.describe('Per completion token'),
  image: PriceSchema.describe('Per input image'),
  request: PriceSchema.describe('Per request'),
});

export const ModelSchema = z
  .object({
    id: z.string().describe('<author>/<slug>, with :<variant> for a variant'),
    canonical_slug: z.string().describe('The permanent slug of the model version behind the id'),
    name: z.string(),
    description: z.string(),
    created: z.number().int().describe('Unix seconds when the model was added'),
    context_length: z.number().int().describe('Tokens'),
    architecture: z.object({
      input_modalities: z.array(z.string()),
      output_modalities: z.array(z.string()),
      modality: z.string().describe('<in>-><out>, e.g. text+image->text'),
      tokenizer: z.string(),
      instruct_type: z.string().nullable(),
    }),
    pricing: ModelPricingSchema,
    top_provider: z.object({
      context_length: z.number().int(),
      is_moderated: z.boolean(),
      max_completion_tokens: z.number().int().nullable(),
    }),
    supported_parameters: z.array(z.string()),
    supported_voices: z.array(z.unknown()).nullable(),
    default_parameters: z.record(z.string(), z.unknown()).nullable(),
    per_request_limits: PerRequestLimitsSchema.nullable(),
    expiration_date: TimestampSchema.nullable(),
    knowledge_cutoff: z.string().nullable(),
    links: z.object({ details: z.string().describe("Path of the model's endpoints listing") }),
    reasoning: ModelReasoningSchema.optional().describe('Present on reasoning models only'),
  })
  .describe('A model of the catalog');
export type Model = z.infer<typeof ModelSchema>;

export const GetModelInputSchema = z.object({
  author: z.string().min(1).max(300).describe('Model author or organization'),
  slug: z.string().min(1).max(300).describe('Model slug, optionally with a variant suffix after a colon (gpt-4o:free)'),
});
export type GetModelInput = z.infer<typeof GetModelInputSchema>;
export const GetModelOutputSchema = dataOf(ModelSchema);
export type GetModelOutput = z.infer<typeof GetModelOutputSchema>;

export const ListEmbeddingsModelsInputSchema = z
  .object({
    offset: z.number().int().min(0).nullish().describe('Number of models to skip (default 0)'),
    limit: z.number().int().min(1).max(1000).nullish().describe('Maximum models to return (1..1000, default 500)'),
  })
  .describe('With neither offset nor limit, the whole list');
export type ListEmbeddingsModelsInput = z.infer<typeof ListEmbeddingsModelsInputSchema>;

export const ListEmbeddingsModelsOutputSchema = z.object({
  data: z.array(ModelSchema),
  total_count: z.number().int().describe('All embeddings models, not only this page'),
  links: z.object({ next: z.string().nullable().describe('URL of the next page; null on the last') }),
});
export type ListEmbeddingsModelsOutput = z.infer<typeof ListEmbeddingsModelsOutputSchema>;

/** A model id as written in a catalog: <author>/<slug>, no variant suffix. */
const CatalogModelIdSchema = z
  .string()
  .max(300)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be <author>/<slug>');

export const CatalogVariantSchema = z.object({
  variant: z
    .string()
    .max(100)
    .regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be a lowercase variant name, e.g. free')
    .describe('Suffix after the colon: free, extended, thinking...'),
  name: z.string().min(1).nullish().describe('Defaults to "<model name> (<variant>)"'),
  context_length: z.number().int().positive().max(2_147_483_647).nullish().describe("Defaults to the model's"),
  pricing: ModelPricingSchema.partial().nullish().describe("Prices that differ from the model's"),
});
export type CatalogVariant = z.infer<typeof CatalogVariantSchema>;

const ProviderSlugSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'a lowercase URL-safe slug, e.g. amazon-bedrock')
  .max(100);
const CountryCodeSchema = z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 code in upper case');
const UrlSchema = z.url({ protocol: /^https?$/ }).max(2000);

/** A provider as the catalog publishes it (the Provider record of GET /providers). */
export const CatalogProviderSchema = z.object({
  slug: ProviderSlugSchema,
  name: z.string().min(1).max(200).describe('Display name'),
  privacy_policy_url: UrlSchema.nullish(),
  terms_of_service_url: UrlSchema.nullish(),
  status_page_url: UrlSchema.nullish(),
  headquarters: CountryCodeSchema.nullish(),
  datacenters: z.array(CountryCodeSchema).max(300).nullish(),
});
export type CatalogProvider = z.infer<typeof CatalogProviderSchema>;

const PriceOverrideSchema = z.object({
  prompt: PriceSchema.optional(),
  completion: PriceSchema.optional(),
  audio: PriceSchema.optional(),
  input_cache_read: PriceSchema.optional(),
  input_cache_write: PriceSchema.optional(),
  input_cache_write_1h: PriceSchema.optional(),
  input_audio_cache: PriceSchema.optional(),
  min_prompt_tokens: z.number().nonnegative().optional(),
  utc_start: z.number().optional(),
  utc_end: z.number().optional(),
  utc_days: z.array(z.enum(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'])).optional(),
});

/** Endpoint pricing: the Model record's pricing shape, USD per token (or per unit) as decimal strings. */
export const EndpointPricingSchema = z.object({
  prompt: PriceSchema,
  completion: PriceSchema,
  request: PriceSchema.optional(),
  image: PriceSchema.optional(),
  image_output: PriceSchema.optional(),
  image_token: PriceSchema.optional(),
  audio: PriceSchema.optional(),
  audio_output: PriceSchema.optional(),
  input_audio_cache: PriceSchema.optional(),
  input_cache_read: PriceSchema.optional(),
  input_cache_write: PriceSchema.optional(),
  input_cache_write_1h: PriceSchema.optional(),
  internal_reasoning: PriceSchema.optional(),
  web_search: PriceSchema.optional(),
  discount: z.number().min(0).max(1).optional(),
  overrides: z.array(PriceOverrideSchema).max(50).optional(),
});
export type EndpointPricing = z.infer<typeof EndpointPricingSchema>;

export const ToolChoiceSupportSchema = z.object({ auto: z.boolean(), function: z.boolean(), none: z.boolean(), required: z.boolean() });

/** One provider's offer of a model, as the catalog publishes it; what is left out comes from the model. */
export const CatalogEndpointSchema = z.object({
  provider: ProviderSlugSchema.describe('Slug of a provider of the catalog (in this import or already stored)'),
  tag: z.string().min(1).max(200).nullish().describe('Unique per model; defaults to the provider slug, with "/<quantization>" when given'),
  name: z.string().min(1).max(300).nullish().describe('Defaults to "<provider name> | <model id>"'),
  context_length: z.number().int().positive().max(2_147_483_647).nullish().describe("Defaults to the model's"),
  max_completion_tokens: z.number().int().positive().max(2_147_483_647).nullish(),
  max_prompt_tokens: z.number().int().positive().max(2_147_483_647).nullish(),
  pricing: EndpointPricingSchema.nullish().describe("Defaults to the model's prompt and completion prices"),
  quantization: z.string().min(1).max(50).nullish().describe('int4, int8, fp4, mxfp4, nvfp4, fp6, fp8, mxfp8, fp16, bf16, fp32, unknown (open set)'),
  supported_parameters: z.array(z.string().min(1).max(100)).max(200).nullish().describe("Defaults to the model's"),
  supports_implicit_caching: z.boolean().default(false),
  supports_tool_choice: ToolChoiceSupportSchema.nullish().describe('Defaults to all true when the parameters include tool_choice, else all false'),
  status: z.number().int().min(-100).max(100).default(0).describe('0 = serving; known values 0, -1, -2, -3, -5, -10'),
  zdr: z.boolean().default(false).describe('Zero data retention: the provider keeps no prompt or completion of a request to this endpoint'),
  image: CatalogImageEndpointSchema.nullish().describe(
    "An image model's endpoint: its parameters, passthrough options, streaming and prices (GET /images/models)",
  ),
});
export type CatalogEndpoint = z.infer<typeof CatalogEndpointSchema>;

/** A model as a catalog publishes it (the Model record's fields), with its aliases and variants. */
export const CatalogModelSchema = z.object({
  id: CatalogModelIdSchema,
  canonical_slug: z.string().min(1).nullish().describe('Defaults to the id'),
  name: z.string().min(1),
  description: z.string().default(''),
  created: z.number().int().nonnegative().max(2_147_483_647),
  context_length: z.number().int().positive().max(2_147_483_647),
  architecture: z.object({
    input_modalities: z.array(z.string().min(1)).min(1),
    output_modalities: z.array(z.string().min(1)).min(1),
    tokenizer: z.string().min(1),
    instruct_type: z.string().nullish(),
  }),
  pricing: ModelPricingSchema.partial({ image: true, request: true }),
  top_provider: z
    .object({
      context_length: z.number().int().positive().max(2_147_483_647).nullish(),
      is_moderated: z.boolean().default(false),
      max_completion_tokens: z.number().int().positive().max(2_147_483_647).nullish(),
    })
    .nullish(),
  supported_parameters: z.array(z.string()).default([]),
  supported_voices: z.array(z.unknown()).nullish(),
  default_parameters: z.record(z.string(), z.unknown()).nullish(),
  per_request_limits: PerRequestLimitsSchema.nullish().describe('{ prompt_tokens, completion_tokens } numbers, or null'),
  expiration_date: z.iso.datetime({ offset: true }).nullish(),
  knowledge_cutoff: z.string().nullish(),
  reasoning: ModelReasoningSchema.nullish(),
  aliases: z
    .array(CatalogModelIdSchema)
    .optional()
    .describe("Other <author>/<slug> names that resolve to this model; when given, replaces the model's aliases"),
  variants: z.array(CatalogVariantSchema).optional().describe("The model's variants; when given, replaces them"),
  endpoints: z.array(CatalogEndpointSchema).max(200).optional().describe("The providers' offers of the model, in the order listed; when given, replaces them"),
  video: CatalogVideoModelSchema.nullish().describe("A video model's parameters (GET /videos/models)"),
});
export type CatalogModel = z.infer<typeof CatalogModelSchema>;

export const CatalogSchema = z
  .object({
    providers: z.array(CatalogProviderSchema).max(1000).optional().describe('Providers to write (by slug) before the models, whose endpoints name them'),
    models: z.array(CatalogModelSchema).min(1).max(10_000),
  })
  .describe('A catalog file: { "providers"?: [...], "models": [...] }');
export type Catalog = z.infer<typeof CatalogSchema>;

export const ImportCatalogOutputSchema = z.object({
  models: z.number().int().describe('Models written'),
  aliases: z.number().int(),
  variants: z.number().int(),
  providers: z.number().int(),
  endpoints: z.number().int(),
});
export type ImportCatalogOutput = z.infer<typeof ImportCatalogOutputSchema>;

export const UpsertAliasInputSchema = z.object({
  alias: CatalogModelIdSchema.describe('The other name'),
  model_id: CatalogModelIdSchema.describe('The canonical model it resolves to'),
});
export type UpsertAliasInput = z.infer<typeof UpsertAliasInputSchema>;

export const UpsertVariantInputSchema = CatalogVariantSchema.extend({ model_id: CatalogModelIdSchema });
export type UpsertVariantInput = z.infer<typeof UpsertVariantInputSchema>;

// ---- Catalog reads (admin-api.md B1-B4) -------------------------------------------------------

const PercentilesSchema = z.object({ p50: z.number(), p75: z.number(), p90: z.number(), p99: z.number() });

export const EndpointSchema = z.object({
  name: z.string(),
  model_id: z.string().describe('Permanent model slug'),
  model_name: z.string(),
  provider_name: z.string(),
  tag: z.string(),
  context_length: z.number().int(),
  max_completion_tokens: z.number().int().nullable(),
  max_prompt_tokens: z.number().int().nullable(),
  pricing: EndpointPricingSchema,
  quantization: z.string().nullable(),
  supported_parameters: z.array(z.string()),
  supports_implicit_caching: z.boolean(),
  supports_tool_choice: ToolChoiceSupportSchema,
  latency_last_30m: PercentilesSchema.nullable().describe('null: this server keeps no performance data'),
  throughput_last_30m: PercentilesSchema.nullable(),
  uptime_last_5m: z.number().nullable(),
  uptime_last_30m: z.number().nullable(),
  uptime_last_1d: z.number().nullable(),
  status: z.number().int(),
});
export type Endpoint = z.infer<typeof EndpointSchema>;

export const ModelEndpointsSchema = z.object({
  id: z.string(),
  name: z.string(),
  created: z.number().int(),
  description: z.string(),
  architecture: z.object({
    input_modalities: z.array(z.string()),
    output_modalities: z.array(z.string()),
    modality: z.string().nullable(),
    tokenizer: z.string().nullable(),
    instruct_type: z.string().nullable(),
  }),
  endpoints: z.array(EndpointSchema),
});
export type ModelEndpoints = z.infer<typeof ModelEndpointsSchema>;
export const GetModelEndpointsOutputSchema = dataOf(ModelEndpointsSchema);

export const ProviderSchema = z.object({
  name: z.string(),
  slug: z.string(),
  privacy_policy_url: z.string().nullable(),
  terms_of_service_url: z.string().nullable(),
  status_page_url: z.string().nullable(),
  headquarters: z.string().nullable(),
  datacenters: z.array(z.string()).nullable(),
});
export type Provider = z.infer<typeof ProviderSchema>;
export const ListProvidersOutputSchema = z.object({ data: z.array(ProviderSchema) });

const commaList = z.string().max(2000);
const nullableNumber = z.number().nullish();

export const ListModelsInputSchema = z.object({
  offset: z.number().int().min(0).nullish().describe('Default 0'),
  limit: z.number().int().min(1).max(1000).nullish().describe('1..1000, default 500; with neither offset nor limit, the full list'),
  q: z.string().max(200).optional().describe('Free text matched against model name and id'),
  sort: z.string().max(100).optional().describe('newest, pricing-low-to-high, pricing-high-to-low, context-high-to-low; other values (open set) keep id order'),
  output_modalities: commaList.optional().describe('Comma-separated; a model matches when it outputs any of them; `all`: no filter; default text'),
  input_modalities: commaList.optional().describe('Comma-separated; a model matches when it takes all of them'),
  supported_parameters: commaList.optional().describe('Comma-separated; a model matches when it supports all of them'),
  context: z.number().int().min(0).optional().describe('Minimum context length in tokens'),
  min_price: nullableNumber.describe('Prompt price, USD per million tokens'),
  max_price: nullableNumber,
  min_output_price: nullableNumber.describe('Completion price, USD per million tokens'),
  max_output_price: nullableNumber,
  arch: z.string().max(100).optional().describe('Model family (the tokenizer: GPT, Claude, Gemini, Llama...), case-insensitive'),
  model_authors: commaList.optional().describe('Comma-separated author slugs'),
  providers: commaList.optional().describe('Comma-separated provider names or slugs: models with an endpoint at one of them'),
  min_age_days: z.number().int().min(0).nullish(),
  max_age_days: z.number().int().min(0).nullish(),
  category: z.string().max(100).optional().describe('Not kept by this catalog: 400'),
  distillable: z.string().max(10).optional().describe('Not kept by this catalog: 400'),
  zdr: z.literal('true').optional().describe('Only `true`: models with at least one zero-data-retention endpoint (another value: 400)'),
  region: z.string().max(10).optional().describe('Not kept by this catalog: 400'),
  min_intelligence_index: nullableNumber.describe('Not kept by this catalog: 400'),
  max_intelligence_index: nullableNumber.describe('Not kept by this catalog: 400'),
  min_coding_index: nullableNumber.describe('Not kept by this catalog: 400'),
  max_coding_index: nullableNumber.describe('Not kept by this catalog: 400'),
  min_agentic_index: nullableNumber.describe('Not kept by this catalog: 400'),
  max_agentic_index: nullableNumber.describe('Not kept by this catalog: 400'),
  min_tool_success_rate: nullableNumber.describe('Not kept by this catalog: 400'),
  max_tool_success_rate: nullableNumber.describe('Not kept by this catalog: 400'),
});
export type ListModelsInput = z.infer<typeof ListModelsInputSchema>;

export const ListModelsOutputSchema = z.object({
  data: z.array(ModelSchema),
  total_count: z.number().int().describe('Every match, not only this page'),
  links: z.object({ next: z.string().nullable().describe('URL of the next page; null on the last') }),
});
export type ListModelsOutput = z.infer<typeof ListModelsOutputSchema>;

export const CountModelsInputSchema = z.object({
  output_modalities: commaList.optional().describe('As for GET /models; default text'),
});
export type CountModelsInput = z.infer<typeof CountModelsInputSchema>;
export const CountModelsOutputSchema = dataOf(z.object({ count: z.number().int() }));
