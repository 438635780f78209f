import { z } from 'zod';
import { OrganizationIdSchema } from './platform.js';
import { ErrorEnvelopeSchema, IdentifierSchema, TimestampSchema, dataOf } from './common.js';

const nullableString = () => z.string().nullable();
const nullableInt = () => z.number().int().nullable();

export const GenerationSchema = z
  .object({
    id: z.string(),
    workspace_id: z.string().describe('Workspace of the key that made the request'),
    request_id: nullableString(),
    upstream_id: nullableString().describe("The provider's id of the completion"),
    model: z.string(),
    provider_name: nullableString(),
    router: nullableString(),
    api_type: nullableString(),
    app_id: nullableInt(),
    preset_id: nullableString(),
    session_id: nullableString(),
    external_user: nullableString(),
    user_agent: nullableString(),
    http_referer: nullableString(),
    origin: nullableString(),
    data_region: nullableString(),
    service_tier: nullableString(),
    web_search_engine: nullableString(),
    created_at: TimestampSchema.describe('ISO 8601 with offset (Z)'),
    finish_reason: nullableString(),
    native_finish_reason: nullableString(),
    cancelled: z.boolean(),
    streamed: z.boolean(),
    is_byok: z.boolean(),
    latency: z.number().nullable().describe('Milliseconds to the first token'),
    generation_time: z.number().nullable().describe('Milliseconds'),
    moderation_latency: z.number().nullable().describe('Milliseconds'),
    tokens_prompt: z.number().int(),
    tokens_completion: z.number().int(),
    native_tokens_prompt: nullableInt(),
    native_tokens_completion: nullableInt(),
    native_tokens_completion_images: nullableInt(),
    native_tokens_reasoning: nullableInt(),
    native_tokens_cached: nullableInt(),
    num_fetches: nullableInt(),
    num_input_audio_prompt: nullableInt(),
    num_media_completion: nullableInt(),
    num_media_prompt: nullableInt(),
    num_search_results: nullableInt(),
    total_cost: z.number().describe('USD'),
    usage: z.number().describe('USD charged to the organization'),
    upstream_inference_cost: z.number().nullable().describe('USD the provider charged (BYOK)'),
    cache_discount: z.number().nullable(),
    provider_responses: z.array(z.unknown()).nullable(),
  })
  .describe('Request and usage metadata of a generation');
export type Generation = z.infer<typeof GenerationSchema>;

export const GenerationIdQuerySchema = z.object({
  id: IdentifierSchema.describe('The generation id'),
});
export type GenerationIdQuery = z.infer<typeof GenerationIdQuerySchema>;
export const GetGenerationOutputSchema = dataOf(GenerationSchema);

export const MessageSchema = z.object({ role: z.string().min(1), content: z.string() });

export const GenerationContentSchema = z
  .object({
    input: z.object({ messages: z.array(MessageSchema) }),
    output: z.object({ completion: z.string(), reasoning: z.string().nullable() }),
    error: z.record(z.string(), z.unknown()).nullable().describe('The stored error of a failed generation'),
  })
  .describe('Stored prompt, completion and error of a generation');
export type GenerationContent = z.infer<typeof GenerationContentSchema>;
export const GetGenerationContentOutputSchema = dataOf(GenerationContentSchema);

export const FeedbackCategorySchema = z.enum(['latency', 'incoherence', 'incorrect_response', 'formatting', 'billing', 'api_error', 'other']);

export const GenerationFeedbackInputSchema = z.object({
  generation_id: IdentifierSchema,
  category: FeedbackCategorySchema,
  comment: z.string().max(1000).optional().describe('At most 1000 characters'),
});
export type GenerationFeedbackInput = z.infer<typeof GenerationFeedbackInputSchema>;
export const GenerationFeedbackOutputSchema = dataOf(z.object({ success: z.literal(true) }));

