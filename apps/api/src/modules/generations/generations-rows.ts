// Generation rows as the API answers them: the Generation record (GET /generation; the export,
// modules/export) and the GenerationContent record of a stored content row.
import type { Prisma, Generation as GenerationRow, GenerationContent as GenerationContentRow } from '@switchyard/db';
import type { Generation, GenerationContent } from '@switchyard/schema';

type DecimalColumn = 'total_cost' | 'usage' | 'upstream_inference_cost' | 'cache_discount';

/** A generation row from Prisma, or from node-postgres (which reads numeric columns as text). */
type GenerationData = Omit<GenerationRow, DecimalColumn> & {
  [C in DecimalColumn]: GenerationRow[C] extends Prisma.Decimal ? Prisma.Decimal | string : Prisma.Decimal | string | null;
};

const num = (value: Prisma.Decimal | string | null) => (value === null ? null : Number(value));

/** The Generation record of a row (GET /generation; the export, modules/export). */
export function generationOf(g: GenerationData): Generation {
  return {
    id: g.id,
    workspace_id: g.workspace_id,
    request_id: g.request_id,
    upstream_id: g.upstream_id,
    model: g.model,
    provider_name: g.provider_name,
    router: g.router,
    api_type: g.api_type,
    app_id: g.app_id,
    preset_id: g.preset_id,
    session_id: g.session_id,
    external_user: g.external_user,
    user_agent: g.user_agent,
    http_referer: g.http_referer,
    origin: g.origin,
    data_region: g.data_region,
    service_tier: g.service_tier,
    web_search_engine: g.web_search_engine,
    created_at: g.created_at.toISOString(),
    finish_reason: g.finish_reason,
    native_finish_reason: g.native_finish_reason,
    cancelled: g.cancelled,
    streamed: g.streamed,
    is_byok: g.is_byok,
    latency: g.latency,
    generation_time: g.generation_time,
    moderation_latency: g.moderation_latency,
    tokens_prompt: g.tokens_prompt,
    tokens_completion: g.tokens_completion,
    native_tokens_prompt: g.native_tokens_prompt,
    native_tokens_completion: g.native_tokens_completion,
    native_tokens_completion_images: g.native_tokens_completion_images,
    native_tokens_reasoning: g.native_tokens_reasoning,
    native_tokens_cached: g.native_tokens_cached,
    num_fetches: g.num_fetches,
    num_input_audio_prompt: g.num_input_audio_prompt,
    num_media_completion: g.num_media_completion,
    num_media_prompt: g.num_media_prompt,
    num_search_results: g.num_search_results,
    total_cost: Number(g.total_cost),
    usage: Number(g.usage),
    upstream_inference_cost: num(g.upstream_inference_cost),
    cache_discount: num(g.cache_discount),
    provider_responses: Array.isArray(g.provider_responses) ? g.provider_responses : null,
  } satisfies Generation;
}

/** The GenerationContent record of a stored content row (GET /generation/content; the export). */
export function generationContentOf(content: Pick<GenerationContentRow, 'input' | 'completion' | 'reasoning' | 'error'>): GenerationContent {
  const messages = (content.input as { messages?: GenerationContent['input']['messages'] } | null)?.messages ?? [];
  const error = content.error;
  return {
    input: { messages },
    output: { completion: content.completion, reasoning: content.reasoning },
    error: error !== null && typeof error === 'object' && !Array.isArray(error) ? error : null,
  } satisfies GenerationContent;
}
