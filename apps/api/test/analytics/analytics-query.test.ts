// POST /analytics/query over fixed generations whose every figure is computed by hand below.
import { randomUUID } from 'node:crypto';
import { ActivityOutputSchema, AnalyticsQueryOutputSchema, type RecordGenerationInput } from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALPHA, GAMMA, ZERO_BUCKET } from '../../src/modules/analytics/sketch.js';
import { createOrganization, until, useServer } from '../fixtures.js';
import { lockAnalyticsTables, slotsAre, slotsOf, withLockedTables } from '../fixtures-locks.js';
import { createRegularKey, createWorkspace, errorOf, expectEnvelope, rest } from '../fixtures-admin.js';
import { testServerWith } from '../fixtures-files.js';
import { generationId, record as recordAsPlatform } from '../fixtures-catalog.js';
import { scaled } from '@switchyard/db/testing';

const env = useServer();

const keys: Record<'k1' | 'k2' | 'k3' | 'theirs', { key: string; hash: string }> = {} as never;
let w2: { id: string; slug: string };

/** The one place this file records generations (a platform step). */
const record = (input: Partial<RecordGenerationInput> & { api_key_hash: string }) => recordAsPlatform(env.server, input);

// Five generations around a week and a month boundary (UTC): 2026-10-31 is a Saturday, 2026-11-02 a
// Monday, 2026-11-08 a Sunday.
const FIXED = () => [
  {
    id: 'g1',
    api_key_hash: keys.k1.hash,
    created_at: '2026-11-02T10:15:00Z',
    model: 'openai/gpt-4o',
    provider_name: 'OpenAI',
    tokens_prompt: 100,
    tokens_completion: 50,
    native_tokens_reasoning: 10,
    native_tokens_cached: 20,
    usage: 0.5,
    latency: 200,
    generation_time: 1000,
    finish_reason: 'stop',
    app_id: 7,
    external_user: 'u1',
    origin: 'https://a.example',
  },
  {
    id: 'g2',
    api_key_hash: keys.k1.hash,
    created_at: '2026-11-02T10:45:30Z',
    model: 'openai/gpt-4o',
    provider_name: 'OpenAI',
    tokens_prompt: 200,
    tokens_completion: 100,
    usage: 1.25,
    latency: 400,
    generation_time: 2000,
    finish_reason: 'length',
  },
  {
    id: 'g3',
    api_key_hash: keys.k2.hash,
    created_at: '2026-11-08T23:59:59Z',
    model: 'anthropic/claude-sonnet-4',
    provider_name: 'Anthropic',
    tokens_prompt: 10,
    tokens_completion: 5,
    native_tokens_cached: 10,
    usage: 0.25,
    is_byok: true,
    upstream_inference_cost: 2,
    latency: 1000,
    generation_time: 500,
    finish_reason: 'stop',
    app_id: 9,
  },
  {
    id: 'g4',
    api_key_hash: keys.k3.hash,
    created_at: '2026-11-09T00:00:00Z',
    model: 'anthropic/claude-sonnet-4',
    provider_name: 'Anthropic',
    tokens_prompt: 30,
    tokens_completion: 20,
  },
  {
    id: 'g5',
    api_key_hash: keys.k1.hash,
    created_at: '2026-10-31T23:30:00Z',
    model: 'openai/gpt-4o',
    tokens_prompt: 1000,
    tokens_completion: 0,
    usage: 2,
    latency: 50,
    generation_time: 0,
  },
];
const RANGE = { start: '2026-10-31T00:00:00Z', end: '2026-11-10T00:00:00Z' };

async function query(body: Record<string, unknown>, key?: string) {
  const answer = await rest(env.server, '/analytics/query', { method: 'POST', json: body, key });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return AnalyticsQueryOutputSchema.strict().parse(answer.body).data;
}
const rows = async (body: Record<string, unknown>, key?: string) => (await query({ time_range: RANGE, ...body }, key)).data;
const count = async (filter: Record<string, unknown>) => (await rows({ metrics: ['request_count'], filters: [filter] }))[0]?.request_count ?? 0;

beforeAll(async () => {
  w2 = await createWorkspace(env.server, 'second');
  keys.k1 = await createRegularKey(env.server);
  keys.k2 = await createRegularKey(env.server);
  keys.k3 = await createRegularKey(env.server, w2.id);
  keys.theirs = await createRegularKey(env.server, undefined, env.other.managementKey);
  for (const g of FIXED()) await record(g);
  // Another organization's generation in the same hour as g1, by the same model.
  await record({ id: 'their-g', api_key_hash: keys.theirs.hash, created_at: '2026-11-02T10:20:00Z', model: 'openai/gpt-4o', usage: 100, latency: 5 });
});