// Bounded by their columns (INTEGER; DECIMAL(28, 12)), so an out-of-range value is a 400, not a
// failed insert.
const count = () => z.number().int().nonnegative().max(2_147_483_647);
const USD_MAX = 1e15;
const usd = () => z.number().nonnegative().max(USD_MAX);

/** Internal (tRPC): what the routing service records after each request. */
export const RecordGenerationInputSchema = z.object({
  id: IdentifierSchema.describe('Generation id; recording is idempotent on it'),
  api_key_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('SHA-256 of the key that made the request'),
  model: z.string().min(1).max(300),
  created_at: z.iso.datetime({ offset: true }).optional().describe('Defaults to now; its UTC day is the rollup day'),
  reservation_id: z.uuid().nullish().describe("routing.authorize's reservation: settled in the same transaction as the spend"),
  request_id: z.string().nullish(),
  upstream_id: z.string().nullish(),
  provider_name: z.string().nullish(),
  router: z.string().nullish(),
  api_type: z.string().nullish(),
  app_id: z.number().int().min(-2_147_483_648).max(2_147_483_647).nullish(),
  preset_id: z.string().nullish(),
  session_id: z.string().nullish(),
  external_user: z.string().nullish(),
  user_agent: z.string().nullish(),
  http_referer: z.string().nullish(),
  origin: z.string().nullish(),
  data_region: z.string().nullish(),
  service_tier: z.string().nullish(),
  web_search_engine: z.string().nullish(),
  finish_reason: z.string().nullish(),
  native_finish_reason: z.string().nullish(),
  cancelled: z.boolean().optional(),
  streamed: z.boolean().optional(),
  is_byok: z.boolean().optional(),
  latency: z.number().nonnegative().max(1e12).nullish(),
  generation_time: z.number().nonnegative().max(1e12).nullish(),
  moderation_latency: z.number().nonnegative().max(1e12).nullish(),
  tokens_prompt: count().optional(),
  tokens_completion: count().optional(),
  native_tokens_prompt: count().nullish(),
  native_tokens_completion: count().nullish(),
  native_tokens_completion_images: count().nullish(),
  native_tokens_reasoning: count().nullish(),
  native_tokens_cached: count().nullish(),
  num_fetches: count().nullish(),
  num_input_audio_prompt: count().nullish(),
  num_media_completion: count().nullish(),
  num_media_prompt: count().nullish(),
  num_search_results: count().nullish(),
  total_cost: usd().optional(),
  usage: usd().optional().describe('USD charged to the organization; drawn from its credit balance'),
  upstream_inference_cost: usd().nullish().describe("BYOK: what the provider charged the customer's own key"),
  cache_discount: z.number().min(-USD_MAX).max(USD_MAX).nullish(),
  provider_responses: z.array(z.unknown()).nullish(),
  content: z
    .object({
      input: z.object({ messages: z.array(MessageSchema) }),
      output: z.object({ completion: z.string().default(''), reasoning: z.string().nullish() }).optional(),
      error: z.record(z.string(), z.unknown()).nullish(),
    })
    .optional()
    .describe('Prompt, completion and error; not stored when the organization turned storage off'),
});
export type RecordGenerationInput = z.infer<typeof RecordGenerationInputSchema>;

export const RecordGenerationOutputSchema = z.object({
  id: z.string(),
  recorded: z.boolean().describe('false when this id was already recorded (a retry): nothing was counted twice'),
  is_free: z.boolean().describe('Counted as a free-model request'),
  content_stored: z.boolean(),
});
export type RecordGenerationOutput = z.infer<typeof RecordGenerationOutputSchema>;

/** The most generations one generations.recordBatch call takes. */
export const MAX_RECORD_BATCH = 1000;

/**
 * Internal (tRPC, platform keys): up to MAX_RECORD_BATCH generations in one call. Each item is checked
 * on its own against RecordGenerationInputSchema (and for values PostgreSQL cannot store), so that one
 * invalid item fails alone; only the count (and the body's size) is checked for the whole call.
 */
