// Routing refusals as events, written off the request path: routing.authorize calls
// note() on every refusal, which only touches a map in memory; a timer writes what is pending in
// one batched statement per tick (emitEvents). One event per key, code and minute (the bucket): the
// cause `routing.refused:<key id>:<code>:<bucket start ISO>` is unique in the outbox, so replicas
// that refuse the same key the same way in the same minute still make one row. docs/routing.md
// ("Refusal events") gives the payload.
import type { ApiKey, Db } from '@switchyard/db';
import { isConnectionLost } from '../../lib/db-errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import { emitEvents } from './emit.js';

export const REFUSAL_EVENT_TYPE = 'routing.refused';

export interface RefusalEventsOptions {
  db: Db;
  now: () => Date;
  metrics: Metrics;
  logger: Logger;
  /** How often pending events are written (default 1 s). */
  flushMs?: number;
  /** The width of a deduplication bucket (default one minute). */
  bucketMs?: number;
  /** The most distinct events kept in memory, pending or written in the current bucket (default 10,000); more are dropped. */
  maxEntries?: number;
}

/** A refusal as routing.authorize answers it (its status, stable code and message). */
export interface NotedRefusal {
  status: number;
  code: string;
  message: string;
}

/** The key a refusal was for: its id and its hash (the key's public id in /keys/{hash}), never its secret. */
export type RefusedKey = Pick<ApiKey, 'id' | 'hash' | 'organization_id' | 'workspace_id'>;

interface Entry {
  cause: string;
  bucket: number;
  at: Date;
  key: RefusedKey;
  refusal: NotedRefusal;
  model: string;
  /** Refusals this process saw for the cause (so far). */
  count: number;
  /** pending: to write; writing: in the statement now; written: in the outbox (kept to deduplicate until its bucket ends). */
  state: 'pending' | 'writing' | 'written';
}

/** The short form of a key's hash an event carries beside the whole (the CLI's prefix lookup takes it). */
const HASH_PREFIX = 12;

export class RefusalEvents {
  readonly #db: Db;
  readonly #now: () => Date;
  readonly #metrics: Metrics;
  readonly #logger: Logger;
  readonly #bucketMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> | undefined;
  #closed = false;

  constructor(options: RefusalEventsOptions) {
    this.#db = options.db;
    this.#now = options.now;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#bucketMs = options.bucketMs ?? 60_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    for (const outcome of ['written', 'deduplicated', 'dropped']) this.#metrics.refusalEvents.inc({ outcome }, 0);
    for (const result of ['ok', 'failed']) this.#metrics.refusalEventFlushes.inc({ result }, 0);
    this.#timer = setInterval(() => void this.flush(), options.flushMs ?? 1000);
    this.#timer.unref();
  }

  /**
   * Notes a refusal; synchronous, no I/O. A refusal without a known key (key_unknown) has no
   * organization to own an event and is not noted.
   */
  note(refusal: NotedRefusal, key: RefusedKey | null, model: string): void {
    if (!key || this.#closed) return;
    const at = this.#now();
    const bucket = Math.floor(at.getTime() / this.#bucketMs) * this.#bucketMs;
    const cause = `${REFUSAL_EVENT_TYPE}:${key.id}:${refusal.code}:${new Date(bucket).toISOString()}`;
    const seen = this.#entries.get(cause);
    if (seen) {
      seen.count += 1;
      this.#metrics.refusalEvents.inc({ outcome: 'deduplicated' });
      return;
    }
    if (this.#entries.size >= this.#maxEntries) {
      this.#metrics.refusalEvents.inc({ outcome: 'dropped' });
      return;
    }
    this.#entries.set(cause, {
      cause,
      bucket,
      at,
      key,
      refusal: { status: refusal.status, code: refusal.code, message: refusal.message },
      model,
      count: 1,
      state: 'pending',
    });
  }

  /** Events noted and not yet in the outbox. */
  get pending(): number {
    let count = 0;
    for (const entry of this.#entries.values()) if (entry.state !== 'written') count += 1;
    return count;
  }

  /**
   * Writes what is pending, in one statement; a flush already running is awaited instead of
   * overlapping it. A failed write is logged and its events stay pending for the next tick (the map
   * stays bounded: new events are dropped while it is full).
   */
  flush(): Promise<void> {
    this.#flushing ??= this.#write().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const batch = [...this.#entries.values()].filter((entry) => entry.state === 'pending');
    if (batch.length > 0) {
      for (const entry of batch) entry.state = 'writing';
      try {
        const outcomes = await emitEvents(
          this.#db,
          batch.map((entry) => ({
            type: REFUSAL_EVENT_TYPE,
            cause: entry.cause,
            organizationId: entry.key.organization_id,
            workspaceId: entry.key.workspace_id,
            at: entry.at,
            payload: {
              code: entry.refusal.code,
              status: entry.refusal.status,
              message: entry.refusal.message,
              model: entry.model,
              api_key: { id: entry.key.id, hash: entry.key.hash, hash_prefix: entry.key.hash.slice(0, HASH_PREFIX) },
              workspace_id: entry.key.workspace_id,
              bucket: { start: new Date(entry.bucket).toISOString(), end: new Date(entry.bucket + this.#bucketMs).toISOString() },
              first_at: entry.at.toISOString(),
              refusals: entry.count,
            },
          })),
        );
        for (const entry of batch) {
          const outcome = outcomes.get(entry.cause);
          entry.state = 'written';
          if (outcome === 'written') this.#metrics.refusalEvents.inc({ outcome: 'written' });
          else if (outcome === 'duplicate') this.#metrics.refusalEvents.inc({ outcome: 'deduplicated' });
          else {
            this.#metrics.refusalEvents.inc({ outcome: 'dropped' });
            this.#entries.delete(entry.cause);
          }
        }
        this.#metrics.refusalEventFlushes.inc({ result: 'ok' });
      } catch (error) {
        for (const entry of batch) entry.state = 'pending';
        this.#metrics.refusalEventFlushes.inc({ result: 'failed' });
        // A lost database is the health monitor's to log, once (database lost, database back):
        // not a line a tick while it is gone. The entries wait for it.
        if (!isConnectionLost(error))
          this.#logger.warn({ err: error, pending: batch.length }, 'could not write refusal events to the events outbox; trying again at the next tick');
      }
    }
    // A written event's bucket has ended: nothing can deduplicate into it any more.
    const current = Math.floor(this.#now().getTime() / this.#bucketMs) * this.#bucketMs;
    for (const [cause, entry] of this.#entries) if (entry.state === 'written' && entry.bucket < current) this.#entries.delete(cause);
  }

  /** Stops the timer and writes what is pending (once more if a write was running); notes after this are ignored. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.flush();
    if (this.pending > 0) await this.flush();
    if (this.pending > 0) this.#logger.warn({ pending: this.pending }, 'closed with refusal events not written');
  }
}
