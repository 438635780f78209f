import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { z } from 'zod';
import { PrismaClient } from './generated/prisma/client.js';
import { assertColumns, columnsOf, parseRows, type RowSchema } from './rows.js';
import { compileNamedParameters, positionalValues } from './named-parameters.js';

export type Db = PrismaClient;

export interface DbOptions {
  /** Largest number of pooled connections. */
  poolMax?: number;
  /** Called with every SQL statement sent, and its parameters as a JSON array (tests EXPLAIN the real queries). */
  onQuery?: (event: { query: string; params: string }) => void;
  /**
   * Told when an idle pooled connection fails (the server restarted, or terminated it): the pool
   * drops it and the next query opens another. Without a listener, node-postgres would throw the
   * error out of the process.
   */
  onIdleError?: (error: Error) => void;
  /**
   * Told about every failure of the pool's connections: a connection that could not be made, and
   * a connection given back after a failed query or transaction (whatever the cause: the listener
   * sorts them). The database's health (apps/api health/) learns from these that it is gone.
   */
  onConnectionError?: (error: unknown) => void;
  /** Told when the pool has made a new connection (the database's health: the database answers again). */
  onConnect?: () => void;
  /** How long making a connection may take, TCP to ready (0 or unset: no limit). */
  connectTimeoutMs?: number;
}

/** A pool that tells `report` when a connection cannot be made (pool.query and pool.connect both come here). */
class WatchedPool extends pg.Pool {
  readonly #report: (error: unknown) => void;

  constructor(config: pg.PoolConfig, report: (error: unknown) => void) {
    super(config);
    this.#report = report;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(
    callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): Promise<pg.PoolClient> | undefined {
    if (callback) {
      super.connect((err, client, done) => {
        if (err) this.#report(err);
        callback(err, client, done);
      });
      return;
    }
    return super.connect().catch((error: unknown) => {
      this.#report(error);
      throw error;
    });
  }
}

interface Handle {
  pool: pg.Pool;
  onQuery: DbOptions['onQuery'];
}

const handles = new WeakMap<Db, Handle>();

/** A Prisma client over node-postgres (the driver adapter; no query engine binary). */
export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  // The connect timeout bounds making a connection (TCP to ready), as each client's own option. The
  // pool's option of that name would bound the wait for a free connection as well: a burst of
  // queries beyond the pool would fail after it instead of waiting their turn.
  const connectTimeoutMs = options.connectTimeoutMs ?? 0;
  class TimedClient extends pg.Client {
    constructor(clientConfig?: pg.ClientConfig) {
      super({ ...clientConfig, connectionTimeoutMillis: connectTimeoutMs });
    }
  }
  const config = { connectionString: databaseUrl, max: options.poolMax ?? 10, Client: TimedClient };
  const report = options.onConnectionError;
  const pool = report ? new WatchedPool(config, report) : new pg.Pool(config);
  pool.on('error', (error) => options.onIdleError?.(error));
  // A connection checked out (a transaction between statements) that the server cuts: told like
  // any other failure, not thrown out of the process (the pool listens only to idle ones).
  pool.on('connect', (client) => {
    client.on('error', (error) => report?.(error));
    options.onConnect?.();
  });
  if (report) pool.on('release', (error: unknown) => error instanceof Error && report(error));
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

/** The pool's connections now: all of them, the idle ones, and the queries waiting for one. */
export function poolStats(db: Db): { total: number; idle: number; waiting: number } | undefined {
  const pool = handles.get(db)?.pool;
  return pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}

/**
 * A statement for `queryRows`: SQL with $1.. placeholders, sent as a named prepared statement
 * (parsed and planned once per connection), and the schema of the rows it answers.
 */
export interface Statement<Row extends RowSchema = RowSchema> {
  readonly name: string;
  readonly text: string;
  readonly row: Row;
  /** The row schema's column names, sorted: what the statement's result must name, no more, no less. */
  readonly columns: readonly string[];
  /** A namedStatement's parameter names, in $1.. order: its values are given by name. */
  readonly names?: readonly string[];
}

/** A statement's values: in $1.. order, or by name for a namedStatement. */
export type StatementValues = readonly unknown[] | Readonly<Record<string, unknown>>;

let statements = 0;

/** The row schema of a statement declared without one: it must answer no columns. */
const NO_COLUMNS = z.strictObject({});

/**
 * Declares a statement once, at module load; the name only has to be unique in this process. `row`
 * is the schema of one row as node-postgres reads it (see `queryRows`): typically `z.object` of the
 * statement's columns, `rowOrNulls` for a LEFT JOIN that may find nothing.
 */
export function statement<Row extends RowSchema = typeof NO_COLUMNS>(text: string, row?: Row): Statement<Row> {
  const schema = (row ?? NO_COLUMNS) as Row;
  return { name: `sy_${(++statements).toString(36)}`, text, row: schema, columns: columnsOf(schema) };
}

