// Nothing left behind. A crash between storing bytes and committing the row that points at them, or
// in the middle of an upload, leaves bytes no row points at: orphaned objects, temp files, S3
// multipart uploads. The sweep removes them, in either store:
//   1. unfinished uploads untouched for an hour (a local temp file's last write, an S3 multipart
//      upload's start: an upload must finish within the hour);
//   2. claims of writes abandoned for an hour (by the database's clock; storage/claims.ts);
//   3. objects older than an hour that no row points at and no write has claimed.
// Safety does not rest on the hour or on clocks: bytes a row points at, and bytes a running write
// has claimed, are never removed. The hour only keeps the sweep off uploads in progress.
// Each replica tries every STORAGE_SWEEP_INTERVAL_MS; a PostgreSQL advisory lock lets one sweep at a
// time, and the others skip that round.
import { queryRows, statement, withAdvisoryLock, type Db } from '@switchyard/db';
import { z } from 'zod';
import type { Logger } from '../lib/logger.js';
import { STORED_NAMESPACES } from './claims.js';
import { isStorageKey, type BlobStorage } from './storage.js';
import { isConnectionLost } from '../lib/db-errors.js';

/** The advisory lock of the sweep (any constant no other lock of this database uses). */
export const SWEEP_LOCK = 0x5357_4550; // "SWEP"

/** What a crash may leave is removed once it is this old. */
export const ABANDONED_AFTER_MS = 60 * 60 * 1000;

/** Keys are checked against the database this many at a time. */
const BATCH = 500;

const UNREFERENCED = statement(
  `
  SELECT k AS key FROM unnest($1::text[]) AS k
   WHERE NOT EXISTS (SELECT 1 FROM container_files WHERE storage_key = k)
     AND NOT EXISTS (SELECT 1 FROM documents WHERE storage_key = k)
     AND NOT EXISTS (SELECT 1 FROM pending_objects WHERE key = k)`,
  z.object({ key: z.string() }),
);

const ABANDONED_CLAIMS = statement(
  `
  DELETE FROM pending_objects WHERE created_at < now() - make_interval(secs => $1::double precision / 1000) RETURNING key`,
  z.object({ key: z.string() }),
);

export interface SweepDeps {
  db: Db;
  storage: BlobStorage;
  /** The clock objects' and uploads' ages are measured with. */
  now: () => Date;
}

export interface SweepOptions {
  /**
   * Unreferenced, unclaimed objects younger than this are kept (default: an hour). Tests set 0 to
   * show that claims and rows alone protect bytes. Unfinished uploads and claims always get an hour.
   */
  objectMinAgeMs?: number;
}

/** What one sweep removed. */
export interface SweepReport {
  /** Unfinished uploads (temp files, multipart uploads). */
  temporary: number;
  /** Claims of abandoned writes. */
  claims: number;
  /** Objects no row pointed at. */
  objects: number;
}

const swept = (key: string) => STORED_NAMESPACES.some((namespace) => key.startsWith(namespace));

/** One sweep, unless another replica is sweeping (null). */
export function sweepStorage(deps: SweepDeps, options: SweepOptions = {}): Promise<SweepReport | null> {
  return withAdvisoryLock(deps.db, SWEEP_LOCK, () => sweepLocked(deps, options.objectMinAgeMs ?? ABANDONED_AFTER_MS));
}

async function sweepLocked({ db, storage, now }: SweepDeps, objectMinAgeMs: number): Promise<SweepReport> {
  const report: SweepReport = { temporary: 0, claims: 0, objects: 0 };

  const abandoned = now().getTime() - ABANDONED_AFTER_MS;
  for await (const upload of storage.listTemporary()) {
    if (upload.key !== undefined && !swept(upload.key)) continue;
    if (upload.since.getTime() >= abandoned) continue;
    await storage.removeTemporary(upload.id);
    report.temporary++;
  }

  report.claims = (await queryRows(db, ABANDONED_CLAIMS, [ABANDONED_AFTER_MS])).length;

  const removeUnreferenced = async (keys: string[]) => {
    const rows = await queryRows(db, UNREFERENCED, [keys]);
    for (const { key } of rows) await storage.delete(key);
    report.objects += rows.length;
  };
  const cutoff = now().getTime() - objectMinAgeMs;
  for (const namespace of STORED_NAMESPACES) {
    let batch: string[] = [];
    for await (const entry of storage.list(namespace)) {
      if (entry.modifiedAt.getTime() >= cutoff || !isStorageKey(entry.key)) continue;
      batch.push(entry.key);
      if (batch.length === BATCH) {
        await removeUnreferenced(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await removeUnreferenced(batch);
  }
  return report;
}

/** Sweeps every `intervalMs` (0: never) until stopped; a failed sweep is logged and tried again next time. */
export class StorageSweeper {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(
    private readonly deps: SweepDeps,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Starts the timer; again after stop() (the database is back). */
  start(): void {
    this.#stopped = false;
    if (this.intervalMs > 0 && this.#timer === undefined) this.#schedule();
  }

  /** One sweep now (tests, and the timer). */
  sweep(options: SweepOptions = {}): Promise<SweepReport | null> {
    const run = sweepStorage(this.deps, options);
    this.#running = run.catch(() => undefined);
    return run;
  }

  /** Stops the timer and waits for a sweep in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  #schedule(): void {
    // Replicas started together drift apart: each waits 75-125% of the interval.
    const delay = this.intervalMs * (0.75 + Math.random() / 2);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.sweep()
        .then((report) => {
          if (report && report.temporary + report.claims + report.objects > 0) {
            this.logger.info({ component: 'storage-sweep', ...report }, 'storage sweep removed what no row points at');
          }
        })
        .catch((error: unknown) => isConnectionLost(error) || this.logger.warn({ component: 'storage-sweep', err: error }, 'storage sweep failed'))
        .finally(() => {
          // Not when stopped, nor when start() after a stop() scheduled the next already.
          if (!this.#stopped && this.#timer === undefined) this.#schedule();
        });
    }, delay);
    this.#timer.unref();
  }
}
