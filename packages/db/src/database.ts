import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded.js';

export const EMBEDDED_DATABASE_NAME = 'switchyard';

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
}): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    return { url: options.databaseUrl, embedded: null, close: async () => undefined };
  }
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(options.dataDir, 'postgres'), log: options.log });
  try {
    await ensureDatabaseExists(embedded.url, EMBEDDED_DATABASE_NAME);
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  return { url: embedded.urlFor(EMBEDDED_DATABASE_NAME), embedded, close: () => embedded.stop() };
}
