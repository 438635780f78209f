import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded.js';

export const EMBEDDED_DATABASE_NAME = 'switchyard';

/** The default of DATABASE_CONNECT_TIMEOUT_MS: how long a connection may take, TCP to ready for queries. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * A URL with its password (and a `password=` query parameter) replaced by ***; with `wholeUserinfo`,
 * the user part too (a store's credentials). Works on values that are not valid URLs as well.
 */
export function maskedUrl(value: string, wholeUserinfo = false): string {
  return value
    .replace(/^([^:/?#]*:\/\/)([^/?#]*)@/, (_all, scheme: string, userinfo: string) => {
      if (wholeUserinfo) return `${scheme}***@`;
      const colon = userinfo.indexOf(':');
      return colon === -1 ? `${scheme}${userinfo}@` : `${scheme}${userinfo.slice(0, colon)}:***@`;
    })
    .replace(/([?&](?:password|sslpassword)=)[^&#]*/gi, '$1***');
}

/** A connection to DATABASE_URL that failed, with what to do about it; the URL shown has its password masked. */
export class DatabaseUrlError extends Error {}

/** Why a connection to `url` failed, as an operator can act on it. */
function connectFailure(url: string, error: NodeJS.ErrnoException & { code?: string }, timeoutMs: number): string {
  let where = 'the host in DATABASE_URL';
  let user = 'the user';
  let database = 'the database';
  try {
    const parsed = new URL(url);
    where = `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`;
    if (parsed.username) user = `user "${decodeURIComponent(parsed.username)}"`;
    if (parsed.pathname.length > 1) database = `database "${decodeURIComponent(parsed.pathname.slice(1))}"`;
  } catch {
    // pg read it; a URL that node's parser refuses gets the generic names.
  }
  const message = error.message ?? String(error);
  const reason = (() => {
    if (error.code === 'ECONNREFUSED') return `nothing accepts connections at ${where}: start PostgreSQL there, or fix the host and port`;
    if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN' || error.code === 'EAI_NONAME')
      return `the host of ${where} cannot be resolved (DNS lookup failed): fix the host`;
    if (error.code === 'EHOSTUNREACH' || error.code === 'ENETUNREACH') return `${where} cannot be reached (no route): fix the host, or the network`;
    if (/timeout expired/i.test(message))
      return `${where} did not answer within ${timeoutMs} ms (DATABASE_CONNECT_TIMEOUT_MS): check that PostgreSQL listens there and no firewall drops the packets, or raise the timeout`;
    if (error.code === '28P01') return `password authentication failed for ${user}: fix the password in DATABASE_URL`;
    if (/client password must be a string|password must be a string/i.test(message))
      return `the server asks ${user} for a password, and DATABASE_URL has none: add it (postgresql://user:password@host/db)`;
    if (error.code === '3D000') return `${database} does not exist on ${where}: create it (createdb), or fix the database name`;
    if (error.code === '28000') return `the server refuses ${user} (${message}): allow it in pg_hba.conf, or use another user`;
    if (error.code === '53300') return `the server has no connection left (${message}): raise its max_connections, or lower DATABASE_POOL_MAX`;
    return `cannot connect: ${message}`;
  })();
  return `DATABASE_URL (${maskedUrl(url)}): ${reason}`;
}

/**
 * Connects once to `url` and runs SELECT 1, within `timeoutMs` from the first packet to the answer:
 * throws a DatabaseUrlError naming DATABASE_URL (its password masked), the cause and the fix.
 */
export async function checkDatabaseUrl(url: string, timeoutMs = DEFAULT_CONNECT_TIMEOUT_MS): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  // A connection lost after the check is not this check's business.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new DatabaseUrlError(connectFailure(url, error as NodeJS.ErrnoException, timeoutMs), { cause: error });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates `name` on the server of `adminUrl` unless it exists (safe against concurrent callers). */
export async function ensureDatabaseExists(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return;
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`).catch((error: { code?: string }) => {
      if (error.code !== '42P04' && error.code !== '23505') throw error; // created concurrently
    });
  } finally {
    await client.end();
  }
}

export interface DatabaseHandle {
  url: string;
  /** The embedded server, when this process started one. */
  embedded: EmbeddedPostgres | null;
  /** Stops the embedded server, if any. */
  close(): Promise<void>;
}

/**
 * The database to use: `databaseUrl` when given (nothing is started), otherwise an embedded
 * PostgreSQL under `<dataDir>/postgres` with a `switchyard` database.
 */
export async function provisionDatabase(options: {
  databaseUrl?: string | undefined;
  dataDir: string;
  log?: (message: string) => void;
  /** DATABASE_CONNECT_TIMEOUT_MS: how long the check of `databaseUrl` waits for an answer. */
  connectTimeoutMs?: number;
  /** The embedded server's settings beyond its defaults (startEmbeddedPostgres' `settings`); ignored with `databaseUrl`. */
  settings?: Readonly<Record<string, string>>;
}): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    await checkDatabaseUrl(options.databaseUrl, options.connectTimeoutMs);
    return { url: options.databaseUrl, embedded: null, close: async () => undefined };
  }
  const embedded = await startEmbeddedPostgres({
    dataDir: path.join(options.dataDir, 'postgres'),
    log: options.log,
    ...(options.settings ? { settings: options.settings } : {}),
  });
  try {
    await ensureDatabaseExists(embedded.url, EMBEDDED_DATABASE_NAME);
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  return { url: embedded.urlFor(EMBEDDED_DATABASE_NAME), embedded, close: () => embedded.stop() };
}
