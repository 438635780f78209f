// generations.recordBatch: up to 1,000 generations a call, each recorded (durably, once per id) or
// refused on its own, with the rollups, key totals, credits and analytics counted once.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelopeSchema, KeySchema, MAX_RECORD_BATCH, RecordGenerationBatchOutputSchema } from '@switchyard/schema';
import { until, useServer } from '../fixtures.js';
import { createKey, generationId, importDemoCatalog, record } from '../fixtures-catalog.js';
import { trpc, trpcRaw } from '../fixtures-trpc.js';

const env = useServer();

beforeAll(async () => {
  await importDemoCatalog(env.server);
  for (const organization_id of [env.server.organizationId, env.other.organizationId]) {
    expect((await trpc(env.server, 'generations.addCredits', { organization_id, amount: 1000 })).status).toBe(200);
  }
});

/** Calls generations.recordBatch as the platform (or with `key`); a 200 answer is checked against its schema. */
async function recordBatch(generations: unknown[], key?: string | null) {
  const res = await trpc(env.server, 'generations.recordBatch', { generations }, key === undefined ? {} : { key });
  return { ...res, data: res.status === 200 ? RecordGenerationBatchOutputSchema.strict().parse(res.data) : res.data };
}

const generation = (hash: string, extra: Record<string, unknown> = {}) => ({
  id: generationId(),
  api_key_hash: hash,
  model: 'openai/gpt-4o',
  usage: 0.25,
  tokens_prompt: 10,
  tokens_completion: 5,
  latency: 120,
  ...extra,
});

async function balance(organizationId = env.server.organizationId) {
  const row = await env.server.db.organization.findUniqueOrThrow({ where: { id: organizationId } });
  return { credit: row.credit_balance.toNumber(), spent: row.total_usage.toNumber() };
}

/** What every table the recording writes holds for a key: each must count a generation once. */
async function counted(hash: string) {
  const key = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash } });
  const where = { api_key_id: key.id };
  const [daily, activity, hourly, generations] = await Promise.all([
    env.server.db.keyUsageDaily.aggregate({ where, _sum: { request_count: true, usage: true } }),
    env.server.db.activityDaily.aggregate({ where, _sum: { requests: true, usage: true } }),
    env.server.db.analyticsHourly.aggregate({ where, _sum: { request_count: true, usage: true } }),
    env.server.db.generation.count({ where }),
  ]);
  return {
    generations,
    keyUsage: key.usage.toNumber(),
    daily: [Number(daily._sum.request_count ?? 0), daily._sum.usage?.toNumber() ?? 0],
    activity: [Number(activity._sum.requests ?? 0), activity._sum.usage?.toNumber() ?? 0],
    hourly: [Number(hourly._sum.request_count ?? 0), hourly._sum.usage?.toNumber() ?? 0],
  };
}

const once = (n: number, usage: number) => ({
  generations: n,
  keyUsage: usage,
  daily: [n, usage],
  activity: [n, usage],
  hourly: [n, usage],
});