/**
 * Declares a statement written with named parameters (`:organization_id`; named-parameters.ts says
 * what is one), whose values are then given by name: `queryRows(db, STMT, { organization_id })`.
 * The text is made positional once, here. Long statements use it, so that a parameter reads as what
 * it is and not as its place (`$7`).
 */
export function namedStatement<Row extends RowSchema = typeof NO_COLUMNS>(text: string, row?: Row): Statement<Row> {
  const compiled = compileNamedParameters(text);
  return { ...statement(compiled.text, row), names: compiled.names };
}

/** The values a statement is sent with, in $1.. order. */
function valuesFor(stmt: Statement, values: StatementValues): readonly unknown[] {
  if (stmt.names === undefined) {
    if (!Array.isArray(values)) throw new Error(`statement ${stmt.name} has positional parameters: its values are a list`);
    return values as readonly unknown[];
  }
  if (Array.isArray(values)) throw new Error(`statement ${stmt.name} has named parameters: its values are given by name`);
  return positionalValues(stmt.name, stmt.names, values as Readonly<Record<string, unknown>>);
}

/**
 * A statement's values in $1.. order, checked as queryRows checks them, for its text sent another
 * way: Prisma's `$queryRawUnsafe` (rawRows, inside a Prisma transaction) or a plain pg query.
 */
export function orderedValues(stmt: Statement, values: StatementValues): readonly unknown[] {
  return valuesFor(stmt, values);
}

/**
 * Runs a statement on the Prisma client's own connection pool, without Prisma's query engine: for
 * the few hot paths where the engine's per-query work (several times the driver's own) dominates
 * the request. Rows come as node-postgres reads them (numeric and int8 as
 * text, timestamptz as Date, json parsed, enums as their labels: select `::text` for anything else
 * that must round-trip exactly), and each is parsed with the statement's row schema, in every
 * environment, production too: the answer is the schema's output (its transforms applied), and a
 * statement whose columns or values disagree with its schema (a renamed column, an enum label the
 * schema does not know, text where a number was expected) throws RowMismatch, a 500, instead of
 * answering a wrong shape. Parsing a page of rows costs a few percent of the
 * statement's round trip on loopback (`pnpm --filter @switchyard/db run bench`), so skipping it in
 * production would save little and leave production the one place unchecked.
 * Outside a transaction; use Prisma for anything that must share one.
 */
export async function queryRows<Row extends RowSchema>(db: Db, stmt: Statement<Row>, values: StatementValues): Promise<z.output<Row>[]> {
  const handle = handles.get(db);
  if (!handle) throw new Error('queryRows needs a client made by createDb');
  const ordered = valuesFor(stmt, values);
  handle.onQuery?.({ query: stmt.text, params: JSON.stringify(ordered) });
  const result = await handle.pool.query({ name: stmt.name, text: stmt.text, values: ordered as unknown[] });
  assertColumns(
    stmt.text,
    result.fields.map((f) => f.name),
    stmt.columns,
  );
  return parseRows(stmt.row, result.rows, stmt.text);
}

/** Runs statements on the one connection of a transaction (see `inTransaction`). */
export type TransactionRows = <Row extends RowSchema>(stmt: Statement<Row>, values: StatementValues) => Promise<z.output<Row>[]>;

/**
 * Runs `fn` in one transaction on one connection of the client's pool, its statements sent as
 * `queryRows` sends them (named prepared statements, rows parsed with the statement's schema):
 * COMMIT when `fn` resolves, ROLLBACK when it throws (and the error is thrown on). For hot paths
 * that must commit several statements together without Prisma's interactive transactions.
 */
export async function inTransaction<T>(db: Db, fn: (rows: TransactionRows) => Promise<T>): Promise<T> {
  const handle = handles.get(db);
  if (!handle) throw new Error('inTransaction needs a client made by createDb');
  const client = await handle.pool.connect();
  const rows: TransactionRows = async (stmt, values) => {
    const ordered = valuesFor(stmt, values);
    handle.onQuery?.({ query: stmt.text, params: JSON.stringify(ordered) });
    const result = await client.query({ name: stmt.name, text: stmt.text, values: ordered as unknown[] });
    assertColumns(
      stmt.text,
      result.fields.map((f) => f.name),
      stmt.columns,
    );
    return parseRows(stmt.row, result.rows, stmt.text);
  };
  // Set once the transaction has ended (COMMIT or ROLLBACK ran): only then is the connection given
  // back to the pool; after a failed BEGIN, COMMIT or ROLLBACK it is closed.
  let ended = false;
  try {
    await client.query('BEGIN');
    let answer: T;
    try {
      answer = await fn(rows);
    } catch (error) {
      await client.query('ROLLBACK');
      ended = true;
      throw error;
    }
    await client.query('COMMIT');
    ended = true;
    return answer;
  } finally {
    client.release(ended ? undefined : true);
  }
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
