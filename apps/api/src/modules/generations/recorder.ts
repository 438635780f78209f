// Group commit for recorded generations. Every recording updates the same few rows (its key's
// lifetime totals, the key's rollups of the day (spend; activity by model and provider), the
// organization's credit balance and total spend), so one
// transaction per generation serialises on those row locks, each held until its commit is flushed.
// Instead, recordings that arrive while a batch is being written wait for the next one, and each
// batch is one statement: the generation rows (skipping ids that exist), their contents, and the
// sums per key and day, per key and per organization; then, in the same transaction, one statement
// emits the spend alerts the batch caused (events/limit-alerts.ts: limit.threshold_crossed,
// credits.low) and its generation traces (events/generation-traces.ts), so that they commit with the
// spend or not at all. The caller's promise settles once its batch
// has committed, so nothing is acknowledged before it is durable. A batch that fails is retried
// one generation at a time, so one bad row fails alone. The same statement keeps the hourly
// analytics rollup (analytics/rollup.ts).
//
// Two batches are written at once (IN_FLIGHT). The second one's generation and content rows go in
// while the first is still writing; it then waits for the first one's row locks on the shared
// totals, and goes on the moment the first commits, without waiting for a round trip through this
// process. With one statement at a time the database sat idle for that round trip, and for as long
// as the event loop was busy with other requests (figures: docs/decisions/0008-group-committed-recording.md).
// An id is in at most one batch being written: a repeat waits until the recording before it has
// committed, so the first recording of an id is the one counted. Every statement takes its row
// locks table by table in the order of the WITH list, and within a table in key order (ids sorted
// before the insert, ORDER BY before each upsert, FOR NO KEY UPDATE in key order before each
// UPDATE), so two batches, or two servers' batches (which may share ids), that share rows wait for
// each other but never deadlock.
import { inTransaction, statement, type Db } from '@switchyard/db';
import { MAX_RECORD_BATCH } from '@switchyard/schema';
import { z } from 'zod';
import { rollupCtes } from '../analytics/rollup.js';
import { alertsQuery } from '../events/limit-alerts.js';

/** One generations row, every NOT NULL column filled, as JSON (jsonb_populate_recordset reads it). */
export type GenerationRowJson = Record<string, unknown> & { id: string; organization_id: string; api_key_id: string };

export interface RecordingExtras {
  /** What goes to the key's BYOK figures. */
  byok: string;
  /** The UTC rollup day, YYYY-MM-DD. */
  day: string;
  /** The content to store when the organization stores content, else null. */
  content: { input: unknown; output?: { completion?: string; reasoning?: string | null }; error?: unknown } | null;
  /** The reservation (routing.authorize) that this generation settles: deleted in the same statement. */
  reservation?: string | null;
}

export interface RecordingOutcome {
  /** false when a generation with this id already existed: nothing was counted. */
  inserted: boolean;
  contentStored: boolean;
}

interface Pending {
  row: GenerationRowJson;
  extras: RecordingExtras;
  resolve(outcome: RecordingOutcome): void;
  reject(error: unknown): void;
}

/**
 * A batch of generations in one statement. `settled`: a generation settles its key's reservation,
 * the spend it held now recorded. `org_locks` is taken for BYOK spend alone too: every batch that
 * adds spend an alert counts waits there for the one before it to commit, so that the alerts
 * statement after it sees both (events/limit-alerts.ts).
 */
