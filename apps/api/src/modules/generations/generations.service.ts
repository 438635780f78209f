// Generations: recording (the routing service's hot write path, with the usage rollups and the
// credit balance in the same transaction), reading the record and its stored content, and feedback.
import { Prisma, type Db, type Generation as GenerationRow } from '@switchyard/db';
import type {
  Generation,
  GenerationContent,
  GenerationFeedbackInput,
  GenerationIdQuery,
  RecordGenerationInput,
  RecordGenerationOutput,
} from '@switchyard/schema';
import { InsufficientCredits, Invalid, NotFound } from '../../errors.js';
import type { Actor } from '../keys/auth.service.js';
import { utcDay } from '../keys/periods.js';
import { isFreeModel, resolveModel } from '../models/models.service.js';
import { ADD_CREDITS_URL } from './credits.service.js';

const ZERO = new Prisma.Decimal(0);

const num = (value: Prisma.Decimal | null) => (value === null ? null : value.toNumber());

function generationRecord(g: GenerationRow): Generation {
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
    total_cost: g.total_cost.toNumber(),
    usage: g.usage.toNumber(),
    upstream_inference_cost: num(g.upstream_inference_cost),
    cache_discount: num(g.cache_discount),
    provider_responses: Array.isArray(g.provider_responses) ? g.provider_responses : null,
  } satisfies Generation;
}

/** The generations a key may read: its organization's (management key) or its user's (regular key). */
function visibleGeneration(actor: Actor, id: string): Prisma.GenerationWhereInput {
  return {
    id,
    organization_id: actor.organizationId,
    ...(actor.key.is_management_key ? {} : { user_id: actor.userId }),
  };
}

/** GET /generation. 402 while the organization's credit balance is negative. */
export async function getGeneration(db: Db, actor: Actor, input: GenerationIdQuery): Promise<Generation> {
  const [organization, row] = await Promise.all([
    db.organization.findUnique({ where: { id: actor.organizationId }, select: { credit_balance: true } }),
    db.generation.findFirst({ where: visibleGeneration(actor, input.id) }),
  ]);
  if (organization?.credit_balance.isNegative()) throw new InsufficientCredits(ADD_CREDITS_URL);
  if (!row) throw new NotFound(`generation ${input.id}`);
  return generationRecord(row);
}

/** GET /generation/content. 404 also when the content was not stored. */
export async function getGenerationContent(db: Db, actor: Actor, input: GenerationIdQuery): Promise<GenerationContent> {
  const row = await db.generation.findFirst({ where: visibleGeneration(actor, input.id), select: { content: true } });
  const content = row?.content;
  if (!content) throw new NotFound(row ? `content of generation ${input.id} not stored` : `generation ${input.id}`);
  const messages = (content.input as { messages?: GenerationContent['input']['messages'] } | null)?.messages ?? [];
  const error = content.error;
  return {
    input: { messages },
    output: { completion: content.completion, reasoning: content.reasoning },
    error: error !== null && typeof error === 'object' && !Array.isArray(error) ? error : null,
  } satisfies GenerationContent;
}

/** POST /generation/feedback: one feedback per user and generation; a repeat replaces it. */
export async function submitFeedback(db: Db, actor: Actor, input: GenerationFeedbackInput): Promise<{ success: true }> {
  const generation = await db.generation.findFirst({
    where: { id: input.generation_id, organization_id: actor.organizationId, user_id: actor.userId },
    select: { id: true },
  });
  if (!generation) throw new NotFound(`generation ${input.generation_id} of user ${actor.userId}`);
  const comment = input.comment ?? null;
  await db.generationFeedback.upsert({
    where: { generation_id_user_id: { generation_id: generation.id, user_id: actor.userId } },
    create: {
      organization_id: actor.organizationId,
      generation_id: generation.id,
      user_id: actor.userId,
      category: input.category,
      comment,
    },
    update: { category: input.category, comment },
  });
  return { success: true };
}

const RECORD_TX = { maxWait: 10_000, timeout: 20_000 } as const;

const json = (value: unknown) => (value == null ? Prisma.DbNull : (value as Prisma.InputJsonValue));