export const RecordGenerationBatchInputSchema = z.object({
  generations: z
    .array(z.unknown())
    .max(MAX_RECORD_BATCH)
    .describe('Up to 1,000 generations, each exactly what generations.record takes; each is checked on its own'),
});
export type RecordGenerationBatchInput = z.infer<typeof RecordGenerationBatchInputSchema>;

const recorded = <S extends 'recorded' | 'duplicate'>(status: S) => RecordGenerationOutputSchema.omit({ recorded: true }).extend({ status: z.literal(status) });

/** One item's result: recorded now, recorded before (a retry: nothing counted twice), or refused. */
export const RecordedGenerationResultSchema = z.discriminatedUnion('status', [
  recorded('recorded'),
  recorded('duplicate'),
  z.object({
    id: z.string().nullable().describe("The item's id, or null when it has no valid one"),
    status: z.literal('error'),
    error: ErrorEnvelopeSchema.shape.error.describe("What generations.record would have answered: the status, the spec's message, metadata"),
  }),
]);
export type RecordedGenerationResult = z.infer<typeof RecordedGenerationResultSchema>;

export const RecordGenerationBatchOutputSchema = z.object({
  results: z.array(RecordedGenerationResultSchema).describe("One per input generation, in the input's order"),
});
export type RecordGenerationBatchOutput = z.infer<typeof RecordGenerationBatchOutputSchema>;

/** Internal (tRPC, platform keys): add prepaid credit to an organization. */
export const AddCreditsInputSchema = z.object({
  organization_id: OrganizationIdSchema.describe('The organization credited'),
  amount: z.number().positive().finite().max(1e12).describe('USD to add (at most 1e12 a call)'),
});
export type AddCreditsInput = z.infer<typeof AddCreditsInputSchema>;
export const CreditBalanceSchema = z.object({
  credit_balance: z.number().describe("The organization's balance in USD after the change; negative means GET /generation answers 402"),
});
export type CreditBalance = z.infer<typeof CreditBalanceSchema>;

/** GET /credits `data`: lifetime totals in USD. */
export const CreditsSchema = z.object({
  total_credits: z.number().describe('USD of credit added to the organization, ever'),
  total_usage: z.number().describe('USD of recorded spend drawn from that credit, ever'),
});
export type Credits = z.infer<typeof CreditsSchema>;
export const GetCreditsOutputSchema = z.object({ data: CreditsSchema });

/** GET /activity query (admin-api.md B6). */
export const ActivityInputSchema = z.object({
  date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'a UTC day, YYYY-MM-DD')
    .optional()
    .describe('One UTC day within the last 30 completed UTC days'),
  api_key_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'a SHA-256 hex hash')
    .optional()
    .describe("Only this key's activity"),
  user_id: z.string().min(1).max(200).optional().describe("Only the activity of this member's keys"),
  workspace_id: z.string().min(1).max(200).optional().describe("Only this workspace's activity (UUID or slug of the organization's)"),
  group_by: z.enum(['workspace']).optional().describe('workspace: one row per workspace, each with workspace_id'),
});
export type ActivityInput = z.infer<typeof ActivityInputSchema>;

export const ActivityItemSchema = z.object({
  date: z.string().describe('YYYY-MM-DD (UTC day)'),
  model: z.string().describe('The model as recorded'),
  model_permaslug: z.string().describe("The catalog's permanent slug of the model (the recorded model when the catalog does not know it)"),
  endpoint_id: z.string().describe('The catalog endpoint of the model at that provider; "" when the catalog lists none'),
  provider_name: z.string(),
  requests: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  reasoning_tokens: z.number().int(),
  usage: z.number().describe('USD of platform credits'),
  byok_usage_inference: z.number().describe("USD spent through the customer's own provider keys"),
  workspace_id: z.string().optional().describe('With group_by=workspace only'),
});
export type ActivityItem = z.infer<typeof ActivityItemSchema>;
export const ActivityOutputSchema = z.object({ data: z.array(ActivityItemSchema) });