export const RECORD_BATCH = statement(
  `
  WITH ins AS (
    INSERT INTO generations SELECT * FROM jsonb_populate_recordset(NULL::generations, $1::jsonb) ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING *
  ), new AS (
    SELECT ins.*, x.byok, x.day, x.content, x.reservation, o.store_content AND x.content IS NOT NULL AS store
    FROM ins
    JOIN jsonb_to_recordset($2::jsonb) AS x(id text, byok numeric, day date, content jsonb, reservation uuid) ON x.id = ins.id
    JOIN organizations o ON o.id = ins.organization_id
  ), settled AS (
    DELETE FROM spend_reservations r USING new WHERE r.id = new.reservation AND r.api_key_id = new.api_key_id
  ), content AS (
    INSERT INTO generation_contents (generation_id, organization_id, input, completion, reasoning, error, created_at)
    SELECT id, organization_id, content->'input', coalesce(content->'output'->>'completion', ''),
           content->'output'->>'reasoning', nullif(content->'error', 'null'::jsonb), $3
    FROM new WHERE store
  ), rollup AS (
    INSERT INTO key_usage_daily (api_key_id, day, organization_id, usage, byok_usage, request_count, free_request_count)
    SELECT api_key_id, day, organization_id, sum(usage), sum(byok), count(*), count(*) FILTER (WHERE is_free)
    FROM new GROUP BY api_key_id, day, organization_id ORDER BY api_key_id, day
    ON CONFLICT (api_key_id, day) DO UPDATE SET
      usage = key_usage_daily.usage + EXCLUDED.usage,
      byok_usage = key_usage_daily.byok_usage + EXCLUDED.byok_usage,
      request_count = key_usage_daily.request_count + EXCLUDED.request_count,
      free_request_count = key_usage_daily.free_request_count + EXCLUDED.free_request_count
  ), activity AS (
    INSERT INTO activity_daily (organization_id, day, api_key_id, model, provider_name, workspace_id, user_id,
                                requests, prompt_tokens, completion_tokens, reasoning_tokens, usage, byok_usage)
    SELECT organization_id, day, api_key_id, model, coalesce(provider_name, ''), min(workspace_id::text)::uuid, min(user_id),
           count(*), sum(tokens_prompt), sum(tokens_completion), sum(coalesce(native_tokens_reasoning, 0)), sum(usage), sum(byok)
    FROM new GROUP BY organization_id, day, api_key_id, model, coalesce(provider_name, '')
    ORDER BY api_key_id, day, model, coalesce(provider_name, '')
    ON CONFLICT (api_key_id, day, model, provider_name) DO UPDATE SET
      requests = activity_daily.requests + EXCLUDED.requests,
      prompt_tokens = activity_daily.prompt_tokens + EXCLUDED.prompt_tokens,
      completion_tokens = activity_daily.completion_tokens + EXCLUDED.completion_tokens,
      reasoning_tokens = activity_daily.reasoning_tokens + EXCLUDED.reasoning_tokens,
      usage = activity_daily.usage + EXCLUDED.usage,
      byok_usage = activity_daily.byok_usage + EXCLUDED.byok_usage
  ), key_locks AS MATERIALIZED (
    SELECT id FROM api_keys WHERE id IN (SELECT api_key_id FROM new) ORDER BY id FOR NO KEY UPDATE
  ), key_totals AS (
    UPDATE api_keys k SET usage = k.usage + s.usage, byok_usage = k.byok_usage + s.byok, updated_at = $3
    FROM (SELECT api_key_id, sum(usage) AS usage, sum(byok) AS byok FROM new GROUP BY api_key_id) s
    WHERE k.id = s.api_key_id AND k.id IN (SELECT id FROM key_locks)
  ), org_sums AS (
    SELECT organization_id, sum(usage) AS usage FROM new GROUP BY organization_id HAVING sum(usage) <> 0 OR sum(byok) <> 0
  ), org_locks AS MATERIALIZED (
    SELECT id FROM organizations WHERE id IN (SELECT organization_id FROM org_sums) ORDER BY id FOR NO KEY UPDATE
  ), credits AS (
    UPDATE organizations o SET credit_balance = o.credit_balance - s.usage, total_usage = o.total_usage + s.usage, updated_at = $3
    FROM org_sums s
    WHERE o.id = s.organization_id AND o.id IN (SELECT id FROM org_locks) AND s.usage <> 0
  ),${rollupCtes('new')}
  SELECT id, store AS content_stored, organization_id, workspace_id::text AS workspace_id, api_key_id::text AS api_key_id FROM new`,
  z.object({ id: z.string(), content_stored: z.boolean(), organization_id: z.string(), workspace_id: z.string(), api_key_id: z.string() }),
);

/** Told about every batch written (metrics): its size, how long it took, and whether it committed. */
export type BatchObserver = (batch: { size: number; seconds: number; committed: boolean }) => void;

