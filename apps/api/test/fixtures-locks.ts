// Statements held in the database on purpose: tables locked so that the statements reaching them
// wait there, counted and cancelled from pg_stat_activity; and the server's concurrency slots, read
// from its /metrics. For the tests of what waits for what (analytics and GET /activity slots, the
// analytics worker thread, the heavy operations' share per organization).
import type { TestServer } from '../src/testing/test-server.js';
import { until } from './fixtures.js';
import { testServerWith } from './fixtures-files.js';
import { scaled } from '@switchyard/db/testing';

/**
 * Locks the tables an analytics statement reads (or `tables`), so that every statement that reaches
 * the database waits there, where `blocked()` counts those whose text is like `statement` and
 * `cancelBlocked()` cancels them; `release()` lets them go.
 */
export async function lockAnalyticsTables(server: TestServer, tables = 'analytics_daily, analytics_hourly, generations', statement = '%WITH src AS%') {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const lock = server.db.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(`LOCK TABLE ${tables} IN ACCESS EXCLUSIVE MODE`);
      locked();
      await held;
    },
    // maxWait: a busy machine may take longer than Prisma's 2 s default to lend the connection.
    { timeout: scaled(60_000), maxWait: scaled(30_000) },
  );
  await isLocked;
  const waiting = `FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '${statement}'`;
  const blocked = async () => Number((await server.db.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n ${waiting}`))[0]!.n);
  return {
    blocked,
    /** How long the longest-waiting of those statements has been running, in seconds. */
    async longestSeconds() {
      const [row] = await server.db.$queryRawUnsafe<{ s: number | null }[]>(
        `SELECT max(extract(epoch FROM clock_timestamp() - query_start))::float8 AS s ${waiting}`,
      );
      return row?.s ?? 0;
    },
    /** Cancels the statements waiting on the lock (the lock stays held). */
    async cancelBlocked() {
      await server.db.$executeRawUnsafe(`SELECT pg_cancel_backend(pid) ${waiting}`);
    },
    async release() {
      release();
      await lock;
    },
  };
}

/** The server's statements of `kind` running in a slot and waiting for one (its /metrics). */
export async function slotsOf(server: TestServer, kind: 'analytics' | 'activity' | 'heavy'): Promise<{ running: number; waiting: number }> {
  const text = await (await fetch(server.metricsUrl!)).text();
  const read = (state: string) => Number(new RegExp(`^switchyard_query_slots\\{kind="${kind}",state="${state}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { running: read('running'), waiting: read('waiting') };
}

/** Until the server's statements of `kind` are `running` in slots and `waiting` for one. */
export async function slotsAre(server: TestServer, kind: 'analytics' | 'activity' | 'heavy', running: number, waiting: number) {
  await until(
    async () => {
      const slots = await slotsOf(server, kind);
      return slots.running === running && slots.waiting === waiting;
    },
    { what: `${kind} statements: ${running} running, ${waiting} waiting` },
  );
}

/** A server started with `env`, its analytics tables locked while `test` runs; both go afterwards. */
export async function withLockedTables(
  env: Record<string, string>,
  test: (server: TestServer, lock: Awaited<ReturnType<typeof lockAnalyticsTables>>) => Promise<void>,
) {
  const server = await testServerWith({ METRICS_PORT: '0', ...env });
  const lock = await lockAnalyticsTables(server);
  try {
    await test(server, lock);
  } finally {
    await lock.release();
    await server.close();
  }
}
