import { z } from 'zod';
import { TimestampSchema, dataOf } from './common.js';

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
    per_request_limits: z.record(z.string(), z.unknown()).nullable(),
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
  per_request_limits: z.record(z.string(), z.unknown()).nullish(),
  expiration_date: z.iso.datetime({ offset: true }).nullish(),
  knowledge_cutoff: z.string().nullish(),
  reasoning: ModelReasoningSchema.nullish(),
  aliases: z
    .array(CatalogModelIdSchema)
    .optional()
    .describe("Other <author>/<slug> names that resolve to this model; when given, replaces the model's aliases"),
  variants: z
    .array(CatalogVariantSchema)
    .optional()
    .describe("The model's variants; when given, replaces them"),
});
export type CatalogModel = z.infer<typeof CatalogModelSchema>;

export const CatalogSchema = z
  .object({ models: z.array(CatalogModelSchema).min(1).max(10_000) })
  .describe('A catalog file: { "models": [...] }');
export type Catalog = z.infer<typeof CatalogSchema>;

export const ImportCatalogOutputSchema = z.object({
  models: z.number().int().describe('Models written'),
  aliases: z.number().int(),
  variants: z.number().int(),
});
export type ImportCatalogOutput = z.infer<typeof ImportCatalogOutputSchema>;

export const UpsertAliasInputSchema = z.object({
  alias: CatalogModelIdSchema.describe('The other name'),
  model_id: CatalogModelIdSchema.describe('The canonical model it resolves to'),
});
export type UpsertAliasInput = z.infer<typeof UpsertAliasInputSchema>;

export const UpsertVariantInputSchema = CatalogVariantSchema.extend({ model_id: CatalogModelIdSchema });
export type UpsertVariantInput = z.infer<typeof UpsertVariantInputSchema>;
