// createDb's pool and a failing idle connection: PostgreSQL terminating a connection the pool holds
// idle (a restart, an administrator, a dropped database) is told to onIdleError, never thrown out
// of the process, and the next query opens another connection.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createDb, queryRows, statement, type Db } from '../src/client.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

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
});
