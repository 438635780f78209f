// Generations: recording (the routing service's hot write path, with the usage rollups and the
// credit balance in the same transaction), reading the record and its stored content, and feedback.
import {
  decimalText,
  modelColumns,
  parsedJson,
  Prisma,
  queryRows,
  rawRows,
  rowOrNulls,
  type Db,
  type Generation as GenerationRow,
  type GenerationContent as GenerationContentRow,
} from '@switchyard/db';
import type {
  Generation,
  GenerationContent,
  GenerationFeedbackInput,
  GenerationIdQuery,
  RecordedGenerationResult,
  RecordGenerationBatchOutput,
  RecordGenerationInput,
  RecordGenerationOutput,
} from '@switchyard/schema';
import { RecordGenerationInputSchema } from '@switchyard/schema';
import { z } from 'zod';
import { envelopeOf, httpErrorOf, InsufficientCredits, Invalid, NotFound, type HttpError } from '../../errors.js';
import { assertStorable } from '../../lib/storable-input.js';
import type { Actor, KeyCache } from '../../access/callers.js';
import { generationWhere, tenantStatement, tenantValues, viewerOf, type Viewer } from '../../access/tenancy.js';
import { appendAudit, type Audit } from '../audit/audit.js';
import type { UsageCache } from '../keys/usage-cache.js';
import type { SpendCache } from '../routing/spend.js';
import type { CatalogCache } from '../models/catalog-cache.js';
import { isFreeModel, resolveModel } from '../models/resolve-model.js';
import { ADD_CREDITS_URL } from './credits.service.js';
import type { GenerationRecorder, GenerationRowJson } from './recorder.js';

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

/**
 * The organization's credit standing and the generation ($6), if the caller may read it (access/:
 * generationWhere), in one round trip: by primary key, whatever the number of generations.
 */
