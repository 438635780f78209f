// Whether the database is there, and since when (decision 0032).
//
// - It learns that the database is gone from connection-class failures (db-errors.ts
//   isConnectionLost), which the pool reports for every query, request or background, so that
//   nothing polls the database while it is up.
// - While it is gone: it probes with `SELECT 1`, 0.5 s after the loss, then doubling up to 10 s
//   between probes. With a restart (the embedded PostgreSQL), each failed probe is followed by an
//   attempt to start the database again; after `maxRestarts` failed attempts it gives up.
// - It logs one line per change of state (lost, restarting attempt n, back, giving up) and tells
//   its listener (server.ts), which stops the background work while the database is gone and starts
//   it again once it is back. Requests meanwhile answer 503 (errors.ts), without a line each.
// - /healthz turns unhealthy once the database has been gone for `unhealthyAfterMs`.
import { isConnectionLost } from '../lib/db-errors.js';
import type { Logger } from '../lib/logger.js';

export type DatabaseState = 'up' | 'down' | 'given up';

export interface DatabaseHealthOptions {
  /** Answers when the database answers (`SELECT 1`), throws when it does not. */
  probe(): Promise<void>;
  /**
   * Starts the database again (the embedded PostgreSQL); answers false when it was running. Absent
   * for an external DATABASE_URL: the server only waits for it.
   */
  restart?: () => Promise<boolean>;
  /** Failed restarts after which the server gives up (DATABASE_RESTART_ATTEMPTS). */
  maxRestarts: number;
  /** How long the database may be gone before the server reports itself unhealthy (DATABASE_UNHEALTHY_AFTER_MS). */
  unhealthyAfterMs: number;
  logger: Logger;
  /** The first wait after a loss, doubled after each failed probe (default 500 ms). */
  firstRetryMs?: number;
  /** The longest wait between probes (default 10 s). */
  maxRetryMs?: number;
  /** Told about each change: 'down' (stop the background work), 'up' (start it again), 'given up' (exit). */
  changed?: (state: DatabaseState, error?: Error) => void;
}

/** What /healthz reports. */
export interface HealthReport {
  healthy: boolean;
  database: DatabaseState;
  /** Since when the database has been gone (ISO 8601), when it is. */
  downSince?: string;
}

export class DatabaseHealth {
  readonly #options: DatabaseHealthOptions;
  #state: DatabaseState = 'up';
  #downSince: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** The round of probing, and the restarts made, while the database is gone. */
  #probes = 0;
  #restarts = 0;
  /** Why the last restart failed (logged with the give-up). */
  #restartError: unknown;

  constructor(options: DatabaseHealthOptions) {
    this.#options = options;
  }

  get state(): DatabaseState {
    return this.#state;
  }

  get up(): boolean {
    return this.#state === 'up';
  }

  /**
   * Told about a failure of the database (the pool reports each one): a connection-class failure
   * marks the database gone (once; later ones change nothing). Answers whether it was one, so that
   * the caller does not log it on its own.
   */
  report(error: unknown): boolean {
    if (!isConnectionLost(error)) return false;
    if (this.#state === 'up' && !this.#closed) this.#lost(error);
    return true;
  }

  /** Told that a connection was made: while the database is gone, probe at once (no waiting for the next round). */
  connected(): void {
    if (this.#state !== 'down' || this.#closed || this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    void this.#attempt(this.#probes, this.#restarts);
  }

  /** Healthy unless the database has been gone for longer than unhealthyAfterMs (or the server gave up). */
  health(now = Date.now()): HealthReport {
    if (this.#state === 'up') return { healthy: true, database: 'up' };
    const since = this.#downSince ?? now;
    return {
      healthy: this.#state === 'down' && now - since < this.#options.unhealthyAfterMs,
      database: this.#state,
      downSince: new Date(since).toISOString(),
    };
  }

  /** Stops probing (the server is closing). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #lost(error: unknown): void {
    this.#state = 'down';
    this.#downSince = Date.now();
    const { logger, restart } = this.#options;
    logger.error(
      { component: 'database', err: error },
      restart ? 'database lost: answering 503 and starting PostgreSQL again' : 'database lost: answering 503 and reconnecting',
    );
    this.#options.changed?.('down');
    this.#retry(0, 0);
  }

  /** Waits, probes; on failure restarts (embedded) and waits longer. */
  #retry(probes: number, restarts: number): void {
    if (this.#closed) return;
    this.#probes = probes;
    this.#restarts = restarts;
    const first = this.#options.firstRetryMs ?? 500;
    const delay = Math.min(this.#options.maxRetryMs ?? 10_000, first * 2 ** probes);
    this.#timer = setTimeout(() => void this.#attempt(probes, restarts), delay);
    this.#timer.unref();
  }

  async #attempt(probes: number, restarts: number): Promise<void> {
    this.#timer = undefined;
    if (this.#closed) return;
    const { logger, restart, maxRestarts } = this.#options;
    try {
      await this.#options.probe();
      this.#back(restarts);
      return;
    } catch {
      // Still gone.
    }
    if (this.#closed) return;
    if (restart) {
      if (restarts >= maxRestarts) {
        this.#giveUp(restarts);
        return;
      }
      const attempt = restarts + 1;
      const fields = { component: 'database', attempt, of: maxRestarts };
      let started: boolean;
      try {
        started = await restart();
      } catch (error) {
        this.#restartError = error;
        logger.warn({ ...fields, err: error }, `could not start PostgreSQL again (attempt ${attempt} of ${maxRestarts}); trying again`);
        this.#retry(probes + 1, attempt);
        return;
      }
      // Not running, it was started; running (it refused connections for a while: starting up, recovering), it is waited for.
      if (started) {
        logger.warn(fields, `started PostgreSQL again (attempt ${attempt} of ${maxRestarts})`);
        try {
          await this.#options.probe();
          this.#back(attempt);
          return;
        } catch {
          // Answered at the next probe.
        }
      }
      this.#retry(probes + 1, started ? attempt : restarts);
      return;
    }
    this.#retry(probes + 1, restarts);
  }

  #back(restarts: number): void {
    if (this.#closed) return;
    const downMs = Date.now() - (this.#downSince ?? Date.now());
    this.#state = 'up';
    this.#downSince = undefined;
    this.#options.logger.info({ component: 'database', down_ms: downMs, restarts }, 'database back: answering again');
    this.#options.changed?.('up');
  }

  #giveUp(restarts: number): void {
    this.#state = 'given up';
    const error = new Error(`PostgreSQL could not be started again after ${restarts} attempts`);
    this.#options.logger.fatal(
      { component: 'database', attempts: restarts, err: this.#restartError },
      `giving up: ${error.message}; exiting for a supervisor to take over`,
    );
    this.#options.changed?.('given up', error);
  }
}
