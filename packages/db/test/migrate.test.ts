import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { defaultMigrationsDir, migrate, readMigrations } from '../src/migrate.js';
import { migrationCommand } from '../src/migration-authoring.js';
import { createEmptyDatabase, type TestDatabase } from '../src/testing.js';

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
  it('records each migration in _prisma_migrations the way prisma migrate deploy does', async () => {
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
      'id',
      'checksum',
      'finished_at',
      'migration_name',
      'logs',
      'rolled_back_at',
      'started_at',
      'applied_steps_count',
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

describe('drift check (pnpm db:drift)', () => {
  const schema = fileURLToPath(new URL('../../../prisma/schema.prisma', import.meta.url));
  async function drift(...argv: string[]) {
    const shadow = await emptyDatabase();
    let out = '';
    const code = await migrationCommand(['drift', '--shadow-url', shadow.url, ...argv], (text) => void (out += text));
    return { code, out };
  }

  it('passes when the migrations produce schema.prisma', async () => {
    const { code, out } = await drift();
    expect(code).toBe(0);
    expect(out).toMatch(/^OK/m);
  });

  it('fails, printing the missing SQL, when schema.prisma changes without a migration', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-schema-'));
    cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
    const changed = path.join(dir, 'schema.prisma');
    const text = await fs.readFile(schema, 'utf8');
    await fs.writeFile(
      changed,
      text.replace('  knowledge_cutoff           String?', '  knowledge_cutoff           String?\n  drift_probe                Int?'),
    );
    const { code, out } = await drift('--schema', changed);
    expect(code).toBe(1);
    expect(out).toMatch(/ALTER TABLE "models" ADD COLUMN\s+"drift_probe" INTEGER/);
  });
});

/** The migrations folder up to and including this migration. */
async function migrationsThrough(name: string): Promise<string> {
  const dir = await migrationsCopy();
  for (const entry of await fs.readdir(dir)) if (entry > name && entry !== 'migration_lock.toml') await fs.rm(path.join(dir, entry), { recursive: true });
  return dir;
}

/** The migrations folder as it was before this migration. */
async function migrationsBeforeOf(name: string): Promise<string> {
  const dir = await migrationsCopy();
  for (const entry of await fs.readdir(dir)) if (entry >= name && entry !== 'migration_lock.toml') await fs.rm(path.join(dir, entry), { recursive: true });
  return dir;
}

/** The migrations folder up to `name`: before it, or through it. */
async function migrationsUpTo(name: string, through: boolean): Promise<string> {
  const dir = await migrationsCopy();
  for (const entry of await fs.readdir(dir)) {
    if (!/^\d{14}_/.test(entry)) continue;
    if (through ? entry > name : entry >= name) await fs.rm(path.join(dir, entry), { recursive: true });
  }
  return dir;
}

describe('20261123194236_member_names', () => {
  const NAME = '20261123194236_member_names';

  it("moves names to the membership of the organization that wrote them; later organizations' start empty", async () => {
    const db = await emptyDatabase();
    await migrate(db.url, { dir: await migrationsBeforeOf(NAME) });
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
    expect((await migrate(db.url, { dir: await migrationsThrough(NAME) })).applied).toEqual([NAME]);

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

describe('20261123203214_guardrail_fields_presets_admin', () => {
  const NAME = '20261123203214_guardrail_fields_presets_admin';

  it("keeps each key's newest guardrail assignment, and sets each preset's version in force and creator", async () => {
    const db = await emptyDatabase();
    await migrate(db.url, { dir: await migrationsBeforeOf(NAME) });
    const ws = '00000000-0000-4000-8000-000000000001';
    const [g1, g2, k1, k2, p1, p2] = [11, 12, 21, 22, 31, 32].map((n) => `00000000-0000-4000-8000-0000000000${n}`);
    await query(
      db.url,
      `INSERT INTO organizations (id, name, updated_at) VALUES ('org_a', 'A', now());
       INSERT INTO users (id, email, updated_at) VALUES ('user_a', 'a@example.com', now()), ('user_b', 'b@example.com', now());
       INSERT INTO workspaces (id, organization_id, slug, name, updated_at) VALUES ('${ws}', 'org_a', 'default', 'Default', now());
       INSERT INTO api_keys (id, organization_id, workspace_id, creator_user_id, hash, label, name, updated_at) VALUES
         ('${k1}', 'org_a', '${ws}', 'user_a', 'h1', 'l1', 'k1', now()), ('${k2}', 'org_a', '${ws}', 'user_a', 'h2', 'l2', 'k2', now());
       INSERT INTO guardrails (id, organization_id, workspace_id, name, updated_at) VALUES
         ('${g1}', 'org_a', '${ws}', 'g1', now()), ('${g2}', 'org_a', '${ws}', 'g2', now());
       INSERT INTO guardrail_key_assignments (id, organization_id, guardrail_id, api_key_id, assigned_by, created_at) VALUES
         (gen_random_uuid(), 'org_a', '${g1}', '${k1}', 'user_a', '2026-01-01'),
         (gen_random_uuid(), 'org_a', '${g2}', '${k1}', 'user_a', '2026-02-01'),
         (gen_random_uuid(), 'org_a', '${g1}', '${k2}', 'user_a', '2026-01-01');
       INSERT INTO presets (id, organization_id, workspace_id, slug, name, updated_at) VALUES
         ('${p1}', 'org_a', '${ws}', 'p1', 'P1', now()), ('${p2}', 'org_a', '${ws}', 'p2', 'P2', now());
       INSERT INTO preset_versions (id, organization_id, preset_id, version, config, creator_id, deleted_at, updated_at) VALUES
         ('00000000-0000-4000-8000-000000000041', 'org_a', '${p1}', 1, '{}', 'user_b', NULL, now()),
         ('00000000-0000-4000-8000-000000000042', 'org_a', '${p1}', 2, '{}', 'user_a', NULL, now()),
         ('00000000-0000-4000-8000-000000000043', 'org_a', '${p1}', 3, '{}', 'user_a', now(), now()),
         ('00000000-0000-4000-8000-000000000051', 'org_a', '${p2}', 1, '{}', 'user_a', now(), now());`,
    );
    expect((await migrate(db.url, { dir: await migrationsThrough(NAME) })).applied).toEqual([NAME]);

    const assignments = await query<{ api_key_id: string; guardrail_id: string }>(
      db.url,
      'SELECT api_key_id, guardrail_id FROM guardrail_key_assignments ORDER BY api_key_id',
    );
    expect(assignments).toEqual([
      { api_key_id: k1, guardrail_id: g2 },
      { api_key_id: k2, guardrail_id: g1 },
    ]);
    const presets = await query<{ slug: string; designated_version_id: string | null; creator_user_id: string | null; status: string }>(
      db.url,
      'SELECT slug, designated_version_id, creator_user_id, status FROM presets ORDER BY slug',
    );
    expect(presets).toEqual([
      { slug: 'p1', designated_version_id: '00000000-0000-4000-8000-000000000042', creator_user_id: 'user_b', status: 'active' },
      { slug: 'p2', designated_version_id: null, creator_user_id: 'user_a', status: 'active' },
    ]);
    // One guardrail per key from now on.
    await expect(
      query(
        db.url,
        `INSERT INTO guardrail_key_assignments (id, organization_id, guardrail_id, api_key_id, assigned_by) VALUES (gen_random_uuid(), 'org_a', '${g1}', '${k1}', 'user_a')`,
      ),
    ).rejects.toThrow(/unique/i);
  });
});

describe('20261123203343_analytics_hourly', () => {
  const NAME = '20261123203343_analytics_hourly';

  it('rolls up the generations recorded before it, per hour, with sums and histograms', async () => {
    const db = await emptyDatabase();
    const dir = await migrationsCopy();
    for (const entry of await fs.readdir(dir)) if (entry >= NAME && entry !== 'migration_lock.toml') await fs.rm(path.join(dir, entry), { recursive: true });
    await migrate(db.url, { dir });
    await query(
      db.url,
      `INSERT INTO organizations (id, name, updated_at) VALUES ('org_a', 'A', now());
       INSERT INTO users (id, email, updated_at) VALUES ('user_a', 'a@example.com', now());
       INSERT INTO workspaces (id, organization_id, slug, name, updated_at)
         VALUES ('00000000-0000-4000-8000-000000000001', 'org_a', 'default', 'Default', now());
       INSERT INTO api_keys (id, organization_id, workspace_id, creator_user_id, hash, label, name, updated_at)
         VALUES ('00000000-0000-4000-8000-000000000002', 'org_a', '00000000-0000-4000-8000-000000000001', 'user_a', 'h', 'l', 'k', now());
       INSERT INTO generations (id, organization_id, workspace_id, api_key_id, user_id, model, provider_name, tokens_prompt,
           tokens_completion, native_tokens_cached, usage, is_byok, upstream_inference_cost, latency, generation_time, created_at)
       VALUES
         ('g1', 'org_a', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', 'user_a', 'm/x', 'P',
          10, 20, 5, 0.5, false, NULL, 100, 1000, '2026-11-02T10:15:00Z'),
         ('g2', 'org_a', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', 'user_a', 'm/x', 'P',
          1, 2, NULL, 0.25, true, 3, 100, NULL, '2026-11-02T10:59:59Z'),
         ('g3', 'org_a', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', 'user_a', 'm/x', NULL,
          0, 0, NULL, 0, false, NULL, NULL, NULL, '2026-11-02T11:00:00Z');`,
    );
    expect((await migrate(db.url)).applied).toContain(NAME);
    const rows = await query<Record<string, unknown>>(
      db.url,
      `SELECT hour, provider, request_count::int, tokens_prompt::int, tokens_completion::int, cached_tokens::int, cache_hits::int,
              usage::float8, byok_usage::float8, latency_sum, latency_count::int, throughput_sum, throughput_count::int,
              latency_hist, throughput_hist
       FROM analytics_hourly ORDER BY hour`,
    );
    const bucket = (v: number) => String(Math.ceil(Math.log(v) / Math.log(1.01 / 0.99)));
    expect(rows).toEqual([
      {
        hour: new Date('2026-11-02T10:00:00Z'),
        provider: 'P',
        request_count: 2,
        tokens_prompt: 11,
        tokens_completion: 22,
        cached_tokens: 5,
        cache_hits: 1,
        usage: 0.75,
        byok_usage: 3,
        latency_sum: 200,
        latency_count: 2,
        throughput_sum: 20,
        throughput_count: 1,
        latency_hist: { [bucket(100)]: 2 },
        throughput_hist: { [bucket(20)]: 1 },
      },
      {
        hour: new Date('2026-11-02T11:00:00Z'),
        provider: '',
        request_count: 1,
        tokens_prompt: 0,
        tokens_completion: 0,
        cached_tokens: 0,
        cache_hits: 0,
        usage: 0,
        byok_usage: 0,
        latency_sum: 0,
        latency_count: 0,
        throughput_sum: 0,
        throughput_count: 0,
        latency_hist: {},
        throughput_hist: {},
      },
    ]);
  });
});

describe('20261123203103_credit_totals and 20261123205533_activity_daily', () => {
  it('derive the lifetime credit totals and the activity rollups from what was recorded before them', async () => {
    const db = await emptyDatabase();
    await migrate(db.url, { dir: await migrationsUpTo('20261123203103_credit_totals', false) });
    await query(
      db.url,
      `INSERT INTO organizations (id, name, credit_balance, updated_at) VALUES ('org_a', 'A', 7.5, now()), ('org_b', 'B', 3, now()), ('org_c', 'C', -1, now());
       INSERT INTO users (id, email, updated_at) VALUES ('user_a', 'a@example.com', now());
       INSERT INTO workspaces (id, organization_id, slug, name, updated_at) VALUES
         ('00000000-0000-4000-8000-00000000000a', 'org_a', 'default', 'Default', now()),
         ('00000000-0000-4000-8000-00000000000c', 'org_c', 'default', 'Default', now());
       INSERT INTO api_keys (id, organization_id, workspace_id, creator_user_id, hash, label, name, usage, updated_at) VALUES
         ('00000000-0000-4000-8000-0000000000a1', 'org_a', '00000000-0000-4000-8000-00000000000a', 'user_a', 'h1', 'l', 'k1', 2, now()),
         ('00000000-0000-4000-8000-0000000000a2', 'org_a', '00000000-0000-4000-8000-00000000000a', 'user_a', 'h2', 'l', 'k2', 0.5, now()),
         ('00000000-0000-4000-8000-0000000000c1', 'org_c', '00000000-0000-4000-8000-00000000000c', 'user_a', 'h3', 'l', 'k3', 1, now());
       INSERT INTO generations (id, organization_id, workspace_id, api_key_id, user_id, model, provider_name, tokens_prompt,
                                tokens_completion, native_tokens_reasoning, usage, is_byok, upstream_inference_cost, created_at) VALUES
         ('g1', 'org_a', '00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-0000000000a1', 'user_a', 'openai/gpt-4o', 'OpenAI', 10, 2, 1, 1.5, false, NULL, '2026-11-01T23:59:59Z'),
         ('g2', 'org_a', '00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-0000000000a1', 'user_a', 'openai/gpt-4o', 'OpenAI', 5, 1, NULL, 0.5, true, 0.25, '2026-11-01T00:00:00Z'),
         ('g3', 'org_a', '00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-0000000000a1', 'user_a', 'openai/gpt-4o', NULL, 1, 1, NULL, 0, false, NULL, '2026-11-02T00:00:00Z'),
         ('g4', 'org_c', '00000000-0000-4000-8000-00000000000c', '00000000-0000-4000-8000-0000000000c1', 'user_a', 'x/y', 'P', 1, 1, NULL, 1, false, NULL, '2026-11-02T00:00:00Z');`,
    );
    expect((await migrate(db.url)).applied).toEqual(expect.arrayContaining(['20261123203103_credit_totals', '20261123205533_activity_daily']));

    const totals = await query<{ id: string; total_credits: string; total_usage: string; credit_balance: string }>(
      db.url,
      'SELECT id, total_credits::text, total_usage::text, credit_balance::text FROM organizations ORDER BY id',
    );
    // Balance = credits - usage holds for every organization, before and after.
    expect(totals.map((t) => [t.id, Number(t.total_credits), Number(t.total_usage), Number(t.credit_balance)])).toEqual([
      ['org_a', 10, 2.5, 7.5],
      ['org_b', 3, 0, 3],
      ['org_c', 0, 1, -1],
    ]);
    const activity = await query<Record<string, string>>(
      db.url,
      `SELECT organization_id, day::text, model, provider_name, requests::text, prompt_tokens::text, completion_tokens::text,
              reasoning_tokens::text, usage::numeric(10,2)::text, byok_usage::numeric(10,2)::text
       FROM activity_daily ORDER BY organization_id, day, provider_name`,
    );
    expect(activity.map((r) => Object.values(r))).toEqual([
      ['org_a', '2026-11-01', 'openai/gpt-4o', 'OpenAI', '2', '15', '3', '1', '2.00', '0.25'],
      ['org_a', '2026-11-02', 'openai/gpt-4o', '', '1', '1', '1', '0', '0.00', '0.00'],
      ['org_c', '2026-11-02', 'x/y', 'P', '1', '1', '1', '0', '1.00', '0.00'],
    ]);
  });
});

describe('20261127084124_catalog_media_and_limits', () => {
  const NAME = '20261127084124_catalog_media_and_limits';

  it('types per_request_limits: numeric strings become numbers, anything else null, each logged with its model id', async () => {
    const db = await emptyDatabase();
    await migrate(db.url, { dir: await migrationsBeforeOf(NAME) });
    const model = (id: string, limits: string) =>
      `('${id}', lower('${id}'), 'a', 'b', '${id}', '${id}', 0, 1000, '{text}', '{text}', 'Other', '0', '0', 1000, '{}', ${limits}, now())`;
    await query(
      db.url,
      `INSERT INTO models (id, lookup, author, slug, canonical_slug, name, created, context_length, input_modalities, output_modalities,
                           tokenizer, pricing_prompt, pricing_completion, top_context_length, supported_parameters, per_request_limits, updated_at)
       VALUES ${[
         model('a/strings', `'{"prompt_tokens": "4000000", "completion_tokens": " 1000000 "}'`),
         model('a/numbers', `'{"prompt_tokens": 10, "completion_tokens": 2.5}'`),
         model('a/words', `'{"prompt_tokens": "many", "completion_tokens": "1"}'`),
         model('a/extra', `'{"prompt_tokens": 1, "completion_tokens": 1, "images": 2}'`),
         model('a/list', `'[1, 2]'`),
         model('a/json-null', `'null'`),
         model('a/none', 'NULL'),
       ].join(',\n')}`,
    );
    const logged: string[] = [];
    expect((await migrate(db.url, { dir: await migrationsThrough(NAME), log: (m) => logged.push(m) })).applied).toEqual([NAME]);

    const rows = await query<{ id: string; limits: unknown }>(db.url, 'SELECT id, per_request_limits AS limits FROM models ORDER BY id');
    expect(Object.fromEntries(rows.map((r) => [r.id, r.limits]))).toEqual({
      'a/extra': null,
      'a/json-null': null,
      'a/list': null,
      'a/none': null,
      'a/numbers': { prompt_tokens: 10, completion_tokens: 2.5 },
      'a/strings': { prompt_tokens: 4_000_000, completion_tokens: 1_000_000 },
      'a/words': null,
    });
    const notices = logged.filter((m) => m.startsWith(`${NAME}: `));
    expect(notices).toHaveLength(3);
    for (const id of ['a/extra', 'a/list', 'a/words']) expect(notices.some((m) => m.includes(`model ${id}: per_request_limits`))).toBe(true);
  });
});

describe('20261203171539_minted_keys', () => {
  const NAME = '20261203171539_minted_keys';

  it("gives keys minted before it their maker from the code that made them, and ends those whose maker's state already ends them", async () => {
    const db = await emptyDatabase();
    await migrate(db.url, { dir: await migrationsBeforeOf(NAME) });
    const key = (id: string, hash: string, state: string) =>
      `('${id}', 'org_a', '00000000-0000-4000-8000-0000000000a1', 'user_a', '${hash}', 'sk-...${hash}', '${hash}', ${state}, now())`;
    const code = (n: number, maker: string, minted: string | null) =>
      `('00000000-0000-4000-8000-0000000000c${n}', 'org_a', '00000000-0000-4000-8000-0000000000a1', 1, 'code-${n}', 'user_a', '${maker}',
        'http://localhost:3000/cb', 'minted', now() + interval '5 minutes', now(), ${minted === null ? 'NULL' : `'${minted}'`})`;
    const keyId = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    await query(
      db.url,
      `INSERT INTO organizations (id, name, updated_at) VALUES ('org_a', 'A', now());
       INSERT INTO users (id, email, updated_at) VALUES ('user_a', 'a@example.com', now());
       INSERT INTO workspaces (id, organization_id, slug, name, updated_at) VALUES ('00000000-0000-4000-8000-0000000000a1', 'org_a', 'default', 'Default', now());
       INSERT INTO oauth_apps (id, organization_id, origin, name) VALUES (1, 'org_a', 'http://localhost:3000', 'app');
       INSERT INTO api_keys (id, organization_id, workspace_id, creator_user_id, hash, label, name, disabled, deleted_at, expires_at, updated_at) VALUES
         ${[
           key(keyId(1), 'maker-live', 'false, NULL, NULL'),
           key(keyId(2), 'minted-of-live', 'false, NULL, NULL'),
           key(keyId(3), 'maker-disabled', 'true, NULL, NULL'),
           key(keyId(4), 'minted-of-disabled', 'false, NULL, NULL'),
           key(keyId(5), 'maker-deleted', "true, '2026-11-30T00:00:00Z', NULL"),
           key(keyId(6), 'minted-of-deleted', 'false, NULL, NULL'),
           key(keyId(7), 'maker-expiring', "false, NULL, '2027-01-01T00:00:00Z'"),
           key(keyId(8), 'minted-of-expiring', "false, NULL, '2027-06-01T00:00:00Z'"),
           key(keyId(9), 'made-by-post-keys', 'false, NULL, NULL'),
         ].join(',\n')};
       INSERT INTO authorization_codes (id, organization_id, workspace_id, app_id, code_hash, user_id, creator_key_hash, callback_url, key_name,
                                        expires_at, used_at, key_hash) VALUES
         ${[
           code(1, 'maker-live', 'minted-of-live'),
           code(2, 'maker-disabled', 'minted-of-disabled'),
           code(3, 'maker-deleted', 'minted-of-deleted'),
           code(4, 'maker-expiring', 'minted-of-expiring'),
           code(5, 'maker-live', null),
         ].join(',\n')};`,
    );
    expect((await migrate(db.url, { dir: await migrationsThrough(NAME) })).applied).toEqual([NAME]);

    const rows = await query<{ hash: string; maker: string | null; disabled: boolean; deleted: boolean; expires_at: Date | null }>(
      db.url,
      `SELECT k.hash, m.hash AS maker, k.disabled, k.deleted_at IS NOT NULL AS deleted, k.expires_at
       FROM api_keys k LEFT JOIN api_keys m ON m.id = k.minted_by_key_id WHERE k.hash LIKE 'minted-%' OR k.hash = 'made-by-post-keys' ORDER BY k.hash`,
    );
    expect(rows).toEqual([
      { hash: 'made-by-post-keys', maker: null, disabled: false, deleted: false, expires_at: null },
      { hash: 'minted-of-deleted', maker: 'maker-deleted', disabled: true, deleted: true, expires_at: null },
      { hash: 'minted-of-disabled', maker: 'maker-disabled', disabled: true, deleted: false, expires_at: null },
      { hash: 'minted-of-expiring', maker: 'maker-expiring', disabled: false, deleted: false, expires_at: new Date('2027-01-01T00:00:00Z') },
      { hash: 'minted-of-live', maker: 'maker-live', disabled: false, deleted: false, expires_at: null },
    ]);

    // From now on the maker's end reaches what it minted, through the trigger.
    await query(db.url, `UPDATE api_keys SET disabled = true WHERE hash = 'maker-live'`);
    const [live] = await query<{ disabled: boolean }>(db.url, `SELECT disabled FROM api_keys WHERE hash = 'minted-of-live'`);
    expect(live?.disabled).toBe(true);
  });
});
