// Key rotation: POST /api/v1/keys/{hash}/rotate and tRPC keys.rotate / keys.secrets. A
// key keeps its stable hash and everything else; its old secret works until the grace period ends,
// on every replica. The servers keep key rows for CACHE_TTL_MS = 60 s, so a replica that refuses an
// old secret within the tests' bounds learnt it from the rotation's announcement or from the
// secret's end, not from its cache expiring.
import { CreateKeyOutputSchema, KeySecretsOutputSchema, ManagedKeySchema } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hashApiKey } from '../../src/access/key-format.js';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { addUsage, createOrganization, type OrgFixture, until } from '../fixtures.js';
import { createRegularKey, expectEnvelope, rest } from '../fixtures-admin.js';
import { inProcessReplica, type InProcessReplica } from '../fixtures-replica.js';
import { ok, trpc } from '../fixtures-trpc.js';

const Rotated = CreateKeyOutputSchema.extend({ data: ManagedKeySchema.strict() }).strict();
const CACHE = { CACHE_TTL_MS: '60000' };

let server: TestServer;
let other: OrgFixture;
let replica: InProcessReplica;

beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), env: CACHE });
  other = await createOrganization(server.db);
  replica = await inProcessReplica(server, { env: CACHE });
});
afterAll(async () => {
  await replica?.close();
  await server?.close();
});

const rotate = (hash: string, json?: unknown, key?: string | null) =>
  rest(server, `/keys/${hash}/rotate`, { method: 'POST', ...(json === undefined ? {} : { json }), key });
const status = async (via: { request: TestServer['request'] }, key: string) => (await via.request('/api/v1/key', { key })).status;

async function rotated(hash: string, json?: unknown) {
  const res = await rotate(hash, json);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return Rotated.parse(res.body);
}

