// createDb's pool and a failing idle connection: PostgreSQL terminating a connection the pool holds
// idle (a restart, an administrator, a dropped database) is told to onIdleError, never thrown out
// of the process, and the next query opens another connection.
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createDb, queryRows, statement, type Db } from '../src/client.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';
import { scaled } from '../src/time-scale.js';

const BACKEND = statement('SELECT pg_backend_pid() AS pid', z.object({ pid: z.number().int() }));

let database: TestDatabase;
let db: Db;
const idleErrors: Error[] = [];
let told: () => void = () => undefined;
/** Settles when onIdleError is first called (the test's own timeout bounds the wait). */
const idleErrorTold = new Promise<void>((resolve) => {
  told = resolve;
});

beforeAll(async () => {
  database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
  db = createDb(database.url, {
    poolMax: 1,
    onIdleError: (error) => {
      idleErrors.push(error);
      told();
    },
  });
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe('createDb', () => {
  it('tells a terminated idle connection to onIdleError, and the next query opens another', async () => {
    const [first] = await queryRows(db, BACKEND, []);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [first!.pid]);
    } finally {
      await admin.end();
    }
    await idleErrorTold;
    expect(idleErrors.map((error) => (error as Error & { code?: string }).code)).toEqual(['57P01']);
    const [second] = await queryRows(db, BACKEND, []);
    expect(second!.pid).not.toBe(first!.pid);
  });

  it('lets a query wait its turn for a busy pool longer than the connect timeout, which bounds making a connection only', async () => {
    // Making a connection takes longer on a busy machine: the timeout grows with the run's time
    // factor, and the hold with it.
    const connectTimeoutMs = scaled(100);
    const sleep = statement(`SELECT true AS slept FROM pg_sleep(${(5 * connectTimeoutMs) / 1000})`, z.object({ slept: z.boolean() }));
    const busy = createDb(database.url, { poolMax: 1, connectTimeoutMs });
    try {
      // The pool's one connection exists, then is held well past the connect timeout.
      const [held] = await queryRows(busy, BACKEND, []);
      const sleeping = queryRows(busy, sleep, []);
      const [waited] = await queryRows(busy, BACKEND, []);
      await sleeping;
      expect(waited!.pid).toBe(held!.pid);
    } finally {
      await busy.$disconnect();
    }
  });

  it('gives up making a connection to a host that never answers after the connect timeout', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    const lost = createDb(`postgresql://nobody@127.0.0.1:${port}/nowhere`, { connectTimeoutMs: 100 });
    try {
      await expect(queryRows(lost, BACKEND, [])).rejects.toThrow(/timeout/i);
    } finally {
      await lost.$disconnect().catch(() => undefined);
      silent.close();
    }
  });
});