/** Batches written at once (see the top of this file). */
const IN_FLIGHT = 2;

export interface RecorderOptions {
  /**
   * The most generations in one statement (default MAX_RECORD_BATCH, 1,000: a recordBatch call's
   * most). Each statement has a cost of its own (its plan, the rollups' and totals' upserts and
   * locks), so larger batches cost the database less CPU per generation
   * (docs/decisions/0008-group-committed-recording.md).
   */
  maxBatch?: number;
  /** The most statements under way at once (default IN_FLIGHT). */
  inFlight?: number;
  observe?: BatchObserver;
}

export class GenerationRecorder {
  #queue: Pending[] = [];
  /** Writers under way, each writing one batch after another while the queue has any. */
  #writers = 0;
  /** The ids of the batches being written. */
  readonly #writing = new Set<string>();
  readonly #maxBatch: number;
  readonly #inFlight: number;
  readonly #observe: BatchObserver;

  constructor(
    private readonly db: Db,
    private readonly now: () => Date,
    options: RecorderOptions = {},
  ) {
    this.#maxBatch = options.maxBatch ?? MAX_RECORD_BATCH;
    this.#inFlight = options.inFlight ?? IN_FLIGHT;
    this.#observe = options.observe ?? (() => undefined);
  }

  /** Recordings waiting for a writer, and the writers at work (for metrics and tests). */
  get state(): { queued: number; writers: number } {
    return { queued: this.#queue.length, writers: this.#writers };
  }

  record(row: GenerationRowJson, extras: RecordingExtras): Promise<RecordingOutcome> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ row, extras, resolve, reject });
      if (this.#writers < this.#inFlight) {
        this.#writers++;
        // Let the recordings that arrive in the same turn of the event loop join this batch.
        setImmediate(() => void this.#drain());
      }
    });
  }

  /**
   * Writes batches while there are any to take. What is left when none can be taken are repeats of
   * ids being written by another writer, which takes them once its batch is done.
   */
  async #drain(): Promise<void> {
    try {
      for (let batch = this.#take(); batch.length > 0; batch = this.#take()) {
        try {
          await this.#write(batch);
        } finally {
          for (const pending of batch) this.#writing.delete(pending.row.id);
        }
      }
    } finally {
      this.#writers--;
    }
  }

  /**
   * The next batch: at most maxBatch, each id at most once, and no id that is being written. A
   * repeat waits until the recording before it has committed, so the first recording of an id is
   * the one counted, whichever writer gets to the database first.
   */
  #take(): Pending[] {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    for (const pending of this.#queue) {
      if (batch.length < this.#maxBatch && !this.#writing.has(pending.row.id)) {
        this.#writing.add(pending.row.id);
        batch.push(pending);
      } else {
        rest.push(pending);
      }
    }
    this.#queue = rest;
    return batch;
  }

  async #write(batch: Pending[]): Promise<void> {
    try {
      const stored = await this.#run(batch);
      for (const p of batch) p.resolve({ inserted: stored.has(p.row.id), contentStored: stored.get(p.row.id) ?? false });
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      for (const p of batch) await this.#write([p]);
    }
  }

  /** Inserted ids, each with whether its content was stored. */
  async #run(batch: Pending[]): Promise<Map<string, boolean>> {
    const rows = batch.map((p) => p.row);
    const extras = batch.map((p) => ({ id: p.row.id, ...p.extras }));
    const started = performance.now();
    let committed = false;
    try {
      const now = this.now();
      // One transaction: the spend, then the alerts it causes (limit-alerts.ts), committed together.
      const result = await inTransaction(this.db, async (query) => {
        const recorded = await query(RECORD_BATCH, [JSON.stringify(rows), JSON.stringify(extras), now]);
        if (recorded.length > 0) {
          const alerts = alertsQuery(recorded, now);
          await query(alerts.statement, alerts.values);
        }
        return recorded;
      });
      committed = true;
      return new Map(result.map((r) => [r.id, r.content_stored]));
    } finally {
      this.#observe({ size: batch.length, seconds: (performance.now() - started) / 1000, committed });
    }
  }
}