describe('generations.recordBatch', () => {
  it('records every generation, answering one result per input in order; GET /key shows the spend at once', async () => {
    const [a, b] = [await createKey(env.server), await createKey(env.server)];
    const before = await balance();
    const inputs = [
      generation(a.hash, { content: { input: { messages: [{ role: 'user', content: 'Hi' }] }, output: { completion: 'Hello' } } }),
      generation(b.hash, { usage: 0.5 }),
      generation(a.hash, { model: 'openai/gpt-oss-20b:free', usage: 0 }),
    ];
    const { status, data } = await recordBatch(inputs);
    expect(status).toBe(200);
    expect(data.results).toEqual([
      { id: inputs[0]!.id, status: 'recorded', is_free: false, content_stored: true },
      { id: inputs[1]!.id, status: 'recorded', is_free: false, content_stored: false },
      { id: inputs[2]!.id, status: 'recorded', is_free: true, content_stored: false },
    ]);
    // Durable before the answer: visible to the next read, over REST and in every table.
    const res = await env.server.request('/api/v1/key', { key: a.key });
    expect(KeySchema.parse(((await res.json()) as { data: unknown }).data)).toMatchObject({ usage: 0.25, usage_daily: 0.25 });
    expect(await counted(a.hash)).toEqual(once(2, 0.25));
    expect(await counted(b.hash)).toEqual(once(1, 0.5));
    const after = await balance();
    expect(after.credit).toBeCloseTo(before.credit - 0.75, 10);
    expect(after.spent).toBeCloseTo(before.spent + 0.75, 10);
    const content = await env.server.request(`/api/v1/generation/content?id=${inputs[0]!.id}`, { key: a.key });
    expect(((await content.json()) as { data: unknown }).data).toMatchObject({ output: { completion: 'Hello' } });

    expect(await recordBatch([])).toMatchObject({ status: 200, data: { results: [] } });
  });

  it('is idempotent on the id: a repeat in the same batch or in a later one (or of generations.record) is counted once', async () => {
    const { hash } = await createKey(env.server);
    const before = await balance();
    const first = generation(hash);
    const second = generation(hash);
    const inOne = await recordBatch([first, second, first, { ...first, usage: 99 }]);
    expect(inOne.data.results.map((r: { status: string }) => r.status)).toEqual(['recorded', 'recorded', 'duplicate', 'duplicate']);
    expect(inOne.data.results[2]).toEqual({ id: first.id, status: 'duplicate', is_free: false, content_stored: false });
    expect(await counted(hash)).toEqual(once(2, 0.5));

    const recordedAlone = await record(env.server, { api_key_hash: hash, usage: 0.25 });
    const again = await recordBatch([second, first, generation(hash, { id: recordedAlone })]);
    expect(again.data.results.map((r: { status: string }) => r.status)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    // Concurrent batches repeating each other's ids: still once each.
    const shared = Array.from({ length: 20 }, () => generation(hash, { usage: 0.01 }));
    const concurrent = await Promise.all([recordBatch(shared), recordBatch([...shared].reverse()), recordBatch(shared.slice(0, 10))]);
    const statuses = concurrent.flatMap((c) => c.data.results.map((r: { status: string }) => r.status));
    expect(statuses.filter((s) => s === 'recorded')).toHaveLength(20);
    expect(statuses.filter((s) => s === 'duplicate')).toHaveLength(30);

    expect(await counted(hash)).toEqual(once(23, 0.95));
    expect((await balance()).credit).toBeCloseTo(before.credit - 0.95, 10);
  });

  it('a bad generation fails alone, with the error generations.record would answer; the others are recorded', async () => {
    const { hash } = await createKey(env.server);
    const theirs = await createKey(env.server, {}, env.other.managementKey);
    const taken = await record(env.server, { api_key_hash: theirs.hash, usage: 0 });
    const good = [generation(hash), generation(hash), generation(hash), generation(hash)];
    const before = await balance();
    const { status, data } = await recordBatch([
      good[0],
      { ...generation(hash), usage: -1 }, // the schema refuses it
      generation('f'.repeat(64)), // no such key
      good[1],
      42,
      { ...generation(hash), id: '' },
      generation(hash, { content: { input: { messages: [{ role: 'user', content: 'nul \u0000 byte' }] } } }), // PostgreSQL cannot store it
      good[2],
      generation(hash, { id: taken }), // another organization's generation
      // Passes the schema, but no index takes a provider this long: the database refuses its row, and with
      // it the statement of its whole batch, which the recorder then writes one generation at a time.
      generation(hash, { provider_name: randomBytes(15_000).toString('base64') }),
      good[3],
    ]);
    expect(status).toBe(200);
    const results = data.results;
    expect(results.map((r) => r.status)).toEqual([
      'recorded',
      'error',
      'error',
      'recorded',
      'error',
      'error',
      'error',
      'recorded',
      'error',
      'error',
      'recorded',
    ]);
    for (const r of results.filter((r) => r.status === 'error')) ErrorEnvelopeSchema.strict().parse({ error: r.error });
    expect(results[1]).toMatchObject({ status: 'error', error: { code: 400, message: 'Invalid request parameters' } });
    const refused = results[1]!;
    if (refused.status !== 'error') throw new Error(`results[1] is ${refused.status}`);
    expect(refused.error.metadata?.issues).toEqual([expect.objectContaining({ path: 'usage' })]);
    expect(results[2]).toMatchObject({ error: { code: 404, message: 'Resource not found' } });
    expect(results[4]).toEqual({ id: null, status: 'error', error: expect.objectContaining({ code: 400 }) });
    expect(results[5]).toMatchObject({ id: null, error: { code: 400 } });
    expect(results[6]).toMatchObject({
      error: { code: 400, metadata: { issues: [{ path: 'content.input.messages.0.content', message: 'contains a NUL character' }] } },
    });
    expect(results[8]).toMatchObject({ id: taken, error: { code: 400, metadata: { id: taken } } });
    expect(results[9]).toMatchObject({
      error: { code: 400, message: 'Invalid request parameters', metadata: { reason: 'a value the database cannot store' } },
    });
    for (const [i, g] of good.entries()) expect(results[[0, 3, 7, 10][i]!]!.id).toBe(g!.id);

    expect(await counted(hash)).toEqual(once(4, 1));
    expect((await balance()).credit).toBeCloseTo(before.credit - 1, 10);
    expect(await env.server.db.generation.count({ where: { id: taken } })).toBe(1);
    expect((await env.server.db.generation.findUniqueOrThrow({ where: { id: taken } })).organization_id).toBe(env.other.organizationId);
  });

  it("an internal error fails its generation alone, logged through the procedure's logger with the call's request id", async () => {
    const { hash } = await createKey(env.server);
    const [good, refused] = [generation(hash), generation(hash)];
    // A fault the database raises for one row only, as a broken disk or a bug in a trigger would.
    const db = env.server.db;
    await db.$executeRawUnsafe(`CREATE FUNCTION test_refuse_generation() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id = '${refused.id}' THEN RAISE EXCEPTION 'refused by a test trigger'; END IF; RETURN NEW; END $$`);
    await db.$executeRawUnsafe('CREATE TRIGGER test_refuse_generation BEFORE INSERT ON generations FOR EACH ROW EXECUTE FUNCTION test_refuse_generation()');
    try {
      const { status, data } = await recordBatch([good, refused]);
      expect(status).toBe(200);
      expect(data.results.map((r: { status: string }) => r.status)).toEqual(['recorded', 'error']);
      expect(data.results[1]).toMatchObject({ id: refused.id, error: { code: 500 } });
    } finally {
      await db.$executeRawUnsafe('DROP TRIGGER test_refuse_generation ON generations');
      await db.$executeRawUnsafe('DROP FUNCTION test_refuse_generation()');
    }
    const line = env.server.logs.find((entry) => entry.generation_id === refused.id);
    // The request line is written on 'finish', after the answer may have been read.
    await until(() => env.server.logs.some((entry) => entry.msg === 'request' && entry.request_id === line?.request_id), {
      what: 'the request line of the batch',
    });
    expect(line).toMatchObject({
      level: 50,
      msg: 'internal error',
      procedure: 'generations.recordBatch',
      request_id: expect.any(String),
      err: expect.objectContaining({ message: expect.stringContaining('refused by a test trigger') }),
    });
    const ofRequest = env.server.logs.filter((entry) => entry.request_id === line?.request_id);
    expect(ofRequest.map((entry) => [entry.msg, entry.path])).toEqual([
      ['internal error', undefined],
      ['request', '/trpc/generations.recordBatch'],
    ]);
    expect(await counted(hash)).toEqual(once(1, 0.25));
  });

  it(`takes up to ${MAX_RECORD_BATCH} generations; more is refused whole with 400, nothing written`, async () => {
    const { hash } = await createKey(env.server);
    const full = Array.from({ length: MAX_RECORD_BATCH }, () => generation(hash, { usage: 0.001 }));
    const { status, data } = await recordBatch(full);
    expect(status).toBe(200);
    expect(data.results).toHaveLength(MAX_RECORD_BATCH);
    expect(data.results.every((r: { id: string | null; status: string }, i: number) => r.status === 'recorded' && r.id === full[i]!.id)).toBe(true);
    expect(await counted(hash)).toEqual(once(MAX_RECORD_BATCH, 1));

    const { hash: fresh } = await createKey(env.server);
    const over = await recordBatch(Array.from({ length: MAX_RECORD_BATCH + 1 }, () => generation(fresh)));
    expect(over.status).toBe(400);
    expect(over.error).toMatchObject({ message: 'Invalid request parameters', data: { httpStatus: 400, metadata: { issues: [{ path: 'generations' }] } } });
    // A body over 1 MiB: 413 for the whole call.
    const huge = generation(fresh, { content: { input: { messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024) }] } } });
    expect((await recordBatch([huge, generation(fresh)])).status).toBe(413);
    for (const input of [{}, { generations: 'all' }, [generation(fresh)]]) {
      expect((await trpcRaw(env.server, 'generations.recordBatch', input)).status, JSON.stringify(input)).toBe(400);
    }
    expect(await counted(fresh)).toEqual(once(0, 0));
  });

  it("platform keys only: 401 without a key or with an unknown one, 403 for an organization's management and regular keys", async () => {
    const { key, hash } = await createKey(env.server);
    const batch = () => [generation(hash)];
    for (const missing of [null, 'sk-sy-v1-unknown']) {
      const res = await recordBatch(batch(), missing);
      expect(res.status).toBe(401);
      expect(res.error?.message).toBe('Missing Authentication header');
    }
    for (const tenant of [env.server.managementKey, key, env.other.managementKey]) {
      const refused = await recordBatch(batch(), tenant);
      expect(refused.status).toBe(403);
      expect(refused.error?.message).toBe('Only platform keys can perform this operation');
    }
    expect(await counted(hash)).toEqual(once(0, 0));
  });
});
