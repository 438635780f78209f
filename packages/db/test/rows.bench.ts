// What parsing raw rows with their row schema costs (queryRows parses every row, in every
// environment): `pnpm --filter @switchyard/db run bench`. Rows of the shapes the hot lists answer,
// 100 of them (the largest page), as node-postgres reads them from PostgreSQL, parsed alone and
// beside the whole round trip of the statement that reads them.
import pg from 'pg';
import { afterAll, beforeAll, bench, describe, inject } from 'vitest';
import { z } from 'zod';
import { createDb, queryRows, statement, type Db } from '../src/client.js';
import { LimitReset } from '../src/generated/prisma/client.js';
import { parsedJson, parseRows, rowOrNulls } from '../src/rows.js';
import { createTestDatabase } from '../src/testing.js';

/** A GET /keys row: 15 key columns and 10 usage figures (keys-queries.ts KEYS_PAGE). */
const KEY_ROW = z.object({
  id: z.string(),
  hash: z.string(),
  name: z.string(),
  label: z.string(),
  disabled: z.boolean(),
  workspace_id: z.string(),
  creator_user_id: z.string(),
  external_user: z.string().nullable(),
  limit: z.string().nullable(),
  limit_reset: z.enum(LimitReset).nullable(),
  include_byok_in_limit: z.boolean(),
  created_at: z.date(),
  updated_at: z.date(),
  expires_at: z.date().nullable(),
  is_management_key: z.boolean(),
  ...Object.fromEntries(
    ['usage', 'byok_usage', 'usage_daily', 'usage_weekly', 'usage_monthly', 'byok_daily', 'byok_weekly', 'byok_monthly'].map((c) => [c, z.string()]),
  ),
  free_requests_today: z.number().int(),
});
const KEYS = statement(
  `SELECT gen_random_uuid()::text AS id, md5(i::text) || md5(i::text) AS hash, 'key ' || i AS name, 'sk-sy-v1-abc...' || i AS label,
          false AS disabled, gen_random_uuid()::text AS workspace_id, 'user_' || i AS creator_user_id, NULL::text AS external_user,
          CASE WHEN i % 2 = 0 THEN '100.000000000000' END AS "limit", CASE WHEN i % 2 = 0 THEN 'monthly' END AS limit_reset,
          false AS include_byok_in_limit, now() AS created_at, now() AS updated_at, NULL::timestamptz AS expires_at,
          false AS is_management_key, '1.250000000000' AS usage, '0' AS byok_usage, '0.5' AS usage_daily, '0.75' AS usage_weekly,
          '1.25' AS usage_monthly, '0' AS byok_daily, '0' AS byok_weekly, '0' AS byok_monthly, 3 AS free_requests_today
   FROM generate_series(1, $1::int) i`,
  KEY_ROW,
);

/** A GET /guardrails row: the page's total, and the guardrail's columns or nulls (guardrails.service.ts). */
const GUARDRAIL_ROW = rowOrNulls(
  { listed_workspace_id: z.string().nullable(), total: z.number().int() },
  {
    id: z.string(),
    name: z.string(),
    allowed_models: parsedJson,
    ignored_models: parsedJson,
    limit_usd: z.string(),
    reset_interval: z.enum(LimitReset).nullable(),
    enforce_zdr: z.boolean(),
    content_filters: parsedJson,
    created_at: z.date(),
    updated_at: z.date(),
  },
);
const GUARDRAIL_ROW_WALKING_JSON = rowOrNulls(GUARDRAIL_ROW.options[0].pick({ listed_workspace_id: true, total: true }).shape, {
  ...GUARDRAIL_ROW.options[0].omit({ listed_workspace_id: true, total: true }).shape,
  allowed_models: z.json(),
  ignored_models: z.json(),
  content_filters: z.json(),
});
const GUARDRAILS = statement(
  `SELECT gen_random_uuid()::text AS listed_workspace_id, 100 AS total, gen_random_uuid()::text AS id, 'guardrail ' || i AS name,
          '["openai/gpt-4o", "anthropic/claude"]'::jsonb AS allowed_models, NULL::jsonb AS ignored_models, '10.5' AS limit_usd,
          'daily' AS reset_interval, true AS enforce_zdr, '[{"pattern": "secret", "action": "block", "label": "s"}]'::jsonb AS content_filters,
          now() AS created_at, now() AS updated_at
   FROM generate_series(1, $1::int) i`,
  GUARDRAIL_ROW,
);

let db: Db;
/** The driver alone, as queryRows ran statements before row schemas. */
let pool: pg.Pool;
let keyRows: unknown[] = [];
let guardrailRows: unknown[] = [];
beforeAll(async () => {
  const database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
  db = createDb(database.url, { poolMax: 1 });
  pool = new pg.Pool({ connectionString: database.url, max: 1 });
  // The rows as node-postgres reads them.
  keyRows = (await pool.query(KEYS.text, [100])).rows;
  guardrailRows = (await pool.query(GUARDRAILS.text, [100])).rows;
});
// The database goes with the run's server (vitest-setup.ts): dropping it here raced the pools' last
// connections closing after the benchmark's loops.
afterAll(async () => {
  await pool.end();
  await db.$disconnect();
});

const driverOnly = (stmt: { name: string; text: string }) => pool.query({ name: `${stmt.name}_driver`, text: stmt.text, values: [100] });

describe('100 rows of GET /keys (25 columns)', () => {
  bench('parse only', () => {
    parseRows(KEY_ROW, keyRows, KEYS.text);
  });
  bench('driver only: round trip on loopback', async () => {
    await driverOnly(KEYS);
  });
  bench('queryRows: round trip, columns checked, rows parsed', async () => {
    await queryRows(db, KEYS, [100]);
  });
});

describe('100 rows of GET /guardrails (12 columns, 3 json, or nulls)', () => {
  bench('parse only', () => {
    parseRows(GUARDRAIL_ROW, guardrailRows, GUARDRAILS.text);
  });
  bench('parse only, json columns walked again by z.json()', () => {
    parseRows(GUARDRAIL_ROW_WALKING_JSON, guardrailRows, GUARDRAILS.text);
  });
  bench('driver only: round trip on loopback', async () => {
    await driverOnly(GUARDRAILS);
  });
  bench('queryRows: round trip, columns checked, rows parsed', async () => {
    await queryRows(db, GUARDRAILS, [100]);
  });
});
