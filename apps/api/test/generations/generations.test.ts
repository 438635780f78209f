// Recording generations (rollups, credits, idempotency), GET /generation, GET /generation/content
// and POST /generation/feedback.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorEnvelopeSchema,
  GetGenerationContentOutputSchema,
  GetGenerationOutputSchema,
  GenerationFeedbackOutputSchema,
  KeySchema,
  RecordGenerationOutputSchema,
} from '@switchyard/schema';
import { ADD_CREDITS_URL } from '../../src/modules/generations/credits.service.js';
import { GenerationRecorder, type GenerationRowJson } from '../../src/modules/generations/recorder.js';
import { createOrganization, expectExactOutput, until, useServer } from '../fixtures.js';
import { createKey, createMember, generationId, importDemoCatalog, record } from '../fixtures-catalog.js';
import { trpc, trpcRaw } from '../fixtures-trpc.js';
import { scaled } from '@switchyard/db/testing';

const env = useServer();
let organizationId: string;
beforeAll(async () => {
  await importDemoCatalog(env.server);
  organizationId = env.server.organizationId;
  await addCredits(organizationId, 1000);
  await addCredits(env.other.organizationId, 1000);
});

/** Billing (the platform) credits an organization. */
async function addCredits(orgId: string, amount: number): Promise<number> {
  const { status, data } = await trpc(env.server, 'generations.addCredits', { organization_id: orgId, amount });
  expect(status).toBe(200);
  return data.credit_balance;
}

async function balance(orgId = organizationId): Promise<number> {
  return (await env.server.db.organization.findUniqueOrThrow({ where: { id: orgId } })).credit_balance.toNumber();
}

async function keyInfo(key: string) {
  const res = await env.server.request('/api/v1/key', { key });
  expect(res.status).toBe(200);
  return KeySchema.parse(((await res.json()) as { data: unknown }).data);
}

async function expectStatus(res: Response, status: number, message: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(ErrorEnvelopeSchema.strict().parse(await res.json()).error).toMatchObject({ code: status, message });
}