describe('POST /keys/{hash}/rotate', () => {
  it('200 { data, key }: a new secret for the same key (hash, name, limits, usage, assignments kept); label shows the new secret', async () => {
    const created = await ok(server, 'keys.create', { name: 'rotating', limit: 10, limit_reset: 'monthly' });
    const day = new Date().toISOString().slice(0, 10);
    await addUsage(server.db, created.data.hash, day, 1.5);
    const guardrail = await ok(server, 'guardrails.create', { name: 'kept across rotation' });
    await ok(server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [created.data.hash] });

    const { data, key } = await rotated(created.data.hash);
    expect(key).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
    expect(key).not.toBe(created.key);
    expect(data).toEqual({
      ...created.data,
      label: `sk-sy-v1-${key.slice(9, 12)}...${key.slice(-3)}`,
      usage: 1.5,
      usage_daily: 1.5,
      usage_weekly: expect.any(Number),
      usage_monthly: 1.5,
      limit_remaining: 8.5,
      updated_at: expect.any(String),
    });
    expect(data.hash).toBe(created.data.hash);
    expect(data.hash).not.toBe(hashApiKey(key));
    // The same key: GET /keys/{hash} finds it by its stable hash, and its guardrail assignment stayed.
    expect((await rest(server, `/keys/${created.data.hash}`)).body).toMatchObject({ data: { hash: created.data.hash, label: data.label } });
    const assignments = await ok(server, 'guardrails.keyAssignments', { id: guardrail.data.id }, { query: true });
    expect(assignments.data.map((a) => a.key_hash)).toContain(created.data.hash);
    // The new secret authenticates as the same key; the old one (no grace) no more.
    const res = await rest(server, '/key', { key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ data: { label: data.label, usage: 1.5, limit: 10 } });
    expect(await status(server, created.key)).toBe(401);
    // Spend recorded by the stable hash (generations.record) lands on the key.
    await ok(server, 'generations.record', { id: `gen-rotated-${Date.now()}`, api_key_hash: created.data.hash, model: 'openai/gpt-4o', usage: 0.5 });
    await until(async () => ((await rest(server, '/key', { key })).body as { data: { usage: number } }).data.usage === 2);
  });

  it('with a grace period: both secrets work until it ends, then only the new one (the clock moved past it)', async () => {
    const created = await ok(server, 'keys.create', { name: 'graceful' });
    const now = new Date();
    server.setNow(now);
    try {
      const { key } = await rotated(created.data.hash, { grace_period_seconds: 3600 });
      expect(await status(server, created.key)).toBe(200);
      expect(await status(server, key)).toBe(200);
      server.setNow(new Date(now.getTime() + 3599_000));
      expect(await status(server, created.key)).toBe(200);
      server.setNow(new Date(now.getTime() + 3600_000));
      expect(await status(server, created.key)).toBe(401);
      expect(await status(server, key)).toBe(200);
      // routing.authorize refuses the old secret's hash as expired, and takes the new one's.
      const refused = await trpc(server, 'routing.authorize', { api_key_hash: hashApiKey(created.key), model: 'openai/gpt-4o' });
      expect(refused.data).toMatchObject({ data: { allowed: false, status: 401, code: 'key_expired' } });
      const allowed = await trpc(server, 'routing.authorize', { api_key_hash: hashApiKey(key), model: 'openai/gpt-4o' });
      // (This server's catalog is empty: the key passes, the model is then not found.)
      expect(allowed.data).toMatchObject({ data: { allowed: false, status: 404, code: 'model_not_found' } });
    } finally {
      server.setNow(null);
    }
  });

  it('a second rotation never lengthens the first grace period; keys.secrets lists every secret, newest first, with its last use', async () => {
    const created = await ok(server, 'keys.create', { name: 'twice' });
    const first = await rotated(created.data.hash, { grace_period_seconds: 600 });
    const second = await rotated(created.data.hash, { grace_period_seconds: 604800 });
    // Use the middle secret (noted in memory, written within KEY_USES_FLUSH_MS).
    expect(await status(server, first.key)).toBe(200);
    const secrets = async () => KeySecretsOutputSchema.parse(await ok(server, 'keys.secrets', { hash: created.data.hash }, { query: true })).data;
    await until(async () => (await secrets())[1]?.last_used_at !== null, { what: "the middle secret's last use" });
    const list = await secrets();
    expect(list.map((s) => s.hash_prefix)).toEqual([second.key, first.key, created.key].map((k) => hashApiKey(k).slice(0, 12)));
    expect(list.map((s) => s.current)).toEqual([true, false, false]);
    expect(list[0]!.expires_at).toBeNull();
    const firstEnd = new Date(list[2]!.expires_at!).getTime();
    const middleEnd = new Date(list[1]!.expires_at!).getTime();
    // The original secret keeps its 600 s end; the middle one ends a week after the second rotation.
    expect(middleEnd - firstEnd).toBeGreaterThan(604800_000 - 600_000 - 60_000);
    expect(new Date(list[1]!.last_used_at!).getTime()).toBeLessThanOrEqual(Date.now());
    expect(JSON.stringify(list)).not.toContain(first.key);
  });

  it('a management key rotating itself without grace: its old secret is refused at once, the new one manages', async () => {
    const own = await ok(server, 'keys.create', { name: 'self-rotating', is_management_key: true });
    const res = await rotate(own.data.hash, { grace_period_seconds: 0 }, own.key);
    expect(res.status).toBe(200);
    const { key } = Rotated.parse(res.body);
    expect(await status(server, own.key)).toBe(401);
    expect((await rest(server, '/keys', { key })).status).toBe(200);
  });

  it('400 for a grace period out of range or not an integer, a malformed body or hash', async () => {
    const { hash } = await createRegularKey(server);
    for (const grace of [-1, 604801, 1.5, '60', null, true]) expectEnvelope(await rotate(hash, { grace_period_seconds: grace }), 400);
    expectEnvelope(await rest(server, `/keys/${hash}/rotate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1' }), 400);
    expectEnvelope(await rotate('ABC', {}), 400);
    // Nothing changed: the key still has its one secret.
    expect(await server.db.apiKeySecret.count({ where: { api_key: { hash } } })).toBe(1);
  });

  it("404 for an unknown, a deleted or another organization's key (nothing rotated); 401 without a key; 403 for a regular or platform key", async () => {
    expectEnvelope(await rotate('0'.repeat(64)), 404);
    const deleted = await createRegularKey(server);
    await ok(server, 'keys.delete', { hash: deleted.hash });
    expectEnvelope(await rotate(deleted.hash), 404);
    const theirs = await createRegularKey(server, undefined, other.managementKey);
    expectEnvelope(await rotate(theirs.hash), 404);
    expect(await status(server, theirs.key)).toBe(200);
    expect((await trpc(server, 'keys.secrets', { hash: theirs.hash }, { query: true })).status).toBe(404);

    const mine = await createRegularKey(server);
    expectEnvelope(await rotate(mine.hash, undefined, null), 401);
    expectEnvelope(await rotate(mine.hash, undefined, mine.key), 403);
    expectEnvelope(await rotate(mine.hash, undefined, server.platformKey), 403);
    expect((await trpc(server, 'keys.secrets', { hash: mine.hash }, { key: mine.key, query: true })).status).toBe(403);
    expect(await status(server, mine.key)).toBe(200);
    expect(await server.db.apiKeySecret.count({ where: { api_key: { hash: { in: [mine.hash, theirs.hash, deleted.hash] } } } })).toBe(3);
  });
});

describe('rotation on two replicas (each keeps key rows for 60 s)', () => {
  it('without grace: the old secret, read by both, is refused on the other replica as soon as the announcement arrives', async () => {
    for (let round = 0; round < 5; round++) {
      const created = await ok(server, 'keys.create', { name: `replicated ${round}` });
      for (const via of [server, replica]) expect(await status(via, created.key)).toBe(200);
      const [writer, reader] = round % 2 ? [server, replica] : [replica, server];
      const res = await writer.request(`/api/v1/keys/${created.data.hash}/rotate`, { method: 'POST' });
      expect(res.status).toBe(200);
      const { key } = Rotated.parse(await res.json());
      expect(await status(writer, created.key)).toBe(401);
      await until(async () => (await status(reader, created.key)) === 401, { everyMs: 2, what: 'the other replica refusing the old secret' });
      for (const via of [server, replica]) expect(await status(via, key)).toBe(200);
    }
  });

  it('with a grace period: both replicas take the old secret until it ends, then refuse it', async () => {
    const created = await ok(server, 'keys.create', { name: 'replicated grace' });
    for (const via of [server, replica]) expect(await status(via, created.key)).toBe(200);
    // The grace period ends 2 s after the server's clock read the rotation: not before 2 s after it was sent.
    const ends = Date.now() + 2000;
    const res = await replica.request(`/api/v1/keys/${created.data.hash}/rotate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grace_period_seconds: 2 }),
    });
    expect(res.status).toBe(200);
    const { key } = Rotated.parse(await res.json());
    // Within the grace period (checked while it surely lasts), both take both secrets.
    for (const via of [server, replica]) {
      expect(await status(via, key)).toBe(200);
      if (Date.now() < ends - 500) expect(await status(via, created.key)).toBe(200);
    }
    for (const via of [server, replica]) await until(async () => (await status(via, created.key)) === 401, { what: 'the grace period ending' });
    expect(Date.now()).toBeGreaterThanOrEqual(ends - 5);
    for (const via of [server, replica]) expect(await status(via, key)).toBe(200);
  });
});
