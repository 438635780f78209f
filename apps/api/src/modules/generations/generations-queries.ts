// The statement GET /generation makes per answer (generations.service.ts getGeneration), built here
// with its values so that the bench's database floor (through statements.ts) makes the same one.
import { decimalText, modelColumns, parsedJson, rowOrNulls, type Generation as GenerationRow } from '@switchyard/db';
import { z } from 'zod';
import { tenantStatement, tenantValues, type Viewer } from '../../access/tenancy.js';

/**
 * The organization's credit standing and the generation (:generation_id), if the caller may read it (access/:
 * generationWhere), in one round trip: by primary key, whatever the number of generations.
 */
const GENERATION_WITH_CREDIT = tenantStatement(
  'generation',
  (tenant) => `
  SELECT o.credit_balance < 0 AS in_debt, g.*
  FROM organizations o
  LEFT JOIN generations g ON g.id = :generation_id AND ${tenant.where('g')}
  WHERE o.id = ${tenant.organizationId}`,
  rowOrNulls(
    { in_debt: z.boolean() },
    modelColumns<GenerationRow>()({
      id: z.string(),
      organization_id: z.string(),
      workspace_id: z.string(),
      api_key_id: z.string(),
      user_id: z.string(),
      request_id: z.string().nullable(),
      upstream_id: z.string().nullable(),
      model: z.string(),
      provider_name: z.string().nullable(),
      router: z.string().nullable(),
      api_type: z.string().nullable(),
      app_id: z.number().int().nullable(),
      preset_id: z.string().nullable(),
      session_id: z.string().nullable(),
      external_user: z.string().nullable(),
      user_agent: z.string().nullable(),
      http_referer: z.string().nullable(),
      origin: z.string().nullable(),
      data_region: z.string().nullable(),
      service_tier: z.string().nullable(),
      web_search_engine: z.string().nullable(),
      finish_reason: z.string().nullable(),
      native_finish_reason: z.string().nullable(),
      cancelled: z.boolean(),
      streamed: z.boolean(),
      is_byok: z.boolean(),
      is_free: z.boolean(),
      latency: z.number().nullable(),
      generation_time: z.number().nullable(),
      moderation_latency: z.number().nullable(),
      tokens_prompt: z.number().int(),
      tokens_completion: z.number().int(),
      native_tokens_prompt: z.number().int().nullable(),
      native_tokens_completion: z.number().int().nullable(),
      native_tokens_completion_images: z.number().int().nullable(),
      native_tokens_reasoning: z.number().int().nullable(),
      native_tokens_cached: z.number().int().nullable(),
      num_fetches: z.number().int().nullable(),
      num_input_audio_prompt: z.number().int().nullable(),
      num_media_completion: z.number().int().nullable(),
      num_media_prompt: z.number().int().nullable(),
      num_search_results: z.number().int().nullable(),
      total_cost: decimalText,
      usage: decimalText,
      upstream_inference_cost: decimalText.nullable(),
      cache_discount: decimalText.nullable(),
      provider_responses: parsedJson,
      created_at: z.date(),
    }),
  ),
);

/**
 * The one statement GET /generation makes per answer, with its values: a management key reads its
 * organization's generation, a regular key one of its workspace's by its user or itself
 * (generationWhere). getGeneration makes it; so does the bench's database floor (through statements.ts).
 */
export function generationQuery(viewer: Viewer, id: string) {
  return { statement: GENERATION_WITH_CREDIT, values: tenantValues(GENERATION_WITH_CREDIT, viewer, { generation_id: id }) };
}