const near = (value: unknown, exact: number) => {
  expect(typeof value).toBe('number');
  expect(Math.abs((value as number) - exact)).toBeLessThanOrEqual(ALPHA * exact + 1e-9);
};

describe('POST /analytics/query: metrics', () => {
  it('every metric over the fixed generations, against figures computed by hand', async () => {
    const [row, ...more] = await rows({
      metrics: [
        'request_count',
        'tokens_total',
        'tokens_prompt',
        'tokens_completion',
        'reasoning_tokens',
        'cached_tokens',
        'total_usage',
        'byok_usage',
        'avg_latency',
        'p50_latency',
        'p90_latency',
        'p99_latency',
        'avg_throughput',
        'p50_throughput',
        'p90_throughput',
        'p99_throughput',
        'cache_hit_rate',
      ],
    });
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      request_count: 5,
      tokens_prompt: 1340, // 100 + 200 + 10 + 30 + 1000
      tokens_completion: 175, // 50 + 100 + 5 + 20
      tokens_total: 1515,
      reasoning_tokens: 10,
      cached_tokens: 30,
      total_usage: 4, // 0.5 + 1.25 + 0.25 + 0 + 2
      byok_usage: 2, // g3's upstream cost
      avg_latency: 412.5, // (200 + 400 + 1000 + 50) / 4; g4 has none
      cache_hit_rate: 0.4, // g1 and g3 read cached tokens
    });
    // Latencies 50, 200, 400, 1000: nearest rank ceil(q n) of 4 is the 2nd, 4th, 4th.
    near(row!.p50_latency, 200);
    near(row!.p90_latency, 1000);
    near(row!.p99_latency, 1000);
    // Throughputs (completion tokens per second of generation time): g1 50, g2 50, g3 10.
    near(row!.avg_throughput, 110 / 3);
    near(row!.p50_throughput, 50);
    near(row!.p90_throughput, 50);
    near(row!.p99_throughput, 50);
  });

  it('groups by each dimension; api_key_id answers key hashes, unset values are null', async () => {
    expect(await rows({ metrics: ['request_count', 'total_usage'], dimensions: ['model'] })).toEqual([
      { model: 'openai/gpt-4o', request_count: 3, total_usage: 3.75 },
      { model: 'anthropic/claude-sonnet-4', request_count: 2, total_usage: 0.25 },
    ]);
    expect(await rows({ metrics: ['request_count'], dimensions: ['provider'], order_by: { field: 'provider', direction: 'asc' } })).toEqual([
      { provider: 'Anthropic', request_count: 2 },
      { provider: 'OpenAI', request_count: 2 },
      { provider: null, request_count: 1 },
    ]);
    expect(await rows({ metrics: ['request_count'], dimensions: ['api_key_id'] })).toEqual([
      { api_key_id: keys.k1.hash, request_count: 3 },
      ...[
        { api_key_id: keys.k2.hash, request_count: 1 },
        { api_key_id: keys.k3.hash, request_count: 1 },
      ].sort((a, b) => (a.api_key_id < b.api_key_id ? -1 : 1)),
    ]);
    expect(await rows({ metrics: ['request_count'], dimensions: ['workspace'] })).toEqual([
      { workspace: env.server.workspaceId, request_count: 4 },
      { workspace: w2.id, request_count: 1 },
    ]);
    const [byUser] = await rows({ metrics: ['request_count'], dimensions: ['user'] });
    expect(byUser!.request_count).toBe(5); // every key was made by the same owner
    expect(typeof byUser!.user).toBe('string');
    expect(await rows({ metrics: ['request_count'], dimensions: ['finish_reason', 'app'], order_by: { field: 'app', direction: 'asc' } })).toEqual([
      { finish_reason: 'stop', app: 7, request_count: 1 },
      { finish_reason: 'stop', app: 9, request_count: 1 },
      { finish_reason: null, app: null, request_count: 2 },
      { finish_reason: 'length', app: null, request_count: 1 },
    ]);
    expect(await rows({ metrics: ['request_count'], dimensions: ['origin'] })).toEqual([
      { origin: null, request_count: 4 },
      { origin: 'https://a.example', request_count: 1 },
    ]);
    // High-cardinality dimensions read raw rows, over at most a day.
    const day = { start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' };
    expect(await rows({ time_range: day, metrics: ['request_count'], dimensions: ['external_user'] })).toEqual([
      { external_user: 'u1', request_count: 1 },
      { external_user: null, request_count: 1 },
    ]);
    expect(await rows({ time_range: day, metrics: ['tokens_total'], dimensions: ['generation_id'] })).toEqual([
      { generation_id: 'g2', tokens_total: 300 },
      { generation_id: 'g1', tokens_total: 150 },
    ]);
  });
});

