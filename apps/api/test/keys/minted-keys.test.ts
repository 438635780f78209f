// Keys minted through an authorization code (D10/D11) on the real server: they spend from their
// maker's limit (routing.authorize holds floor(R / c) across the maker and its minted keys together),
// and they never outlive their maker (its disabling, deletion or expiry ends them, on every replica).
// Keys a management key makes with POST /keys are not minted: deleting it ends none of them.
import { createHash, randomUUID } from 'node:crypto';
import { ExchangedKeySchema } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, demoCatalog } from '../fixtures-catalog.js';
import { inProcessReplica, type InProcessReplica } from '../fixtures-replica.js';
import { until, useServer } from '../fixtures.js';
import { ok, trpc } from '../fixtures-trpc.js';

const env = useServer();
const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');
const app = () => `https://minted-${randomUUID().slice(0, 8)}.example`;

let replica: InProcessReplica;
beforeAll(async () => {
  await ok(env.server, 'models.import', demoCatalog);
  await ok(env.server, 'generations.addCredits', { organization_id: env.server.organizationId, amount: 1000 });
  replica = await inProcessReplica(env.server);
});
afterAll(async () => {
  await replica?.close();
});

async function post(path: string, body: unknown, key: string | null) {
  const res = await env.server.request(`/api/v1${path}`, { method: 'POST', key, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: res.status, body: (await res.json()) as unknown };
}

/** A key minted by `maker` through D10 and D11 (with `fields` given to D10). */
async function mint(maker: string, fields: Record<string, unknown> = {}): Promise<{ key: string; hash: string }> {
  const made = await post('/auth/keys/code', { callback_url: app(), ...fields }, maker);
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const exchanged = await post('/auth/keys', { code: (made.body as { data: { id: string } }).data.id }, null);
  expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
  const { key } = ExchangedKeySchema.parse(exchanged.body);
  return { key, hash: hashOf(key) };
}

const authorize = (hash: string, cost: number, via: { platformKey: string; managementKey: string } & Parameters<typeof ok>[0] = env.server) =>
  ok(via, 'routing.authorize', { api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: cost });

const status = async (secret: string, via: Parameters<typeof ok>[0] = env.server) => (await via.request('/api/v1/key', { key: secret })).status;

describe('money does not multiply', () => {
  it('three codes of a key limited to 1 USD: concurrent reservations across the maker and its minted keys hold exactly floor(R / c)', async () => {
    const maker = await createKey(env.server, { name: 'limited maker', limit: 1 });
    const minted = [await mint(maker.key), await mint(maker.key), await mint(maker.key)];
    // Each minted key copied the maker's remaining limit; spending it counts toward the maker's.
    const hashes = [maker.hash, ...minted.map((m) => m.hash)];
    const cost = 0.07;
    const decisions = await Promise.all(Array.from({ length: 60 }, (_, i) => authorize(hashes[i % hashes.length]!, cost, i % 2 ? replica : env.server)));
    const allowed = decisions.filter((d) => d.data.allowed);
    expect(allowed).toHaveLength(Math.floor(1 / cost));
    const refused = decisions.find((d) => !d.data.allowed);
    expect(refused?.data).toMatchObject({ allowed: false, code: 'key_limit' });
  });

  it("a minted key's refusal names its maker's limit, and a maker without a limit limits nothing", async () => {
    const maker = await createKey(env.server, { name: 'small maker', limit: 0.1 });
    const minted = await mint(maker.key);
    expect((await authorize(maker.hash, 0.1)).data.allowed).toBe(true);
    const refused = (await authorize(minted.hash, 0.05)).data;
    expect(refused).toMatchObject({ allowed: false, code: 'key_limit' });
    expect(refused.allowed ? '' : refused.message).toContain('the key that minted this key');

    // An unlimited maker's minted key is held only by its own limit.
    const unlimited = await createKey(env.server, { name: 'unlimited maker' });
    const free = await mint(unlimited.key, { limit: 0.2 });
    const decision = (await authorize(free.hash, 0.15)).data;
    expect(decision.allowed).toBe(true);
    expect(decision.allowed && decision.remaining.map((r) => r.limit)).not.toContain('makers');
    expect((await authorize(free.hash, 0.15)).data).toMatchObject({ allowed: false, code: 'key_limit' });
  });

  it('a key minted by a minted key spends from every limit above it', async () => {
    const root = await createKey(env.server, { name: 'root', limit: 0.5 });
    const middle = await mint(root.key, { limit: 0.4 });
    const leaf = await mint(middle.key);
    expect((await authorize(root.hash, 0.2)).data.allowed).toBe(true);
    // 0.3 left at the root: the leaf (0.4 of its own, 0.4 of its maker's) gets 0.3, no more.
    expect((await authorize(leaf.hash, 0.3)).data.allowed).toBe(true);
    expect((await authorize(leaf.hash, 0.01)).data).toMatchObject({ allowed: false, code: 'key_limit' });
    expect((await authorize(middle.hash, 0.01)).data).toMatchObject({ allowed: false, code: 'key_limit' });
  });
});

describe('a minted key never outlives its maker', () => {
  it('disabling the maker ends its minted keys on every replica, and re-enabling it does not bring them back', async () => {
    const maker = await createKey(env.server, { name: 'disabled maker' });
    const minted = await mint(maker.key);
    const grandchild = await mint(minted.key);
    for (const via of [env.server, replica]) expect(await status(minted.key, via)).toBe(200);
    expect(await status(grandchild.key, replica)).toBe(200);
    await ok(env.server, 'keys.update', { hash: maker.hash, disabled: true });
    await until(async () => (await status(minted.key, replica)) === 401 && (await status(grandchild.key, replica)) === 401, {
      what: 'the replica to refuse the minted keys',
    });
    expect(await status(minted.key)).toBe(401);
    expect((await authorize(minted.hash, 0, replica)).data).toMatchObject({ allowed: false, code: 'key_disabled' });
    await ok(env.server, 'keys.update', { hash: maker.hash, disabled: false });
    expect(await status(maker.key)).toBe(200);
    expect(await status(minted.key)).toBe(401);
  });

  it('deleting the maker deletes its minted keys on every replica', async () => {
    const maker = await createKey(env.server, { name: 'deleted maker' });
    const minted = await mint(maker.key);
    expect(await status(minted.key, replica)).toBe(200);
    await ok(env.server, 'keys.delete', { hash: maker.hash });
    await until(async () => (await status(minted.key, replica)) === 401, { what: 'the replica to refuse the minted key' });
    expect((await authorize(minted.hash, 0)).data).toMatchObject({ allowed: false, code: 'key_deleted' });
  });

  it("a minted key expires no later than its maker, also when the maker's expiry is brought forward", async () => {
    const makerExpiry = new Date(Date.now() + 3 * 86_400_000);
    const maker = await createKey(env.server, { name: 'expiring maker', expires_at: makerExpiry.toISOString() });
    const later = await mint(maker.key, { expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() });
    const none = await mint(maker.key);
    for (const m of [later, none]) {
      expect((await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: m.hash } })).expires_at?.toISOString()).toBe(makerExpiry.toISOString());
    }
    // Brought forward to a moment already past: the minted keys end with it, on the replica too.
    const past = new Date(Date.now() - 1000);
    await env.server.db.apiKey.update({ where: { hash: maker.hash }, data: { expires_at: past } });
    await until(async () => (await status(none.key, replica)) === 401, { what: 'the replica to refuse the expired minted key' });
    expect((await authorize(later.hash, 0)).data).toMatchObject({ allowed: false, code: 'key_expired' });
  });

  it('keys a management key made with POST /keys outlive its deletion', async () => {
    const admin = await createKey(env.server, { name: 'admin', is_management_key: true });
    const made = await trpc(env.server, 'keys.create', { name: 'made by the admin' }, { key: admin.key });
    expect(made.status).toBe(200);
    await ok(env.server, 'keys.delete', { hash: admin.hash });
    expect(await status(made.data.key)).toBe(200);
    expect((await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: made.data.data.hash } })).minted_by_key_id).toBeNull();
  });

  it('the exchange records the maker, in the row and in the audit entry', async () => {
    const maker = await createKey(env.server, { name: 'recorded maker' });
    const minted = await mint(maker.key);
    const row = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: minted.hash }, include: { minted_by: true } });
    expect(row.minted_by?.hash).toBe(maker.hash);
    const entry = await env.server.db.auditLog.findFirstOrThrow({ where: { action: 'auth.exchangeCode', target_id: minted.hash } });
    expect((entry.changes as { after: { minted_by: string } }).after.minted_by).toBe(maker.hash);
  });
});
