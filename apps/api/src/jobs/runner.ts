// The job runner: the one place background work runs, on every replica, each
// job on one replica at a time.
//
// - Periodic jobs (`periodic()`): every replica tries each one every interval (75-125% of it, so
//   that replicas started together drift apart); a PostgreSQL advisory lock lets one run at a time,
//   and the others skip that round (the storage sweep's pattern, storage/sweep.ts).
// - Queued jobs (`enqueue()`, table `jobs`): a handler registered for the job's kind runs it. A
//   replica takes the oldest queued job with FOR UPDATE SKIP LOCKED (two replicas never take the
//   same one) and holds it under a lease; a job whose replica died is taken again when the lease
//   ends: at least once. The outcome (succeeded with a result, or failed with a stable message) is
//   kept on the row. `enqueue` with a `singleton` key answers the job already queued or running
//   under that key instead of queueing another.
//
// stop() waits for what runs; start() after stop() starts again (after a database recovery).
import { queryRows, statement, withAdvisoryLock, type Db, type Job, type Prisma } from '@switchyard/db';
import { z } from 'zod';
import type { Logger } from '../lib/logger.js';
import { isConnectionLost } from '../lib/db-errors.js';

/** The client enqueue() writes with: the Prisma client, or a transaction's (the job commits with its cause). */
type Client = Prisma.TransactionClient | Db;

export interface PeriodicJob {
  /** Names it in logs. */
  name: string;
  intervalMs: number;
  /** Its advisory lock: any constant no other lock of this database uses. */
  lock: number;
  run(): Promise<unknown>;
}

/** What a handler of queued jobs does with one job: its result (kept on the row). */
export type JobHandler = (job: Job) => Promise<Prisma.InputJsonObject>;

/** A failure whose message is stable and safe to show the job's owner (others read "the job failed"). */
export class JobFailure extends Error {}

export interface JobRunnerOptions {
  db: Db;
  logger: Logger;
  /** How often a replica looks for queued jobs (an enqueue here wakes it at once). */
  pollMs: number;
  /** How long a replica holds a job before another may take it again. */
  leaseMs: number;
}

const FAILED = 'the job failed';

/** Takes the oldest queued job of the kinds given (or a running one whose lease ended). */
const TAKE = statement(
  `UPDATE jobs SET status = 'running', attempts = attempts + 1, started_at = coalesce(started_at, now()),
          locked_until = now() + make_interval(secs => $2::double precision)
    WHERE id = (SELECT id FROM jobs
                 WHERE kind = ANY($1::text[])
                   AND (status = 'queued' OR (status = 'running' AND locked_until < now()))
                 ORDER BY created_at
                 FOR UPDATE SKIP LOCKED
                 LIMIT 1)
    RETURNING id::text AS id`,
  z.object({ id: z.string() }),
);

export class JobRunner {
  readonly #options: JobRunnerOptions;
  readonly #periodic: PeriodicJob[] = [];
  readonly #handlers = new Map<string, JobHandler>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #running = new Set<Promise<unknown>>();
  #started = false;
  #draining: Promise<number> | undefined;

  constructor(options: JobRunnerOptions) {
    this.#options = options;
  }

