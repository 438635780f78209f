// The analytics worker threads (Piscina): POST /analytics/query's statement and the shaping of its
// rows run there (analytics-worker.ts), off the server's event loop, on connections of their own.
// Each query is bounded by its time limit (ANALYTICS_QUERY_TIMEOUT_MS) within the thread: past it the
// answer is 408, and the thread, which other queries share, goes on.
// docs/decisions/0034-analytics-off-the-event-loop.md says why, with the measurements.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { Timeout } from '../../lib/errors.js';
import type { AnalyticsTask, AnalyticsTaskResult } from './analytics-worker.js';
import type { Row } from './analytics-shape.js';

/**
 * The worker's file: beside this one in dist/. Run from src/ (the tests, tsx), the built file in
 * dist/ (`pnpm build` makes it; the test command builds first): a worker thread loads JavaScript.
 */
function workerFile(): string {
  const here = fileURLToPath(import.meta.url);
  const dir = path.dirname(here);
  return here.endsWith('.ts') ? path.join(dir, '../../../dist/modules/analytics/analytics-worker.js') : path.join(dir, 'analytics-worker.js');
}

export class AnalyticsWorkers {
  readonly #pool: Piscina<AnalyticsTask, AnalyticsTaskResult>;

  /**
   * `threads` worker threads (ANALYTICS_WORKER_THREADS), each running up to `concurrency` queries
   * at once (their statements wait on the database; shaping takes the thread), on up to
   * `concurrency` connections of its own to `databaseUrl`. Threads start with the first query and
   * stop after a minute idle.
   */
  constructor(databaseUrl: string, concurrency: number, threads: number) {
    this.#pool = new Piscina({
      filename: workerFile(),
      minThreads: 0,
      maxThreads: threads,
      concurrentTasksPerWorker: concurrency,
      idleTimeout: 60_000,
      // The thread yields the CPU to the event loop's (Linux; through @napi-rs/nice): a query's
      // shaping waits while other organizations' requests are answered, not the other way round.
      niceIncrement: 10,
      // A young generation of 8 MB (V8's default here is 16 or more): the thread's garbage is
      // short-lived, and every megabyte of it is resident while the thread lives.
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
      workerData: { databaseUrl, connections: concurrency },
    });
  }

  /** Runs the query's statement and shapes its rows in a worker thread, within `timeoutMs` from now (else 408). */
  async run(task: Omit<AnalyticsTask, 'deadline'>, timeoutMs: number): Promise<{ rows: Row[]; truncated: boolean }> {
    const result = await this.#pool.run({ ...task, deadline: Date.now() + timeoutMs });
    if ('timedOut' in result) throw new Timeout(`analytics query past ${timeoutMs} ms`);
    if ('failed' in result) {
      // The statement's error as node-postgres gave it (message, SQLSTATE, severity): errors.ts and
      // db-errors.ts read it as they would on the server's own connections (a lost connection: 503).
      throw Object.assign(new Error(result.failed.message), result.failed);
    }
    return result;
  }

  close(): Promise<void> {
    return this.#pool.destroy();
  }
}
