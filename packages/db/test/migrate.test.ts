import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { defaultMigrationsDir, migrate, readMigrations } from '../src/migrate.js';
import { createEmptyDatabase, type TestDatabase } from '../src/testing.js';

const run = promisify(execFile);
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

async function emptyDatabase(): Promise<TestDatabase> {
  const db = await createEmptyDatabase(inject('pgAdminUrl'));
  cleanup.push(() => db.drop());
  return db;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

async function migrationsCopy(extra?: { name: string; sql: string }): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-migrations-'));
  cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.cp(defaultMigrationsDir, dir, { recursive: true });
  if (extra) {
    await fs.mkdir(path.join(dir, extra.name));
    await fs.writeFile(path.join(dir, extra.name, 'migration.sql'), extra.sql);
  }
  return dir;
}

describe('migration runner', () => {
  it("records each migration in _prisma_migrations the way prisma migrate deploy does", async () => {
    const db = await emptyDatabase();
    const migrations = await readMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    const result = await migrate(db.url);
    expect(result.applied).toEqual(migrations.map((m) => m.name));

    const rows = await query<Record<string, unknown>>(db.url, 'SELECT * FROM _prisma_migrations ORDER BY migration_name');
    expect(rows).toHaveLength(migrations.length);
    for (const [i, row] of rows.entries()) {
      const file = await fs.readFile(path.join(defaultMigrationsDir, migrations[i]!.name, 'migration.sql'));
      expect(row).toMatchObject({
        migration_name: migrations[i]!.name,
        checksum: createHash('sha256').update(file).digest('hex'),
        applied_steps_count: 1,
        logs: null,
        rolled_back_at: null,
      });
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.started_at).toBeInstanceOf(Date);
    }
    const columns = await query<{ column_name: string; data_type: string }>(
      db.url,
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position",
    );
    expect(columns.map((c) => c.column_name)).toEqual([
      'id', 'checksum', 'finished_at', 'migration_name', 'logs', 'rolled_back_at', 'started_at', 'applied_steps_count',
    ]);

    expect(await migrate(db.url)).toEqual({ applied: [], alreadyApplied: migrations.length });
  });

  it('applies each migration once when two runners start at the same time', async () => {
    const db = await emptyDatabase();
    const [a, b] = await Promise.all([migrate(db.url), migrate(db.url)]);
    const total = (await readMigrations()).length;
    expect(a.applied.length + b.applied.length).toBe(total);
    expect([a.applied.length, b.applied.length]).toContain(0);
    const [row] = await query<{ count: string }>(db.url, 'SELECT count(*) FROM _prisma_migrations');
    expect(Number(row?.count)).toBe(total);
  });

  it('rolls a failing migration back whole and records nothing for it', async () => {
    const db = await emptyDatabase();
    const dir = await migrationsCopy({
      name: '99990101000000_broken',
      sql: 'CREATE TABLE half_done (id int);\nINSERT INTO no_such_table VALUES (1);\n',
    });
    await expect(migrate(db.url, { dir })).rejects.toThrow(/99990101000000_broken failed and was rolled back/);
    const tables = await query(db.url, "SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'");
    expect(tables).toHaveLength(0);
    const rows = await query(db.url, "SELECT 1 FROM _prisma_migrations WHERE migration_name = '99990101000000_broken'");
    expect(rows).toHaveLength(0);
    // The migrations before it were applied and stay applied.
    const [row] = await query<{ count: string }>(db.url, 'SELECT count(*) FROM _prisma_migrations');
    expect(Number(row?.count)).toBe((await readMigrations()).length);
  });

  it('runs a migration file whole, with semicolons inside function bodies', async () => {
    const db = await emptyDatabase();
    const dir = await migrationsCopy({
      name: '99990101000000_function',
      sql: `CREATE FUNCTION sy_two() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1 + 1; END; $$;\nSELECT 'a;b';\n`,
    });
    await migrate(db.url, { dir });
    expect(await query(db.url, 'SELECT sy_two() AS v')).toEqual([{ v: 2 }]);
  });
});