  /** Registers a periodic job (before start()). */
  periodic(job: PeriodicJob): void {
    this.#periodic.push(job);
    if (this.#started) this.#schedule(job);
  }

  /** Registers the handler of a kind of queued job. */
  handle(kind: string, handler: JobHandler): void {
    this.#handlers.set(kind, handler);
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    for (const job of this.#periodic) this.#schedule(job);
    if (this.#options.pollMs > 0) this.#poll();
  }

  /** Stops the timers and waits for every job in progress. */
  async stop(): Promise<void> {
    this.#started = false;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await Promise.allSettled([...this.#running]);
  }

  /**
   * Queues a job (in `client`'s transaction when it is one). With `singleton`, a job of that key
   * queued or running is answered instead, and no other is queued (two calls at once: one job).
   */
  async enqueue(client: Client, job: { kind: string; organizationId: string | null; payload?: Prisma.InputJsonObject; singleton?: string }): Promise<Job> {
    const write = async (tx: Prisma.TransactionClient) => {
      if (job.singleton !== undefined) {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`job ${job.singleton}`}, 0))`;
        const open = await tx.job.findFirst({
          where: { kind: job.kind, organization_id: job.organizationId, status: { in: ['queued', 'running'] }, payload: { equals: job.payload ?? {} } },
          orderBy: { created_at: 'desc' },
        });
        if (open) return open;
      }
      return tx.job.create({ data: { kind: job.kind, organization_id: job.organizationId, payload: job.payload ?? {} } });
    };
    const row = '$transaction' in client ? await client.$transaction(write) : await write(client);
    this.wake();
    return row;
  }

  /** Looks for queued jobs now (after an enqueue; its transaction may not have committed yet, the next poll finds it). */
  wake(): void {
    if (this.#started) setImmediate(() => void this.drain());
  }

  /** Runs queued jobs until none is left to take; answers how many ran (tests call it directly). */
  drain(): Promise<number> {
    this.#draining ??= this.#track(this.#drainAll()).finally(() => {
      this.#draining = undefined;
    });
    return this.#draining;
  }

  async #drainAll(): Promise<number> {
    let ran = 0;
    for (;;) {
      const job = await this.#take();
      if (!job) return ran;
      await this.#run(job);
      ran++;
    }
  }

  /** Takes the oldest queued job (or one whose lease ended) for this replica. */
  async #take(): Promise<Job | null> {
    const kinds = [...this.#handlers.keys()];
    if (kinds.length === 0) return null;
    const [row] = await queryRows(this.#options.db, TAKE, [kinds, this.#options.leaseMs / 1000]);
    return row ? this.#options.db.job.findUnique({ where: { id: row.id } }) : null;
  }

  async #run(job: Job): Promise<void> {
    const { db, logger } = this.#options;
    const handler = this.#handlers.get(job.kind)!;
    try {
      const result = await handler(job);
      await db.job.updateMany({
        where: { id: job.id, status: 'running' },
        data: { status: 'succeeded', result, finished_at: new Date(), locked_until: null },
      });
    } catch (error) {
      const message = error instanceof JobFailure ? error.message : FAILED;
      if (!(error instanceof JobFailure)) logger.error({ component: 'jobs', job_id: job.id, kind: job.kind, err: error }, 'job failed');
      await db.job
        .updateMany({
          where: { id: job.id, status: 'running' },
          data: { status: 'failed', error_message: message, finished_at: new Date(), locked_until: null },
        })
        .catch((failure: unknown) =>
          logger.warn({ component: 'jobs', job_id: job.id, err: failure }, 'could not record a failed job; it runs again when its lease ends'),
        );
    }
  }

  #poll(): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.drain()
        // The database gone: its health logs that once (and stops this runner).
        .catch(
          (error: unknown) =>
            isConnectionLost(error) || this.#options.logger.warn({ component: 'jobs', err: error }, 'could not take queued jobs; trying again'),
        )
        .finally(() => {
          if (this.#started) this.#poll();
        });
    }, this.#options.pollMs);
    timer.unref();
    this.#timers.add(timer);
  }

  #schedule(job: PeriodicJob): void {
    if (job.intervalMs <= 0) return;
    const delay = job.intervalMs * (0.75 + Math.random() / 2);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.runPeriodic(job)
        .catch(
          (error: unknown) =>
            isConnectionLost(error) ||
            this.#options.logger.warn({ component: 'jobs', job: job.name, err: error }, `${job.name} failed; trying again at the next round`),
        )
        .finally(() => {
          if (this.#started) this.#schedule(job);
        });
    }, delay);
    timer.unref();
    this.#timers.add(timer);
  }

  /** One round of a periodic job, if no other replica is running it: its answer, or null when skipped. */
  runPeriodic(job: PeriodicJob): Promise<unknown> {
    return this.#track(withAdvisoryLock(this.#options.db, job.lock, () => job.run()));
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work);
    void work.finally(() => this.#running.delete(work)).catch(() => undefined);
    return work;
  }
}
