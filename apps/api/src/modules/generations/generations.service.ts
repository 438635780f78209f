// Generations: recording (the routing service's hot write path, with the usage rollups and the
// credit balance in the same transaction), reading the record and its stored content, and feedback.
// The records are made in generations-rows.ts, GET /generation's statement in generations-queries.ts.
import { orderedValues, Prisma, queryRows, rawRows } from '@switchyard/db';
import type {
  Generation,
  GenerationContent,
  GenerationFeedbackInput,
  GenerationIdQuery,
  RecordGenerationBatchInput,
  RecordGenerationInput,
  RecordGenerationOutput,
} from '@switchyard/schema';
import { RecordGenerationInputSchema } from '@switchyard/schema';
import { z } from 'zod';
import { httpErrorOf, InsufficientCredits, Invalid, NotFound, type HttpError } from '../../lib/errors.js';
import { assertStorable } from '../../lib/storable-input.js';
import type { Actor, PlatformActor } from '../../access/callers.js';
import { generationWhere, tenantStatement, tenantValues, viewerOf } from '../../access/tenancy.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfTenant } from '../audit/audit.js';
import { isFreeModel, resolveModel } from '../models/resolve-model.js';
import { ADD_CREDITS_URL } from './credits.service.js';
import { generationQuery } from './generations-queries.js';
import { generationContentOf, generationOf } from './generations-rows.js';
import type { GenerationRowJson } from './recorder.js';

/** GET /generation. 402 while the organization's credit balance is negative. */
export async function getGeneration(deps: Uses<'db'>, actor: Actor, input: GenerationIdQuery): Promise<Generation> {
  const query = generationQuery(viewerOf(actor), input.id);
  const [row] = await queryRows(deps.db, query.statement, query.values);
  if (row?.in_debt) throw new InsufficientCredits(ADD_CREDITS_URL);
  if (!row || row.id === null) throw new NotFound(`generation ${input.id}`);
  return generationOf(row);
}

/** GET /generation/content. 404 also when the content was not stored. */
export async function getGenerationContent(deps: Uses<'db'>, actor: Actor, input: GenerationIdQuery): Promise<GenerationContent> {
  const row = await deps.db.generation.findFirst({ where: { id: input.id, ...generationWhere(viewerOf(actor)) }, select: { content: true } });
  const content = row?.content;
  if (!content) throw new NotFound(row ? `content of generation ${input.id} not stored` : `generation ${input.id}`);
  return generationContentOf(content);
}

/** Feedback (:category, :comment) on one of the user's generations (:generation_id) the key may see, or nothing (no row) when it is not one. */
const UPSERT_FEEDBACK = tenantStatement(
  'ownGeneration',
  (tenant) => `
  INSERT INTO generation_feedback (id, organization_id, generation_id, user_id, category, comment)
  SELECT gen_random_uuid(), g.organization_id, g.id, g.user_id, :category::feedback_category, :comment
  FROM generations g WHERE g.id = :generation_id AND ${tenant.where('g')}
  ON CONFLICT (generation_id, user_id) DO UPDATE SET category = EXCLUDED.category, comment = EXCLUDED.comment
  RETURNING generation_id`,
  z.object({ generation_id: z.string() }),
);

/** POST /generation/feedback: one feedback per user and generation; a repeat replaces it. One statement. */
export async function submitFeedback(deps: Uses<'db' | Audited>, actor: Actor, input: GenerationFeedbackInput): Promise<{ success: true }> {
  const audit = auditOfTenant(actor, deps);
  // In $n order: the statement goes through Prisma's raw API, in the transaction of the audit entry.
  const values = orderedValues(
    UPSERT_FEEDBACK,
    tenantValues(UPSERT_FEEDBACK, viewerOf(actor), { generation_id: input.generation_id, category: input.category, comment: input.comment ?? null }),
  );
  await deps.db.$transaction(async (tx) => {
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

/** What recording uses: the key and catalog caches, the recorder, and the spend figures it makes stale. */
type Records = 'db' | 'now' | 'catalog' | 'keys' | 'usage' | 'spend' | 'recorder';
type RecordDeps = Uses<Records>;

/**
 * Internal (platform): records a generation made with a tenant's key; the key names the
 * organization, workspace and user it is recorded for (the platform actor only asks). The generation row
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
export function recordGeneration(deps: Uses<Records>, _actor: PlatformActor, input: RecordGenerationInput): Promise<RecordGenerationOutput> {
  return record(deps, input, deps.now());
}

/** One recording (recordGeneration's, each item of recordGenerations'), at `now` unless the input gives its time. */
async function record(deps: RecordDeps, input: RecordGenerationInput, now: Date): Promise<RecordGenerationOutput> {
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

/** An item of generations.recordBatch that failed: its id (when it names a valid one) and the error generations.record would have answered. */
export interface FailedRecording {
  id: string | null;
  status: 'error';
  error: HttpError;
}

/** An item's outcome: recorded now, recorded before (a retry: nothing counted twice), or failed. */
export type RecordingOutcome = (Omit<RecordGenerationOutput, 'recorded'> & { status: 'recorded' | 'duplicate' }) | FailedRecording;

/**
 * Internal (platform): generations.recordBatch. Every item is recorded exactly as
 * generations.record records it (recordGeneration), all of them at once and at one time, so that the
 * recorder writes them in as few statements as its batches allow, and each answer waits for its own
 * commit. Each item fails alone: a value PostgreSQL cannot store, an input the schema refuses, an
 * unknown key, an id another organization uses, or a row the database refuses (the recorder then
 * retries its batch one generation at a time) gives that item the error generations.record would
 * have answered (the router answers it as its envelope, and logs the internal ones), and the others
 * are recorded. An id given twice, here or in an earlier call, is counted once: the repeat answers
 * "duplicate". The outcomes are in the input's order.
 */
export function recordGenerations(deps: Uses<Records>, _actor: PlatformActor, input: RecordGenerationBatchInput): Promise<RecordingOutcome[]> {
  const now = deps.now();
  return Promise.all(
    input.generations.map(async (item): Promise<RecordingOutcome> => {
      try {
        assertStorable(item);
        const { recorded, ...outcome } = await record(deps, RecordGenerationInputSchema.parse(item), now);
        return { ...outcome, status: recorded ? 'recorded' : 'duplicate' };
      } catch (cause) {
        return { id: idOf(item), status: 'error', error: httpErrorOf(cause) };
      }
    }),
  );
}

/** The id an item names, when it is one the schema would take. */
function idOf(item: unknown): string | null {
  const id = typeof item === 'object' && item !== null ? (item as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id.length >= 1 && id.length <= 200 ? id : null;
}