const get = (id: string, key?: string | null) => env.server.request(`/api/v1/generation?id=${encodeURIComponent(id)}`, { key });
const getContent = (id: string, key?: string | null) => env.server.request(`/api/v1/generation/content?id=${encodeURIComponent(id)}`, { key });
const feedback = (body: unknown, key?: string | null) =>
  env.server.request('/api/v1/generation/feedback', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const FULL = {
  model: 'openai/gpt-4o',
  request_id: 'req-1',
  upstream_id: 'chatcmpl-abc',
  provider_name: 'OpenAI',
  router: 'default',
  api_type: 'completions',
  app_id: 42,
  preset_id: 'preset-1',
  session_id: 'sess-1',
  external_user: 'customer-7',
  user_agent: 'curl/8',
  http_referer: 'https://example.com',
  origin: 'https://example.com',
  data_region: 'europe',
  service_tier: 'default',
  web_search_engine: 'native',
  finish_reason: 'stop',
  native_finish_reason: 'stop',
  streamed: true,
  latency: 312.5,
  generation_time: 1400,
  moderation_latency: 12,
  tokens_prompt: 100,
  tokens_completion: 50,
  native_tokens_prompt: 101,
  native_tokens_completion: 51,
  native_tokens_completion_images: 0,
  native_tokens_reasoning: 10,
  native_tokens_cached: 20,
  num_fetches: 1,
  num_input_audio_prompt: 0,
  num_media_completion: 0,
  num_media_prompt: 1,
  num_search_results: 3,
  total_cost: 0.00075,
  usage: 0.00075,
  cache_discount: 0.0001,
  provider_responses: [{ provider: 'OpenAI', status: 200 }],
  content: {
    input: { messages: [{ role: 'user', content: 'Hello?' }] },
    output: { completion: 'Hi!', reasoning: 'The user greets me.' },
  },
};

describe('recording a generation (generations.record)', () => {
  it('updates GET /key at once, the daily rollup and the credit balance, in one go', async () => {
    const { key, hash } = await createKey(env.server);
    const before = await balance();
    env.server.setNow(new Date('2026-06-03T10:00:00Z'));
    await record(env.server, { api_key_hash: hash, usage: 1.25 });
    await record(env.server, { api_key_hash: hash, usage: 0.5, created_at: '2026-06-03T23:59:59.999Z' });
    await record(env.server, { api_key_hash: hash, usage: 2, created_at: '2026-06-02T12:00:00+02:00' }); // Tuesday
    const info = await keyInfo(key);
    expect(info).toMatchObject({ usage: 3.75, usage_daily: 1.75, usage_weekly: 3.75, usage_monthly: 3.75, byok_usage: 0 });
    const rows = await env.server.db.keyUsageDaily.findMany({ where: { api_key: { hash } }, orderBy: { day: 'asc' } });
    expect(rows.map((r) => [r.day.toISOString().slice(0, 10), r.usage.toNumber(), Number(r.request_count)])).toEqual([
      ['2026-06-02', 2, 1],
      ['2026-06-03', 1.75, 2],
    ]);
    expect(await balance()).toBeCloseTo(before - 3.75, 10);
    env.server.setNow(null);
  });

  it('is idempotent on the generation id, also for concurrent retries', async () => {
    const { key, hash } = await createKey(env.server);
    const before = await balance();
    const id = generationId();
    const calls = await Promise.all(
      Array.from({ length: 6 }, () => trpc(env.server, 'generations.record', { id, api_key_hash: hash, model: 'openai/gpt-4o', usage: 1 })),
    );
    expect(calls.map((c) => c.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const outputs = calls.map((c) => RecordGenerationOutputSchema.strict().parse(c.data));
    expect(outputs.filter((o) => o.recorded)).toHaveLength(1);
    expect(await env.server.db.generation.count({ where: { id } })).toBe(1);
    expect((await keyInfo(key)).usage).toBe(1);
    expect((await env.server.db.keyUsageDaily.findFirstOrThrow({ where: { api_key: { hash } } })).request_count).toBe(1n);
    expect(await balance()).toBeCloseTo(before - 1, 10);
  });

  it('concurrent recordings are written in batches, each counted once', async () => {
    const [a, b] = [await createKey(env.server), await createKey(env.server)];
    const before = await balance();
    const repeated = generationId();
    const inputs = Array.from({ length: 60 }, (_, i) => ({
      id: i % 20 === 19 ? repeated : generationId(),
      api_key_hash: i % 2 ? a.hash : b.hash,
      model: i % 3 ? 'openai/gpt-4o' : 'openai/gpt-4o:free',
      usage: 0.01,
      created_at: i % 4 ? '2026-05-05T10:00:00Z' : '2026-05-04T10:00:00Z',
      content: { input: { messages: [{ role: 'user', content: `call ${i}` }] } },
    }));
    const calls = await Promise.all(inputs.map((input) => trpc(env.server, 'generations.record', input)));
    const outputs = calls.map((c) => RecordGenerationOutputSchema.strict().parse(c.data));
    expect(outputs.filter((o) => o.recorded)).toHaveLength(58); // 57 distinct ids + the repeated one once
    expect(outputs.filter((o) => o.recorded).every((o) => o.content_stored)).toBe(true);
    const recordedInputs = inputs.filter((input, i) => inputs.findIndex((x) => x.id === input.id) === i);
    const counted = await env.server.db.keyUsageDaily.aggregate({
      where: { api_key: { hash: { in: [a.hash, b.hash] } } },
      _sum: { request_count: true, free_request_count: true },
    });
    expect(counted._sum.request_count).toBe(58n);
    expect(counted._sum.free_request_count).toBe(BigInt(recordedInputs.filter((input) => input.model.endsWith(':free')).length));
    expect((await keyInfo(a.key)).usage + (await keyInfo(b.key)).usage).toBeCloseTo(0.58, 10);
    expect(await balance()).toBeCloseTo(before - 0.58, 10);
    expect(await env.server.db.generationContent.count({ where: { generation_id: { in: recordedInputs.map((x) => x.id) } } })).toBe(58);
  });

  /** A recorder's generation row for the key with this hash (apiKeyId: another key id, real or not). */
  async function recorderRow(hash: string) {
    const keyRow = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash } });
    return (id: string, apiKeyId = keyRow.id): GenerationRowJson => ({
      id,
      organization_id: organizationId,
      workspace_id: keyRow.workspace_id,
      api_key_id: apiKeyId,
      user_id: keyRow.creator_user_id,
      model: 'openai/gpt-4o',
      usage: 0.25,
      cancelled: false,
      streamed: false,
      is_byok: false,
      is_free: false,
      tokens_prompt: 0,
      tokens_completion: 0,
      total_cost: 0,
      created_at: new Date().toISOString(),
    });
  }
  const recorderExtras = { byok: '0', day: new Date().toISOString().slice(0, 10), content: null };

  it('a batch the database refuses is retried one by one, so only the bad generation fails', async () => {
    const { key, hash } = await createKey(env.server);
    const row = await recorderRow(hash);
    const recorder = new GenerationRecorder(env.server.db, () => new Date());
    const good = [generationId(), generationId(), generationId()];
    // A key id that does not exist, or a real key with another organization: the foreign key (to
    // the key, its organization and its workspace) refuses that row, and with it the whole batch.
    const results = await Promise.allSettled([
      ...good.map((id) => recorder.record(row(id), recorderExtras)),
      recorder.record(row(generationId(), '00000000-0000-4000-8000-000000000000'), recorderExtras),
      recorder.record({ ...row(generationId()), organization_id: env.other.organizationId }, recorderExtras),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
    expect(await env.server.db.generation.count({ where: { id: { in: good } } })).toBe(3);
    expect((await keyInfo(key)).usage).toBe(0.75);
  });

  /** Until `n` backends of the test database wait for a lock. */
  async function lockWaits(n: number) {
    await expect
      .poll(async () => {
        const [{ count }] = await env.server.db.$queryRaw<[{ count: bigint }]>`
          SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
        return Number(count);
      })
      .toBe(n);
  }

  /** Another transaction inserts `row` and holds it, uncommitted, until released (then rolls back). */
  async function holdGeneration(row: GenerationRowJson) {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let inserted: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => (inserted = resolve));
    const settled = env.server.db
      .$transaction(
        async (tx) => {
          await tx.$executeRawUnsafe(`INSERT INTO generations SELECT * FROM jsonb_populate_record(NULL::generations, $1::jsonb)`, JSON.stringify(row));
          inserted();
          await released;
          throw new Error('rolled back on purpose');
        },
        // maxWait: a busy machine may take longer than Prisma's 2 s default to lend the connection.
        { timeout: scaled(60_000), maxWait: scaled(30_000) },
      )
      .catch((error: unknown) => error);
    // The row is held once inserted; a transaction that failed before that fails the test here.
    await Promise.race([
      holding,
      settled.then((error) => {
        throw new Error(`the holding transaction ended before it held the row: ${String(error)}`);
      }),
    ]);
    await lockWaits(0);
    return async () => {
      release();
      expect(await settled).toMatchObject({ message: 'rolled back on purpose' });
    };
  }

  it("two servers' batches in flight that share ids wait for each other and do not deadlock (rows are locked in key order)", async () => {
    const { key, hash } = await createKey(env.server);
    const row = await recorderRow(hash);
    const failed: number[] = [];
    const observe = ({ size, committed }: { size: number; committed: boolean }) => void (committed ? undefined : failed.push(size));
    // One recorder per server process, as two replicas would have.
    const [one, two] = [
      new GenerationRecorder(env.server.db, () => new Date(), { observe }),
      new GenerationRecorder(env.server.db, () => new Date(), { observe }),
    ];
    const prefix = generationId();
    const [x, m, y] = [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`];
    // Another transaction holds m: the first batch [x, m, y] inserts x and waits at m. The second
    // batch names y before x; in key order it waits at x, behind the first. Had it inserted y
    // first, the two would deadlock once m was let go.
    const release = await holdGeneration(row(m));
    const first = [x, m, y].map((id) => one.record(row(id), recorderExtras));
    await lockWaits(1);
    const second = [y, x].map((id) => two.record(row(id), recorderExtras));
    await lockWaits(2);
    await release();
    expect(await Promise.all(first)).toEqual([true, true, true].map((inserted) => ({ inserted, contentStored: false })));
    expect(await Promise.all(second)).toEqual([false, false].map((inserted) => ({ inserted, contentStored: false })));
    expect(failed).toEqual([]);
    expect((await keyInfo(key)).usage).toBe(0.75);
  });

  it('in one recorder, a repeated id waits for the batch that is writing it: the first recording is the one counted', async () => {
    const { key, hash } = await createKey(env.server);
    const row = await recorderRow(hash);
    const recorder = new GenerationRecorder(env.server.db, () => new Date(), { inFlight: 2 });
    const prefix = generationId();
    const [held, id] = [`${prefix}-a`, `${prefix}-b`];
    // The first batch [held, id] waits at held (another transaction's). The repeats of id arrive
    // meanwhile, with the second writer free: were it to take them, the repeat would be inserted
    // first and counted (usage 99) instead of the first recording.
    const release = await holdGeneration(row(held));
    const first = [recorder.record(row(held), recorderExtras), recorder.record(row(id), recorderExtras)];
    await lockWaits(1);
    const repeats = [recorder.record({ ...row(id), usage: 99 }, recorderExtras), recorder.record({ ...row(id), usage: 98 }, recorderExtras)];
    // The second writer came for them and left them queued: one writer (the held batch's) is at
    // work, and nothing else will run until it is done.
    await until(() => recorder.state.writers === 1 && recorder.state.queued === 2, { what: 'the repeats to wait behind the held batch' });
    await release();
    expect((await Promise.all([...first, ...repeats])).map((o) => o.inserted)).toEqual([true, true, false, false]);
    expect((await keyInfo(key)).usage).toBe(0.5);
  });

  it('400 for counts and amounts outside their columns', async () => {
    const { hash } = await createKey(env.server);
    for (const extra of [{ tokens_prompt: 2 ** 31 }, { usage: 1e16 }, { cache_discount: -1e16 }]) {
      const res = await trpc(env.server, 'generations.record', { id: generationId(), api_key_hash: hash, model: 'openai/gpt-4o', ...extra });
      expect(res.status).toBe(400);
    }
  });

  it('puts BYOK spend in byok_usage and counts free-model requests', async () => {
    const { key, hash } = await createKey(env.server);
    await record(env.server, { api_key_hash: hash, is_byok: true, usage: 0.01, upstream_inference_cost: 0.4 });
    const free = await trpc(env.server, 'generations.record', { id: generationId(), api_key_hash: hash, model: 'openai/gpt-oss-20b:free' });
    expect(free.data).toMatchObject({ recorded: true, is_free: true });
    // Resolved through the catalog: an alias with the variant, in any case.
    const alias = await trpc(env.server, 'generations.record', { id: generationId(), api_key_hash: hash, model: 'Meta-Llama/llama-3.3-70b:FREE' });
    expect(alias.data.is_free).toBe(true);
    // Not in the catalog: the :free suffix decides.
    const unknown = await trpc(env.server, 'generations.record', { id: generationId(), api_key_hash: hash, model: 'acme/unlisted:free' });
    expect(unknown.data.is_free).toBe(true);
    const paid = await trpc(env.server, 'generations.record', { id: generationId(), api_key_hash: hash, model: 'openai/gpt-oss-20b', usage: 0 });
    expect(paid.data.is_free).toBe(false);
    const info = await keyInfo(key);
    expect(info).toMatchObject({ usage: 0.01, byok_usage: 0.4, byok_usage_daily: 0.4 });
    expect(info.free_model_daily_requests).toEqual({ used: 3, limit: 50, remaining: 47 });
  });

  it('does not store content when the organization turned storage off', async () => {
    const { hash } = await createKey(env.server);
    await env.server.db.organization.update({ where: { id: organizationId }, data: { store_content: false } });
    try {
      const { data } = await trpc(env.server, 'generations.record', { id: generationId(), api_key_hash: hash, ...FULL });
      expect(data).toMatchObject({ recorded: true, content_stored: false });
      expect(await env.server.db.generationContent.count({ where: { generation_id: data.id } })).toBe(0);
      await expectStatus(await getContent(data.id), 404, 'Resource not found');
      expect((await get(data.id)).status).toBe(200);
    } finally {
      await env.server.db.organization.update({ where: { id: organizationId }, data: { store_content: true } });
    }
  });

  it("platform keys only (403 for tenants' keys, 401 without a key); 404 for an unknown key; 400 for bad input; nothing half-written", async () => {
    const { key, hash } = await createKey(env.server);
    const otherKey = await createKey(env.server, {}, env.other.managementKey);
    const count = await env.server.db.generation.count();
    for (const tenant of [key, env.server.managementKey, env.other.managementKey]) {
      const refused = await trpc(env.server, 'generations.record', { id: generationId(), api_key_hash: hash, model: 'm/x', usage: 5 }, { key: tenant });
      expect(refused.status).toBe(403);
      expect(refused.error?.message).toBe('Only platform keys can perform this operation');
    }
    expect((await trpc(env.server, 'generations.record', { id: generationId(), api_key_hash: hash, model: 'm/x' }, { key: null })).status).toBe(401);
    expect((await trpc(env.server, 'generations.record', { id: generationId(), api_key_hash: 'f'.repeat(64), model: 'm/x' })).status).toBe(404);
    expect(await env.server.db.generation.count()).toBe(count);
    for (const bad of [
      { api_key_hash: hash, model: 'm/x' },
      { id: '', api_key_hash: hash, model: 'm/x' },
      { id: 'g', api_key_hash: 'nothex', model: 'm/x' },
      { id: 'g', api_key_hash: hash, model: 'm/x', usage: -1 },
      { id: 'g', api_key_hash: hash, model: 'm/x', tokens_prompt: 1.5 },
      { id: 'g', api_key_hash: hash, model: 'm/x', created_at: 'yesterday' },
    ]) {
      expect((await trpcRaw(env.server, 'generations.record', bad)).status, JSON.stringify(bad)).toBe(400);
    }
    // The same id for a key of another organization is refused, not merged.
    const id = await record(env.server, { api_key_hash: hash, usage: 0 });
    const clash = await trpc(env.server, 'generations.record', { id, api_key_hash: otherKey.hash, model: 'm/x' });
    expect(clash.status).toBe(400);
    expect(await env.server.db.generation.count()).toBe(count + 1);
    // The platform records for the organization that owns the key, whichever it is.
    const theirs = await record(env.server, { api_key_hash: otherKey.hash, usage: 0 });
    expect((await env.server.db.generation.findUniqueOrThrow({ where: { id: theirs } })).organization_id).toBe(env.other.organizationId);
  });
});

describe('GET /generation', () => {
  it('returns every field of the record, null where a value does not apply', async () => {
    const { hash } = await createKey(env.server);
    const id = await record(env.server, { api_key_hash: hash, ...FULL, created_at: '2026-05-01T12:00:00+02:00' });
    const res = await get(id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const { data } = expectExactOutput(GetGenerationOutputSchema.strict(), await res.json());
    const { content: _content, ...fields } = FULL;
    expect(data).toEqual({
      ...fields,
      id,
      workspace_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      created_at: '2026-05-01T10:00:00.000Z',
      cancelled: false,
      is_byok: false,
      upstream_inference_cost: null,
    });

    const minimal = await record(env.server, { api_key_hash: hash, model: 'openai/gpt-4o-mini' });
    const body = (await (await get(minimal)).json()) as { data: Record<string, unknown> };
    const parsed = expectExactOutput(GetGenerationOutputSchema.strict(), body).data;
    expect(parsed).toMatchObject({ model: 'openai/gpt-4o-mini', tokens_prompt: 0, total_cost: 0, usage: 0, streamed: false });
    for (const field of [
      'request_id',
      'upstream_id',
      'app_id',
      'session_id',
      'latency',
      'native_tokens_reasoning',
      'cache_discount',
      'provider_responses',
      'upstream_inference_cost',
    ]) {
      expect(body.data[field], field).toBeNull();
    }
  });

  it("a regular key sees its own user's generations; a management key sees the organization's", async () => {
    const mine = await createKey(env.server); // made by the management key's user
    const member = await createMember(env.server.db, organizationId);
    const byMine = await record(env.server, { api_key_hash: mine.hash });
    const byMember = await record(env.server, { api_key_hash: member.hash });
    const sibling = await createKey(env.server); // another key of the same user
    expect((await get(byMine, sibling.key)).status).toBe(200);
    await expectStatus(await get(byMember, sibling.key), 404, 'Resource not found');
    expect((await get(byMember, member.key)).status).toBe(200);
    await expectStatus(await get(byMine, member.key), 404, 'Resource not found');
    expect((await get(byMember)).status).toBe(200);
    expect((await get(byMine)).status).toBe(200);
  });

  // Every key a management key makes shares its user, so "its user's generations" let a
  // regular key of one workspace read another workspace's. The rule: its own workspace's, made by its
  // user or by itself.
  it("a regular key sees its own workspace's generations only, even its own user's, and their content", async () => {
    const second = await trpc(env.server, 'workspaces.create', { slug: `gen-ws-${generationId().slice(-6)}`, name: 'Second' });
    expect(second.status).toBe(200);
    const inA = await createKey(env.server); // the default workspace, the management key's user
    const inB = await createKey(env.server, { workspace_id: second.data.data.id }); // the same user
    const madeInA = await record(env.server, { api_key_hash: inA.hash, ...FULL });
    const madeInB = await record(env.server, { api_key_hash: inB.hash, ...FULL });
    await expectStatus(await get(madeInB, inA.key), 404, 'Resource not found');
    await expectStatus(await getContent(madeInB, inA.key), 404, 'Resource not found');
    await expectStatus(await get(madeInA, inB.key), 404, 'Resource not found');
    expect((await get(madeInA, inA.key)).status).toBe(200);
    expect((await getContent(madeInB, inB.key)).status).toBe(200);
    // The management key still reads every workspace's.
    expect((await get(madeInA)).status).toBe(200);
    expect((await get(madeInB)).status).toBe(200);
  });

  it("404 for an unknown id and for another organization's generation", async () => {
    const { hash } = await createKey(env.server);
    const id = await record(env.server, { api_key_hash: hash });
    await expectStatus(await get('gen-does-not-exist'), 404, 'Resource not found');
    await expectStatus(await get(id, env.other.managementKey), 404, 'Resource not found');
  });

  // The endpoint does not list 400: a request that names no generation finds none.
  it('404 for a missing, empty or repeated id (400 is not listed); 401 without a key', async () => {
    await expectStatus(await env.server.request('/api/v1/generation'), 404, 'Resource not found');
    await expectStatus(await env.server.request('/api/v1/generation?id='), 404, 'Resource not found');
    await expectStatus(await env.server.request('/api/v1/generation?id=a&id=b'), 404, 'Resource not found');
    await expectStatus(await get('gen-x', null), 401, 'Missing Authentication header');
  });

  it('402 with the instruction and link while the credit balance is negative', async () => {
    const org = await createOrganization(env.server.db, 'Broke');
    const { hash } = await createKey(env.server, {}, org.managementKey);
    const id = await record(env.server, { api_key_hash: hash, ...FULL, usage: 3 });
    expect(await balance(org.organizationId)).toBe(-3);
    const res = await get(id, org.managementKey);
    await expectStatus(res, 402, `Insufficient credits. Add more using ${ADD_CREDITS_URL}`);
    // The content is still readable (the spec lists no 402 for it); other organizations are unaffected.
    expect((await getContent(id, org.managementKey)).status).toBe(200);
    expect((await get('gen-does-not-exist')).status).toBe(404);
    expect(await addCredits(org.organizationId, 3)).toBe(0);
    expect((await get(id, org.managementKey)).status).toBe(200);
  });
});

describe('GET /generation/content', () => {
  it('returns input, output and error as the spec shapes them', async () => {
    const { hash } = await createKey(env.server);
    const id = await record(env.server, { api_key_hash: hash, ...FULL });
    const res = await getContent(id);
    expect(res.status).toBe(200);
    expect(GetGenerationContentOutputSchema.strict().parse(await res.json())).toEqual({
      data: {
        input: { messages: [{ role: 'user', content: 'Hello?' }] },
        output: { completion: 'Hi!', reasoning: 'The user greets me.' },
        error: null,
      },
    });

    const failed = await record(env.server, {
      api_key_hash: hash,
      finish_reason: 'error',
      content: { input: { messages: [{ role: 'user', content: 'x' }] }, error: { code: 502, message: 'Provider returned error' } },
    });
    const body = GetGenerationContentOutputSchema.strict().parse(await (await getContent(failed)).json());
    expect(body.data).toEqual({
      input: { messages: [{ role: 'user', content: 'x' }] },
      output: { completion: '', reasoning: null },
      error: { code: 502, message: 'Provider returned error' },
    });
  });

  it('404 when no content was stored, for an unknown id, for another user (regular key) or organization', async () => {
    const { hash } = await createKey(env.server);
    const without = await record(env.server, { api_key_hash: hash });
    await expectStatus(await getContent(without), 404, 'Resource not found');
    await expectStatus(await getContent('gen-unknown'), 404, 'Resource not found');
    const withContent = await record(env.server, { api_key_hash: hash, ...FULL });
    await expectStatus(await getContent(withContent, env.other.managementKey), 404, 'Resource not found');
    const member = await createMember(env.server.db, organizationId);
    await expectStatus(await getContent(withContent, member.key), 404, 'Resource not found');
  });

  // The endpoint does not list 400: a request that names no generation finds none.
  it('404 for a missing, empty or repeated id (400 is not listed); 401 without a key', async () => {
    await expectStatus(await env.server.request('/api/v1/generation/content'), 404, 'Resource not found');
    await expectStatus(await env.server.request('/api/v1/generation/content?id='), 404, 'Resource not found');
    await expectStatus(await env.server.request('/api/v1/generation/content?id=a&id=b'), 404, 'Resource not found');
    await expectStatus(await getContent('gen-x', null), 401, 'Missing Authentication header');
  });
});

describe('POST /generation/feedback', () => {
  let id: string;
  beforeAll(async () => {
    const { hash } = await createKey(env.server); // made by the management key's user
    id = await record(env.server, { api_key_hash: hash });
  });

  it('stores the feedback and answers success; a repeat updates it', async () => {
    let res = await feedback({ generation_id: id, category: 'latency', comment: 'slow' });
    expect(res.status).toBe(200);
    expect(GenerationFeedbackOutputSchema.strict().parse(await res.json())).toEqual({ data: { success: true } });
    res = await feedback({ generation_id: id, category: 'formatting', comment: 'c'.repeat(1000) });
    expect(res.status).toBe(200);
    res = await feedback({ generation_id: id, category: 'other' });
    expect(res.status).toBe(200);
    const rows = await env.server.db.generationFeedback.findMany({ where: { generation_id: id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ category: 'other', comment: null, organization_id: organizationId });
  });

  it('404 for a generation of another user, of another organization, or unknown', async () => {
    const member = await createMember(env.server.db, organizationId);
    const byMember = await record(env.server, { api_key_hash: member.hash });
    await expectStatus(await feedback({ generation_id: byMember, category: 'other' }), 404, 'Resource not found');
    await expectStatus(await feedback({ generation_id: id, category: 'other' }, env.other.managementKey), 404, 'Resource not found');
    await expectStatus(await feedback({ generation_id: 'gen-unknown', category: 'other' }), 404, 'Resource not found');
    expect(await env.server.db.generationFeedback.count({ where: { generation_id: byMember } })).toBe(0);
  });

  it('400 for an invalid category, a long comment, a missing or empty id, wrong types, or a body that is not an object', async () => {
    for (const body of [
      { generation_id: id, category: 'rude' },
      { generation_id: id, category: 'other', comment: 'c'.repeat(1001) },
      { category: 'other' },
      { generation_id: '', category: 'other' },
      { generation_id: id },
      { generation_id: 42, category: 'other' },
      { generation_id: id, category: 'other', comment: 7 },
      [],
      '"text"',
      '5',
      'null',
    ]) {
      await expectStatus(await feedback(body), 400, 'Invalid request parameters');
    }
  });

  it('403 for a regular key; 401 without a key', async () => {
    const { key } = await createKey(env.server);
    await expectStatus(await feedback({ generation_id: id, category: 'other' }, key), 403, 'Only management keys can perform this operation');
    await expectStatus(await feedback({ generation_id: id, category: 'other' }, null), 401, 'Missing Authentication header');
  });
});