describe('POST /analytics/query: granularities (UTC)', () => {
  const series = (granularity: string, extra: Record<string, unknown> = {}) => rows({ metrics: ['request_count'], granularity, ...extra });

  it('hour, day, week (from Monday) and month, across the week and month boundaries', async () => {
    expect(await series('hour')).toEqual([
      { date: '2026-10-31T23:00:00.000Z', request_count: 1 },
      { date: '2026-11-02T10:00:00.000Z', request_count: 2 },
      { date: '2026-11-08T23:00:00.000Z', request_count: 1 },
      { date: '2026-11-09T00:00:00.000Z', request_count: 1 },
    ]);
    expect(await series('day')).toEqual([
      { date: '2026-10-31T00:00:00.000Z', request_count: 1 },
      { date: '2026-11-02T00:00:00.000Z', request_count: 2 },
      { date: '2026-11-08T00:00:00.000Z', request_count: 1 },
      { date: '2026-11-09T00:00:00.000Z', request_count: 1 },
    ]);
    expect(await series('week')).toEqual([
      { date: '2026-10-26T00:00:00.000Z', request_count: 1 }, // Saturday 31 October
      { date: '2026-11-02T00:00:00.000Z', request_count: 3 }, // Monday 2 to Sunday 8 November, 23:59:59
      { date: '2026-11-09T00:00:00.000Z', request_count: 1 }, // Monday 9 November, 00:00:00
    ]);
    expect(await series('month')).toEqual([
      { date: '2026-10-01T00:00:00.000Z', request_count: 1 },
      { date: '2026-11-01T00:00:00.000Z', request_count: 4 },
    ]);
  });

  it('minute, from raw rows', async () => {
    expect(await series('minute', { time_range: { start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' } })).toEqual([
      { date: '2026-11-02T10:15:00.000Z', request_count: 1 },
      { date: '2026-11-02T10:45:00.000Z', request_count: 1 },
    ]);
  });

  it('a range that cuts hours counts exactly what lies inside it (whole hours from the rollup, the edges raw)', async () => {
    const cut = { start: '2026-11-02T10:30:00.5Z', end: '2026-11-08T23:59:59.000Z' }; // g2 only; g3 is at the end, excluded
    const [inside, ...none] = await rows({ time_range: cut, metrics: ['request_count', 'total_usage', 'p50_latency'] });
    expect(none).toEqual([]);
    expect(inside).toMatchObject({ request_count: 1, total_usage: 1.25 });
    near(inside!.p50_latency, 400);
    const wide = { start: '2026-10-31T23:30:00Z', end: '2026-11-09T00:00:00.001Z' }; // all five
    expect((await rows({ time_range: wide, metrics: ['request_count'], granularity: 'day' })).map((r) => r.request_count)).toEqual([1, 2, 1, 1]);
  });
});

describe('POST /analytics/query: filters', () => {
  it('every operator; unset values match only in/not_in with include_unset', async () => {
    expect(await count({ field: 'model', operator: 'eq', value: 'openai/gpt-4o' })).toBe(3);
    expect(await count({ field: 'model', operator: 'neq', value: 'openai/gpt-4o' })).toBe(2);
    expect(await count({ field: 'app', operator: 'gt', value: 7 })).toBe(1);
    expect(await count({ field: 'app', operator: 'gte', value: 7 })).toBe(2);
    expect(await count({ field: 'app', operator: 'lt', value: 9 })).toBe(1);
    expect(await count({ field: 'app', operator: 'lte', value: '9' })).toBe(2);
    expect(await count({ field: 'provider', operator: 'gt', value: 'Anthropic' })).toBe(2); // text order: OpenAI
    expect(await count({ field: 'finish_reason', operator: 'in', value: ['stop'] })).toBe(2);
    expect(await count({ field: 'finish_reason', operator: 'in', value: ['stop'], include_unset: true })).toBe(4);
    expect(await count({ field: 'finish_reason', operator: 'not_in', value: ['stop'] })).toBe(1);
    expect(await count({ field: 'finish_reason', operator: 'not_in', value: ['stop'], include_unset: true })).toBe(3);
    expect(await count({ field: 'app', operator: 'in', value: [7, 9] })).toBe(2);
  });

  it('identifiers: a key by hash or id, a workspace by UUID or slug, a user by id', async () => {
    expect(await count({ field: 'api_key_id', operator: 'eq', value: keys.k1.hash })).toBe(3);
    const k2 = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: keys.k2.hash } });
    expect(await count({ field: 'api_key_id', operator: 'in', value: [k2.id, keys.k3.hash] })).toBe(2);
    expect(await count({ field: 'workspace', operator: 'eq', value: w2.slug })).toBe(1);
    expect(await count({ field: 'workspace', operator: 'neq', value: w2.id })).toBe(4);
    const owner = (await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: keys.k1.hash } })).creator_user_id;
    expect(await count({ field: 'user', operator: 'eq', value: owner })).toBe(5);
    const day = { start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' };
    expect(
      (await rows({ time_range: day, metrics: ['request_count'], filters: [{ field: 'external_user', operator: 'eq', value: 'u1' }] }))[0]?.request_count,
    ).toBe(1);
    expect(
      (await rows({ time_range: day, metrics: ['request_count'], filters: [{ field: 'generation_id', operator: 'in', value: ['g1', 'g2', 'g3'] }] }))[0]
        ?.request_count,
    ).toBe(2);
  });
});

