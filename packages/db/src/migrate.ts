// Applies prisma/migrations/*/migration.sql in order and records them in Prisma's own
// `_prisma_migrations` table, the way `prisma migrate deploy` does, so that either tool accepts
// the other's history. Each migration runs in one transaction together with its history row, so a
// failed migration leaves neither half its changes nor a row behind. The whole run holds the same
// advisory lock as Prisma's migrate, so concurrent starts apply each migration exactly once.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/** The lock key Prisma's schema engine takes for migrate commands. */
const PRISMA_MIGRATE_LOCK = 72707369;

/**
 * The build's copy (dist/migrations, scripts/copy-migrations.mjs) when this module runs from dist/,
 * as in a `pnpm deploy` folder; the repository's prisma/migrations when it runs from src/.
 */
export const defaultMigrationsDir = existsSync(new URL('./migrations/', import.meta.url))
  ? fileURLToPath(new URL('./migrations/', import.meta.url))
  : fileURLToPath(new URL('../../../prisma/migrations', import.meta.url));

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

export async function readMigrations(dir = defaultMigrationsDir): Promise<Migration[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await fs.readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

const HISTORY_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface HistoryRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export async function migrate(
  databaseUrl: string,
  options: { dir?: string; log?: (m: string) => void; connectTimeoutMs?: number } = {},
): Promise<MigrateResult> {
  const log = options.log ?? (() => undefined);
  const migrations = await readMigrations(options.dir);
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: options.connectTimeoutMs ?? 0 });
  // What a migration reports of the rows it changes (RAISE NOTICE), e.g. a value it could not
  // convert; not the runner's own statements' notices (the history table already exists).
  let running: string | undefined;
  client.on('notice', (notice) => {
    if (running) log(`${running}: ${notice.message}`);
  });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
    await client.query(HISTORY_TABLE);
    const { rows } = await client.query<HistoryRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
    );
    const history = new Map(rows.map((r) => [r.migration_name, r]));
    const known = new Set(migrations.map((m) => m.name));
    for (const row of rows) {
      if (row.finished_at === null) {
        throw new Error(`Migration ${row.migration_name} failed earlier and was not rolled back; resolve it before migrating again.`);
      }
      if (!known.has(row.migration_name)) {
        log(`warning: migration ${row.migration_name} is applied in the database but missing from the migrations folder`);
      }
    }

    const applied: string[] = [];
    for (const migration of migrations) {
      const done = history.get(migration.name);
      if (done && done.checksum !== migration.checksum) log(`warning: migration ${migration.name} was modified after it was applied`);
    }
    // One line for the whole run, however many there are (a first start applies them all).
    const pending = migrations.filter((m) => !history.has(m.name));
    const started = Date.now();
    if (pending.length > 0)
      log(
        `applying ${pending.length} migration${pending.length === 1 ? '' : 's'} (${pending[0]!.name}${pending.length > 1 ? ` to ${pending.at(-1)!.name}` : ''})...`,
      );
    for (const migration of pending) {
      running = migration.name;
      try {
        await client.query('BEGIN');
        const id = randomUUID();
        await client.query('INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)', [
          id,
          migration.checksum,
          migration.name,
        ]);
        // Simple-query protocol: the whole file runs as written, statements and all.
        await client.query(migration.sql);
        await client.query('UPDATE "_prisma_migrations" SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1', [id]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`Migration ${migration.name} failed and was rolled back: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.name);
    }
    if (pending.length > 0) log(`applied ${pending.length} migration${pending.length === 1 ? '' : 's'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { applied, alreadyApplied: migrations.length - applied.length };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]).catch(() => undefined);
    await client.end();
  }
}
