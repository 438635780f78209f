import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client.js';

export type Db = PrismaClient;

export interface DbOptions {
  /** Largest number of pooled connections. */
  poolMax?: number;
  /** Called with every SQL statement sent, and its parameters as a JSON array (tests EXPLAIN the real queries). */
  onQuery?: (event: { query: string; params: string }) => void;
}

interface Handle {
  pool: pg.Pool;
  onQuery: DbOptions['onQuery'];
}

const handles = new WeakMap<Db, Handle>();

/** A Prisma client over node-postgres (the driver adapter; no query engine binary). */
export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolMax ?? 10 });
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  let client: Db;
  if (!options.onQuery) {
    client = new PrismaClient({ adapter });
  } else {
    const logged = new PrismaClient({ adapter, log: [{ emit: 'event', level: 'query' }] });
    logged.$on('query', options.onQuery);
    client = logged as unknown as Db;
  }
  handles.set(client, { pool, onQuery: options.onQuery });
  return client;
}

/**
 * A statement for `queryRows`: SQL with $1.. placeholders, sent as a named prepared statement
 * (parsed and planned once per connection).
 */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

let statements = 0;

/** Declares a statement once, at module load; the name only has to be unique in this process. */
export function statement(text: string): Statement {
  return { name: `sy_${(++statements).toString(36)}`, text };
}

/**
 * Runs a statement on the Prisma client's own connection pool, without Prisma's query engine: for
 * the few hot paths where the engine's per-query work (about 0.3 ms of CPU, against 0.1 ms for the
 * driver alone) dominates the request. Rows come as node-postgres returns them (numeric and int8 as
 * strings, timestamptz as Date): select `::text` for anything else that must round-trip exactly.
 * Outside a transaction; use Prisma for anything that must share one.
 */
export async function queryRows<Row>(db: Db, stmt: Statement, values: readonly unknown[]): Promise<Row[]> {
  const handle = handles.get(db);
  if (!handle) throw new Error('queryRows needs a client made by createDb');
  handle.onQuery?.({ query: stmt.text, params: JSON.stringify(values) });
  const result = await handle.pool.query<Row & pg.QueryResultRow>({ name: stmt.name, text: stmt.text, values: values as unknown[] });
  return result.rows;
}

/**
 * Runs `fn` while holding the advisory lock `key`, if no other session holds it; null (without
 * running `fn`) if one does. The lock is transaction-level, in a transaction kept open on one
 * connection of the client's pool while `fn` runs (its own queries use other connections): it works
 * behind a transaction-pooling PgBouncer, and goes with the connection should this process die.
 */
export async function withAdvisoryLock<T>(db: Db, key: number, fn: () => Promise<T>): Promise<T | null> {
  const handle = handles.get(db);
  if (!handle) throw new Error('withAdvisoryLock needs a client made by createDb');
  const client = await handle.pool.connect();
  // A connection that failed a lock query is not given back to the pool.
  let broken: Error | undefined;
  const query = async (sql: string, values: unknown[] = []) => {
    try {
      return await client.query<{ locked?: boolean }>(sql, values);
    } catch (error) {
      broken = error as Error;
      throw error;
    }
  };
  try {
    await query('BEGIN');
    if ((await query('SELECT pg_try_advisory_xact_lock($1) AS locked', [key])).rows[0]?.locked !== true) {
      await query('ROLLBACK');
      return null;
    }
    try {
      return await fn();
    } finally {
      await query('COMMIT').catch(() => undefined);
    }
  } finally {
    client.release(broken);
  }
}