describe('drift check', () => {
  const script = fileURLToPath(new URL('../scripts/migration.mjs', import.meta.url));
  const schema = fileURLToPath(new URL('../../../prisma/schema.prisma', import.meta.url));

  it('passes when the migrations produce schema.prisma', async () => {
    const shadow = await emptyDatabase();
    const { stdout } = await run(process.execPath, [script, 'drift', '--shadow-url', shadow.url]);
    expect(stdout).toMatch(/^OK/m);
  });

  it('fails, printing the missing SQL, when schema.prisma changes without a migration', async () => {
    const shadow = await emptyDatabase();
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-schema-'));
    cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
    const changed = path.join(dir, 'schema.prisma');
    const text = await fs.readFile(schema, 'utf8');
    await fs.writeFile(changed, text.replace('  knowledge_cutoff           String?', '  knowledge_cutoff           String?\n  drift_probe                Int?'));
    const failure = await run(process.execPath, [script, 'drift', '--shadow-url', shadow.url, '--schema', changed]).then(
      () => null,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toMatch(/ALTER TABLE "models" ADD COLUMN\s+"drift_probe" INTEGER/);
  });
});

describe('20261123194236_member_names', () => {
  const NAME = '20261123194236_member_names';

  /** The migrations folder as it was before this migration. */
  async function migrationsBefore(): Promise<string> {
    const dir = await migrationsCopy();
    for (const entry of await fs.readdir(dir)) if (entry >= NAME) await fs.rm(path.join(dir, entry), { recursive: true });
    return dir;
  }

  it("moves names to the membership of the organization that wrote them; later organizations' start empty", async () => {
    const db = await emptyDatabase();
    await migrate(db.url, { dir: await migrationsBefore() });
    await query(
      db.url,
      `INSERT INTO organizations (id, name, updated_at) VALUES ('org_a', 'A', now()), ('org_b', 'B', now()), ('org_c', 'C', now());
       INSERT INTO users (id, email, first_name, last_name, updated_at) VALUES
         ('user_grace', 'grace@example.com', 'Grace', 'Hopper', now()),
         ('user_jane', 'jane@example.com', 'Call IT at +1-555-0100', '', now()),
         ('user_nameless', 'nameless@example.com', '', '', now());
       INSERT INTO organization_members (id, organization_id, user_id, created_at, updated_at) VALUES
         -- A created Grace; B and C added her later.
         (gen_random_uuid(), 'org_a', 'user_grace', '2026-01-01', now()),
         (gen_random_uuid(), 'org_b', 'user_grace', '2026-02-01', now()),
         (gen_random_uuid(), 'org_c', 'user_grace', '2026-03-01', now()),
         -- B created Jane with its text; A added her later.
         (gen_random_uuid(), 'org_b', 'user_jane', '2026-01-01', now()),
         (gen_random_uuid(), 'org_a', 'user_jane', '2026-02-01', now()),
         (gen_random_uuid(), 'org_a', 'user_nameless', '2026-01-01', now());`,
    );
    // This migration first, then any later one.
    expect((await migrate(db.url)).applied[0]).toBe(NAME);

    const rows = await query<{ organization_id: string; user_id: string; first_name: string; last_name: string }>(
      db.url,
      'SELECT organization_id, user_id, first_name, last_name FROM organization_members ORDER BY user_id, organization_id',
    );
    expect(rows).toEqual([
      { organization_id: 'org_a', user_id: 'user_grace', first_name: 'Grace', last_name: 'Hopper' },
      { organization_id: 'org_b', user_id: 'user_grace', first_name: '', last_name: '' },
      { organization_id: 'org_c', user_id: 'user_grace', first_name: '', last_name: '' },
      { organization_id: 'org_a', user_id: 'user_jane', first_name: '', last_name: '' },
      { organization_id: 'org_b', user_id: 'user_jane', first_name: 'Call IT at +1-555-0100', last_name: '' },
      { organization_id: 'org_a', user_id: 'user_nameless', first_name: '', last_name: '' },
    ]);
    const columns = await query<{ column_name: string }>(
      db.url,
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'users' ORDER BY ordinal_position",
    );
    expect(columns.map((c) => c.column_name)).toEqual(['id', 'email', 'created_at', 'updated_at']);
  });
});