describe('POST /analytics/query: tenancy', () => {
  it("an organization sees only its own generations; another's identifiers match nothing, with a warning", async () => {
    const mine = await rows({ metrics: ['request_count', 'total_usage'], time_range: { start: '2026-11-02T10:00:00Z', end: '2026-11-02T11:00:00Z' } });
    expect(mine).toEqual([{ request_count: 2, total_usage: 1.75 }]);
    const theirs = await rows({ metrics: ['request_count', 'total_usage'] }, env.other.managementKey);
    expect(theirs).toEqual([{ request_count: 1, total_usage: 100 }]);

    for (const [field, value] of [
      ['api_key_id', keys.theirs.hash],
      ['workspace', env.other.workspaceId],
      ['user', env.other.userId],
    ] as const) {
      const answer = await query({ time_range: RANGE, metrics: ['request_count'], filters: [{ field, operator: 'eq', value }] });
      expect(answer.data, field).toEqual([]);
      expect(answer.warnings, field).toEqual([`${field}: "${value}" matches nothing in this organization`]);
      const listed = await query({ time_range: RANGE, metrics: ['request_count'], filters: [{ field, operator: 'in', value: [value] }] });
      expect(listed.data, field).toEqual([]);
    }
  });
});

describe('POST /analytics/query: order, limit, group_limit', () => {
  it('orders by a metric, request_count, a dimension or date; limit and group_limit cut and say so', async () => {
    const asc = await query({ time_range: RANGE, metrics: ['total_usage'], dimensions: ['model'], order_by: { field: 'total_usage', direction: 'asc' } });
    expect(asc.data.map((r) => r.model)).toEqual(['anthropic/claude-sonnet-4', 'openai/gpt-4o']);
    expect(asc.metadata).toMatchObject({ row_count: 2, truncated: false });
    const byCount = await rows({ metrics: ['total_usage'], dimensions: ['api_key_id'], order_by: { field: 'request_count', direction: 'desc' } });
    expect(byCount[0]).toEqual({ api_key_id: keys.k1.hash, total_usage: 3.75 });
    const latest = await rows({ metrics: ['request_count'], granularity: 'day', order_by: { field: 'date', direction: 'desc' } });
    expect(latest.map((r) => r.date)).toEqual(['2026-11-09T00:00:00.000Z', '2026-11-08T00:00:00.000Z', '2026-11-02T00:00:00.000Z', '2026-10-31T00:00:00.000Z']);

    const limited = await query({ time_range: RANGE, metrics: ['request_count'], granularity: 'day', limit: 2 });
    expect(limited.data.map((r) => r.date)).toEqual(['2026-10-31T00:00:00.000Z', '2026-11-02T00:00:00.000Z']);
    expect(limited.metadata).toMatchObject({ row_count: 2, truncated: true });

    const perModel = await query({ time_range: RANGE, metrics: ['request_count'], dimensions: ['model'], granularity: 'day', group_limit: 1 });
    expect(perModel.data).toEqual([
      { model: 'openai/gpt-4o', date: '2026-10-31T00:00:00.000Z', request_count: 1 },
      { model: 'anthropic/claude-sonnet-4', date: '2026-11-08T00:00:00.000Z', request_count: 1 },
    ]);
    expect(perModel.metadata).toMatchObject({ row_count: 2, truncated: true });
    // Without dimensions, group_limit has nothing to cut.
    const ignored = await query({ time_range: RANGE, metrics: ['request_count'], granularity: 'day', group_limit: 1 });
    expect(ignored.metadata).toMatchObject({ row_count: 4, truncated: false });
  });

  it('defaults to the last 30 days', async () => {
    const { hash } = await createRegularKey(env.server);
    const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    for (const days of [1, 29.9, 30.1, 45]) await record({ api_key_hash: hash, created_at: ago(days), model: 'm/recent' });
    const answer = await query({ metrics: ['request_count'], filters: [{ field: 'model', operator: 'eq', value: 'm/recent' }] });
    expect(answer.data).toEqual([{ request_count: 2 }]);
    expect(answer.metadata.row_count).toBe(1);
    expect(typeof answer.metadata.query_time_ms).toBe('number');
  });
});