/**
 * Internal: records a generation made with a key of the caller's organization. In one transaction:
 * the Generation row (skipped when the id exists: a retry counts nothing twice), its content (if
 * given and the organization stores content), the key's daily rollup and lifetime totals, and the
 * organization's credit balance.
 *
 * Spend: `usage` is what the organization is charged; it goes to the key's usage figures and is
 * drawn from the credit balance. For a BYOK generation, `upstream_inference_cost` (what the
 * provider charged the customer's own key) goes to the byok_usage figures. A request counts as a
 * free-model request when the model is a `:free` variant, or the catalog prices it at zero.
 */
export async function recordGeneration(db: Db, actor: Actor, input: RecordGenerationInput, now: Date): Promise<RecordGenerationOutput> {
  const key = await db.apiKey.findFirst({
    where: { hash: input.api_key_hash, organization_id: actor.organizationId },
    select: { id: true, workspace_id: true, creator_user_id: true, organization: { select: { store_content: true } } },
  });
  if (!key) throw new NotFound(`key ${input.api_key_hash}`);
  const resolved = await resolveModel(db, input.model);
  const isFree = resolved ? isFreeModel(resolved) : /:free$/i.test(input.model);
  const storeContent = input.content !== undefined && key.organization.store_content;
  const createdAt = input.created_at ? new Date(input.created_at) : now;
  const usage = new Prisma.Decimal(input.usage ?? 0);
  const byok = input.is_byok ? new Prisma.Decimal(input.upstream_inference_cost ?? 0) : ZERO;
  const day = utcDay(createdAt).toISOString().slice(0, 10);
  const { content, api_key_hash: _hash, created_at: _created, ...fields } = input;

  const recorded = await db.$transaction(async (tx) => {
    const inserted = await tx.generation.createMany({
      data: {
        ...fields,
        organization_id: actor.organizationId,
        workspace_id: key.workspace_id,
        api_key_id: key.id,
        user_id: key.creator_user_id,
        is_free: isFree,
        provider_responses: json(input.provider_responses),
        created_at: createdAt,
      },
      skipDuplicates: true,
    });
    if (inserted.count === 0) return false;
    if (storeContent && content) {
      await tx.generationContent.create({
        data: {
          generation_id: input.id,
          organization_id: actor.organizationId,
          input: content.input,
          completion: content.output?.completion ?? '',
          reasoning: content.output?.reasoning ?? null,
          error: json(content.error),
        },
      });
    }
    await tx.$executeRaw`
      INSERT INTO key_usage_daily (api_key_id, day, organization_id, usage, byok_usage, request_count, free_request_count)
      VALUES (${key.id}::uuid, ${day}::date, ${actor.organizationId}, ${usage.toString()}::numeric, ${byok.toString()}::numeric, 1, ${isFree ? 1 : 0})
      ON CONFLICT (api_key_id, day) DO UPDATE SET
        usage = key_usage_daily.usage + EXCLUDED.usage,
        byok_usage = key_usage_daily.byok_usage + EXCLUDED.byok_usage,
        request_count = key_usage_daily.request_count + 1,
        free_request_count = key_usage_daily.free_request_count + EXCLUDED.free_request_count`;
    if (!usage.isZero() || !byok.isZero()) {
      await tx.apiKey.update({ where: { id: key.id }, data: { usage: { increment: usage }, byok_usage: { increment: byok } } });
    }
    if (!usage.isZero()) {
      await tx.organization.update({ where: { id: actor.organizationId }, data: { credit_balance: { decrement: usage } } });
    }
    return true;
  }, RECORD_TX);

  if (recorded) return { id: input.id, recorded: true, is_free: isFree, content_stored: storeContent };
  // A retry: answer what the first call recorded.
  const existing = await db.generation.findUnique({
    where: { id: input.id },
    select: { organization_id: true, is_free: true, content: { select: { generation_id: true } } },
  });
  if (!existing || existing.organization_id !== actor.organizationId) {
    throw new Invalid(`generation id ${input.id} is already in use`, { id: input.id });
  }
  return { id: input.id, recorded: false, is_free: existing.is_free, content_stored: existing.content !== null };
}