const GENERATION_WITH_CREDIT = tenantStatement(
  'generation',
  (tenant) => `
  SELECT o.credit_balance < 0 AS in_debt, g.*
  FROM organizations o
  LEFT JOIN generations g ON g.id = $6 AND ${tenant.where('g')}
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
 * (generationWhere). Exported for the bench's database floor.
 */
export function generationQuery(viewer: Viewer, id: string) {
  return { statement: GENERATION_WITH_CREDIT, values: tenantValues(GENERATION_WITH_CREDIT, viewer, id) };
}

/** GET /generation. 402 while the organization's credit balance is negative. */
export async function getGeneration(db: Db, actor: Actor, input: GenerationIdQuery): Promise<Generation> {
  const query = generationQuery(viewerOf(actor), input.id);
  const [row] = await queryRows(db, query.statement, query.values);
  if (row?.in_debt) throw new InsufficientCredits(ADD_CREDITS_URL);
  if (!row || row.id === null) throw new NotFound(`generation ${input.id}`);
  return generationOf(row);
}

/** GET /generation/content. 404 also when the content was not stored. */
export async function getGenerationContent(db: Db, actor: Actor, input: GenerationIdQuery): Promise<GenerationContent> {
  const row = await db.generation.findFirst({ where: { id: input.id, ...generationWhere(viewerOf(actor)) }, select: { content: true } });
  const content = row?.content;
  if (!content) throw new NotFound(row ? `content of generation ${input.id} not stored` : `generation ${input.id}`);
  return generationContentOf(content);
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

/** Feedback ($7, $8) on one of the user's generations ($6) the key may see, or nothing (no row) when it is not one. */
const UPSERT_FEEDBACK = tenantStatement(
  'ownGeneration',
  (tenant) => `
  INSERT INTO generation_feedback (id, organization_id, generation_id, user_id, category, comment)
  SELECT gen_random_uuid(), g.organization_id, g.id, g.user_id, $7::feedback_category, $8
  FROM generations g WHERE g.id = $6 AND ${tenant.where('g')}
  ON CONFLICT (generation_id, user_id) DO UPDATE SET category = EXCLUDED.category, comment = EXCLUDED.comment
  RETURNING generation_id`,
  z.object({ generation_id: z.string() }),
);

/** POST /generation/feedback: one feedback per user and generation; a repeat replaces it. One statement. */
export async function submitFeedback(db: Db, actor: Actor, input: GenerationFeedbackInput, audit: Audit): Promise<{ success: true }> {
  const values = tenantValues(UPSERT_FEEDBACK, viewerOf(actor), input.generation_id, input.category, input.comment ?? null);
  await db.$transaction(async (tx) => {
    const written = await rawRows(tx, UPSERT_FEEDBACK.row, { text: UPSERT_FEEDBACK.text, values });
    if (written.length === 0) throw new NotFound(`generation ${input.generation_id} of user ${actor.userId}`);
    await appendAudit(tx, audit, {
      action: 'generations.feedback',
      targetType: 'generation',
      targetId: input.generation_id,
      changes: { after: { category: input.category, comment: input.comment ?? null } },
    });
  });
  return { success: true };
}

/**
 * What recordGeneration does not copy from the input into the generation's row: the fields that
 * are not its columns, and the columns the key, the catalog and the clock decide.
 */
const NOT_FROM_INPUT: ReadonlySet<string> = new Set([
  'content',
  'api_key_hash',
  'created_at',
  'id',
  'organization_id',
  'workspace_id',
  'api_key_id',
  'user_id',
  'is_free',
  'reservation_id',
]);

/**
 * Internal (platform): records a generation made with a tenant's key; the key names the
 * organization, workspace and user it is recorded for. The generation row
 * (skipped when the id exists, so a retry counts nothing twice), its content (if given and the
 * organization stores content), the key's daily rollup and lifetime totals, and the organization's
 * credit balance are written in one transaction, batched with the recordings that arrive meanwhile
 * (GenerationRecorder); the call returns once that transaction has committed.
 *
 * Spend: `usage` is what the organization is charged; it goes to the key's usage figures and is
 * drawn from the credit balance. For a BYOK generation, `upstream_inference_cost` (what the
 * provider charged the customer's own key) goes to the byok_usage figures. A request counts as a
 * free-model request when the model is a `:free` variant, or the catalog prices it at zero (a model
 * the catalog does not know is free when its id ends in `:free`).
 */
type RecordDeps = { db: Db; catalog: CatalogCache; keys: KeyCache; usage: UsageCache; spend: SpendCache; recorder: GenerationRecorder };

export async function recordGeneration(deps: RecordDeps, input: RecordGenerationInput, now: Date): Promise<RecordGenerationOutput> {
  const { db } = deps;
  const found = await deps.keys.find(db, input.api_key_hash);
  if (found?.kind !== 'tenant') throw new NotFound(`key ${input.api_key_hash}`);
  const key = found.key;
  const resolved = resolveModel(await deps.catalog.snapshot(db), input.model);
  const isFree = resolved ? isFreeModel(resolved) : /:free$/i.test(input.model);
  const createdAt = input.created_at ? new Date(input.created_at) : now;

  // Columns come from the validated input schema (zod drops unknown keys), never from the client;
  // NOT NULL columns the input may leave out get their defaults here, and the key decides whose the
  // generation is. Built by assignment rather than by spreading a filtered copy of the input, which
  // cost the batch path about a sixteenth of its server CPU (docs/decisions/0008-group-committed-recording.md).
  const createdAtText = createdAt.toISOString();
  const row: GenerationRowJson = {
    cancelled: false,
    streamed: false,
    is_byok: false,
    tokens_prompt: 0,
    tokens_completion: 0,
    total_cost: 0,
    usage: 0,
    id: input.id,
    organization_id: key.organization_id,
    workspace_id: key.workspace_id,
    api_key_id: key.id,
    user_id: key.creator_user_id,
    is_free: isFree,
    created_at: createdAtText,
  };
  for (const name in input) {
    const value = input[name as keyof RecordGenerationInput];
    if (value != null && !NOT_FROM_INPUT.has(name)) row[name] = value;
  }
  const byok = input.is_byok ? new Prisma.Decimal(input.upstream_inference_cost ?? 0).toString() : '0';
  const outcome = await deps.recorder.record(row, {
    byok,
    // The UTC day: the date part of the ISO text.
    day: createdAtText.slice(0, 10),
    content: input.content ?? null,
    reservation: input.reservation_id ?? null,
  });

  if (outcome.inserted) {
    deps.usage.forget(key.id);
    deps.spend.forgetOrganization(key.organization_id);
    return { id: input.id, recorded: true, is_free: isFree, content_stored: outcome.contentStored };
  }

  // A retry: answer what the first call recorded.
  const existing = await db.generation.findUnique({
    where: { id: input.id },
    select: { organization_id: true, is_free: true, content: { select: { generation_id: true } } },
  });
  if (!existing || existing.organization_id !== key.organization_id) {
    throw new Invalid(`generation id ${input.id} is already in use`, { id: input.id });
  }
  return { id: input.id, recorded: false, is_free: existing.is_free, content_stored: existing.content !== null };
}

/**
 * Internal (platform): generations.recordBatch. Every item is recorded exactly as
 * generations.record records it (recordGeneration), all of them at once, so that the recorder
 * writes them in as few statements as its batches allow, and each answer waits for its own commit.
 * Each item fails alone: a value PostgreSQL cannot store, an input the schema refuses, an unknown
 * key, an id another organization uses, or a row the database refuses (the recorder then retries
 * its batch one generation at a time) gives that item the error generations.record would have
 * answered, and the others are recorded. An id given twice, here or in an earlier call, is counted
 * once: the repeat answers "duplicate". `failed` hears every error (to log the internal ones).
 */
export async function recordGenerations(
  deps: RecordDeps,
  items: readonly unknown[],
  now: Date,
  failed: (error: HttpError, id: string | null) => void,
): Promise<RecordGenerationBatchOutput> {
  const results = await Promise.all(
    items.map(async (item): Promise<RecordedGenerationResult> => {
      try {
        assertStorable(item);
        const { recorded, ...outcome } = await recordGeneration(deps, RecordGenerationInputSchema.parse(item), now);
        return { ...outcome, status: recorded ? 'recorded' : 'duplicate' };
      } catch (cause) {
        const error = httpErrorOf(cause);
        const id = idOf(item);
        failed(error, id);
        return { id, status: 'error', error: envelopeOf(error).error };
      }
    }),
  );
  return { results };
}

/** The id an item names, when it is one the schema would take. */
function idOf(item: unknown): string | null {
  const id = typeof item === 'object' && item !== null ? (item as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id.length >= 1 && id.length <= 200 ? id : null;
}