describe('POST /analytics/query: percentiles and recording', () => {
  it('percentiles are within the stated relative error of the exact nearest-rank values, from rollups and from raw rows', async () => {
    const { hash } = await createRegularKey(env.server);
    const latencies = Array.from({ length: 400 }, (_, i) => Math.round(10 + ((i * 7919) % 997) * 3.7 + (i % 13) ** 2));
    const times = latencies.map((_, i) => 100 + ((i * 104729) % 1999));
    await Promise.all(
      latencies.map((latency, i) =>
        record({
          api_key_hash: hash,
          created_at: `2026-11-15T0${i % 5}:${String(i % 60).padStart(2, '0')}:00Z`,
          model: 'm/p',
          latency,
          tokens_completion: 64,
          generation_time: times[i],
          external_user: 'someone',
        }),
      ),
    );
    const exact = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.max(1, Math.ceil(q * values.length)) - 1]!;
    const throughputs = times.map((t) => (64 * 1000) / t);
    const filters = [{ field: 'model', operator: 'eq', value: 'm/p' }];
    const metrics = ['p50_latency', 'p90_latency', 'p99_latency', 'p50_throughput', 'p90_throughput', 'p99_throughput'];
    const range = { start: '2026-11-15T00:00:00Z', end: '2026-11-16T00:00:00Z' };
    const fromRollup = (await rows({ time_range: range, metrics, filters }))[0]!;
    // A filter on external_user makes the query read raw rows.
    const fromRaw = (await rows({ time_range: range, metrics, filters: [...filters, { field: 'external_user', operator: 'eq', value: 'someone' }] }))[0]!;
    for (const row of [fromRollup, fromRaw]) {
      for (const q of [0.5, 0.9, 0.99]) {
        near(row[`p${Math.round(q * 100)}_latency`], exact(latencies, q));
        near(row[`p${Math.round(q * 100)}_throughput`], exact(throughputs, q));
      }
    }
  });

  it('concurrent recordings and a retried id are counted once in the hourly and daily rollups, as in the raw rows', async () => {
    const { hash } = await createRegularKey(env.server);
    const ids = Array.from({ length: 30 }, () => generationId());
    const inputs = [...ids, ids[0]!, ids[1]!, ids[1]!].map((id, i) => ({
      id,
      api_key_hash: hash,
      created_at: '2026-11-20T12:34:56Z',
      model: 'm/concurrent',
      usage: 0.125,
      latency: 100 + (i % 30),
    }));
    await Promise.all(inputs.map((input) => record(input)));
    const metrics = ['request_count', 'total_usage', 'avg_latency'];
    const filters = [{ field: 'model', operator: 'eq', value: 'm/concurrent' }];
    const rolled = await rows({ time_range: { start: '2026-11-20T12:00:00Z', end: '2026-11-20T13:00:00Z' }, metrics, filters });
    const raw = await rows({ time_range: { start: '2026-11-20T00:00:00Z', end: '2026-11-21T00:00:00Z' }, metrics, filters, granularity: 'minute' });
    // A whole UTC day (no granularity) is read from the daily rollup.
    const daily = await rows({ time_range: { start: '2026-11-20T00:00:00Z', end: '2026-11-21T00:00:00Z' }, metrics, filters });
    expect(rolled).toEqual([{ request_count: 30, total_usage: 3.75, avg_latency: 114.5 }]);
    expect(raw).toEqual([{ date: '2026-11-20T12:34:00.000Z', ...rolled[0] }]);
    expect(daily).toEqual(rolled);
    const tables = await env.server.db.$queryRawUnsafe<{ t: string; n: string; latency_hist: Record<string, number> }[]>(
      `SELECT 'hourly' AS t, request_count::text AS n, latency_hist FROM analytics_hourly WHERE model = 'm/concurrent'
       UNION ALL SELECT 'daily', request_count::text, latency_hist FROM analytics_daily WHERE model = 'm/concurrent' ORDER BY 1`,
    );
    expect(tables.map((r) => [r.t, r.n])).toEqual([
      ['daily', '30'],
      ['hourly', '30'],
    ]);
    expect(tables[0]!.latency_hist).toEqual(tables[1]!.latency_hist);
  });

  it('analytics_bucket() is inlined into the statement that calls it, and answers as sketch.ts assumes', async () => {
    // Called rather than inlined (as it was while STRICT), it cost the recorder's batch statement
    // about a twentieth of its database time: docs/decisions/0007-analytics-rollups-and-log-bucket-percentiles.md.
    const plan = await env.server.db.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
      `EXPLAIN VERBOSE SELECT analytics_bucket(v) FROM (VALUES (1.5::float8), (2.5)) AS t(v)`,
    );
    const text = plan.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toContain('CASE WHEN');
    expect(text).not.toContain('analytics_bucket');
    const buckets = await env.server.db.$queryRawUnsafe<{ b: number | null }[]>(
      `SELECT analytics_bucket(v) AS b FROM unnest(ARRAY[NULL, -3, 0, 1, ${GAMMA}, ${GAMMA} * 1.000001, 1000]::float8[]) WITH ORDINALITY AS t(v, i) ORDER BY i`,
    );
    expect(buckets.map((r) => r.b)).toEqual([null, ZERO_BUCKET, ZERO_BUCKET, 0, 1, 2, Math.ceil(Math.log(1000) / Math.log(GAMMA))]);
  });
});

describe('POST /analytics/query: refusals', () => {
  it('401 without a key; 403 for a regular key', async () => {
    expectEnvelope(await rest(env.server, '/analytics/query', { method: 'POST', json: { metrics: ['request_count'] }, key: null }), 401);
    expectEnvelope(await rest(env.server, '/analytics/query', { method: 'POST', json: { metrics: ['request_count'] }, key: keys.k1.key }), 403);
  });

  it('400 naming any name GET /analytics/meta does not list', async () => {
    const refuse = async (body: Record<string, unknown>, named: string) => {
      const answer = await rest(env.server, '/analytics/query', { method: 'POST', json: body });
      expectEnvelope(answer, 400);
      expect(JSON.stringify(errorOf(answer).metadata)).toContain(named);
    };
    await refuse({ metrics: ['request_count', 'p95_latency'] }, 'p95_latency');
    await refuse({ metrics: ['request_count'], dimensions: ['country'] }, 'country');
    await refuse({ metrics: ['request_count'], granularity: 'quarter' }, 'quarter');
    await refuse({ metrics: ['request_count'], filters: [{ field: 'model', operator: 'like', value: 'x' }] }, 'like');
    await refuse({ metrics: ['request_count'], filters: [{ field: 'cost', operator: 'eq', value: 1 }] }, 'cost');
    await refuse({ metrics: ['request_count'], order_by: { field: 'total_usage', direction: 'asc' } }, 'total_usage');
  });

  it('400 for each bound and malformed part', async () => {
    const refuse = async (body: Record<string, unknown>) =>
      expectEnvelope(await rest(env.server, '/analytics/query', { method: 'POST', json: { metrics: ['request_count'], ...body } }), 400);
    await refuse({ metrics: [] });
    await refuse({ time_range: { start: '2025-01-01T00:00:00Z', end: '2026-01-02T00:00:01Z' } }); // past 366 days
    await refuse({ time_range: { start: '2026-11-01T00:00:00Z', end: '2026-11-02T00:00:01Z' }, granularity: 'minute' }); // raw: past a day
    await refuse({ time_range: { start: '2026-11-01T00:00:00Z', end: '2026-11-02T00:00:01Z' }, dimensions: ['generation_id'] });
    await refuse({ time_range: { start: '2026-11-02T00:00:00Z', end: '2026-11-01T00:00:00Z' } }); // start after end
    await refuse({ time_range: { start: '2026-11-01T00:00Z', end: '2026-11-02T00:00:00Z' } }); // no seconds
    await refuse({ limit: 0 });
    await refuse({ limit: 10_001 });
    await refuse({ group_limit: 0 });
    await refuse({ order_by: { field: 'request_count', direction: 'up' } });
    await refuse({ filters: [{ field: 'model', operator: 'in', value: 'x' }] });
    await refuse({ filters: [{ field: 'model', operator: 'eq', value: ['x'] }] });
    await refuse({ filters: [{ field: 'app', operator: 'gt', value: 'seven' }] });
    await refuse({ classifier_filters: { topic: 'x' } });
    // The limits themselves are accepted.
    const oneDay = { start: '2026-11-01T00:00:00Z', end: '2026-11-02T00:00:00Z' };
    expect(
      (
        await rest(env.server, '/analytics/query', {
          method: 'POST',
          json: { metrics: ['request_count'], time_range: oneDay, granularity: 'minute', limit: 10_000 },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await rest(env.server, '/analytics/query', {
          method: 'POST',
          json: { metrics: ['request_count'], time_range: { start: '2025-11-01T00:00:00Z', end: '2026-11-02T00:00:00Z' } },
        })
      ).status,
    ).toBe(200);
  });
});

describe('POST /analytics/query: time limit', () => {
  it('408 when the query runs past ANALYTICS_QUERY_TIMEOUT_MS; the next query is answered', async () => {
    const limited = await testServerWith({ ANALYTICS_QUERY_TIMEOUT_MS: '1' });
    try {
      const { hash } = await createRegularKey(limited);
      await recordAsPlatform(limited, { id: 'seed-g', api_key_hash: hash, created_at: '2026-11-20T12:00:00Z', model: 'm/slow', latency: 10 });
      // 20,000 copies of it within one day: a query by minute reads them all from raw rows.
      const columns = (
        await limited.db.$queryRawUnsafe<{ name: string }[]>(
          `SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'generations' AND column_name NOT IN ('id', 'created_at')`,
        )
      ).map((c) => `"${c.name}"`);
      await limited.db.$executeRawUnsafe(
        `INSERT INTO generations (id, created_at, ${columns.join(', ')})
         SELECT 'slow-' || i, '2026-11-20T00:00:00Z'::timestamptz + i * interval '4 seconds', ${columns.join(', ')}
         FROM generations, generate_series(1, 20000) i WHERE id = 'seed-g'`,
      );
      const body = {
        metrics: ['request_count', 'p99_latency'],
        granularity: 'minute',
        time_range: { start: '2026-11-20T00:00:00Z', end: '2026-11-21T00:00:00Z' },
      };
      const answer = await rest(limited, '/analytics/query', { method: 'POST', json: body });
      expectEnvelope(answer, 408);
      expect(errorOf(answer).message).toBe('Request timeout');
      // The connection and the pool are fine afterwards.
      expect((await rest(limited, '/analytics/meta')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('queries at once (ANALYTICS_CONCURRENCY)', () => {
  it("runs at most that many statements, at most half of them one organization's; the others wait their turn and are answered", async () => {
    await withLockedTables({ ANALYTICS_CONCURRENCY: '2' }, async (limited, lock) => {
      const other = await createOrganization(limited.db, 'Second tenant');
      const query = (key: string) => rest(limited, '/analytics/query', { method: 'POST', key, json: { metrics: ['request_count'] } });

      // Four of one organization: one statement at a time (half of 2), the others wait in the server.
      const first = Array.from({ length: 4 }, () => query(limited.managementKey));
      await slotsAre(limited, 'analytics', 1, 3);
      await until(async () => (await lock.blocked()) >= 1);
      expect(await lock.blocked()).toBe(1);
      // Another organization's query takes the slot the first one cannot.
      const second = query(other.managementKey);
      await slotsAre(limited, 'analytics', 2, 3);
      await until(async () => (await lock.blocked()) >= 2);
      expect(await lock.blocked()).toBe(2);

      await lock.release();
      for (const answer of await Promise.all([...first, second])) {
        expect(answer.status).toBe(200);
        expect(AnalyticsQueryOutputSchema.parse(answer.body).data.metadata.row_count).toBeGreaterThanOrEqual(0);
      }
    });
  });
});

describe('GET /activity under ANALYTICS_CONCURRENCY', () => {
  it("has slots of its own: an organization's statements wait for its half of them, not for analytics queries, nor another organization's", async () => {
    const limited = await testServerWith({ ANALYTICS_CONCURRENCY: '2', METRICS_PORT: '0' });
    const lock = await lockAnalyticsTables(limited, 'activity_daily', '%FROM activity_daily%');
    try {
      const other = await createOrganization(limited.db, 'Activity tenant');
      // The organization's one slot (half of 2): its first GET /activity statement, held on the lock.
      const first = rest(limited, '/activity');
      await until(async () => (await lock.blocked()) === 1);
      // Its second waits in the server for that slot; another organization's takes the other one.
      const second = rest(limited, '/activity');
      const others = rest(limited, '/activity', { key: other.managementKey });
      await until(async () => (await lock.blocked()) === 2);
      await slotsAre(limited, 'activity', 2, 1);
      // Its analytics query has slots of its own: answered at once.
      expect((await rest(limited, '/analytics/query', { method: 'POST', json: { metrics: ['request_count'] } })).status).toBe(200);
      // The second still waits in the server, its statement not sent.
      expect(await slotsOf(limited, 'activity')).toEqual({ running: 2, waiting: 1 });
      expect(await lock.blocked()).toBe(2);
      await lock.release();
      for (const answer of await Promise.all([first, second, others])) {
        expect(answer.status).toBe(200);
        expect(Array.isArray(ActivityOutputSchema.parse(answer.body).data)).toBe(true);
      }
    } finally {
      await lock.release();
      await limited.close();
    }
  });
});

describe('a query whose client hangs up while it waits for its turn', () => {
  it('is not run when its turn comes', async () => {
    await withLockedTables({ ANALYTICS_CONCURRENCY: '2' }, async (limited, lock) => {
      const post = () => rest(limited, '/analytics/query', { method: 'POST', json: { metrics: ['request_count'] } });
      // The organization's one slot (half of 2): the first query's statement, held on the lock.
      const first = post();
      await until(async () => (await lock.blocked()) === 1);
      // The second waits in the server for that slot; its client hangs up.
      const hangUp = new AbortController();
      const secondId = randomUUID();
      const second = limited
        .request('/api/v1/analytics/query', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': secondId },
          body: JSON.stringify({ metrics: ['request_count'] }),
          signal: hangUp.signal,
        })
        .catch(() => 'hung up');
      await slotsAre(limited, 'analytics', 1, 1);
      hangUp.abort();
      expect(await second).toBe('hung up');
      // The server learns it from the connection's close, a moment after the client: its request
      // line is written then. The slot must not come free before, or the turn would find the client
      // still there as far as the server knows.
      await until(() => limited.logs.some((entry) => entry.request_id === secondId && entry.msg === 'request'), {
        what: 'the server to see the second client leave',
      });
      // The first statement ends (cancelled) while the lock is still held: the slot comes free, and
      // the second query, had it run, would wait on the lock too.
      await lock.cancelBlocked();
      expect((await first).status).not.toBe(200);
      // The second's turn has come and gone without a statement.
      await slotsAre(limited, 'analytics', 0, 0);
      expect(await lock.blocked()).toBe(0);
      // The slot is free for the next query.
      await lock.release();
      expect((await post()).status).toBe(200);
    });
  });
});

describe('a query that runs for longer than 5 s, within ANALYTICS_QUERY_TIMEOUT_MS', () => {
  it(
    'is answered (the transaction around the statement lasts as long as the statement may)',
    async () => {
      // The query's time grows with the run's time factor: on a busy machine the release and the
      // answer after it take longer, and must still come within it.
      await withLockedTables({ ANALYTICS_QUERY_TIMEOUT_MS: String(scaled(20_000)) }, async (slow, lock) => {
        // The statement waits on the lock for over 5 s (the statement's time limit counts the wait).
        const answer = rest(slow, '/analytics/query', { method: 'POST', json: { metrics: ['request_count'] } });
        await until(async () => (await lock.blocked()) === 1);
        await until(async () => (await lock.longestSeconds()) > 5.5, { everyMs: 100, what: 'the statement to have run for 5.5 s' });
        await lock.release();
        expect((await answer).status).toBe(200);
      });
    },
    scaled(30_000),
  );
});
