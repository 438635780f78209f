// routing.authorize and routing.release on the real server and PostgreSQL: every rule allowed,
// refused with its status, code and message, and at its boundary; reservations exact under
// concurrency; recording settles, release frees, expiry ends what neither did.
import { randomUUID } from 'node:crypto';
import { RoutingAuthorizeOutputSchema, RoutingReleaseOutputSchema } from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { SERVER_ACTOR } from '../../src/access/callers.js';
import { hashApiKey } from '../../src/access/key-format.js';
import { expireReservations } from '../../src/modules/routing/routing.service.js';
import { REFUSAL_ORDER } from '@switchyard/rules';
import { defaultGuardrailId } from '../../src/modules/guardrails/default-guardrail.js';
import { addUsage, createOrganization, until, useServer } from '../fixtures.js';
import { createKey, generationId, importDemoCatalog, record } from '../fixtures-catalog.js';
import { ok, trpcRaw } from '../fixtures-trpc.js';

const env = useServer('Routing neighbour');

beforeAll(async () => {
  await importDemoCatalog(env.server);
  await ok(env.server, 'generations.addCredits', { organization_id: env.server.organizationId, amount: 1000 });
});

type Input = { api_key_hash: string; model: string; estimated_cost?: number; region?: 'global' | 'europe' | 'us'; provider?: Record<string, unknown> };

async function authorize(input: Input) {
  const { status, data, error } = await trpcRaw(env.server, 'routing.authorize', input);
  expect(status, JSON.stringify(error)).toBe(200);
  return RoutingAuthorizeOutputSchema.parse(data).data;
}

async function refusedWith(input: Input, status: number, code: string) {
  const decision = await authorize(input);
  expect(decision, JSON.stringify(decision)).toMatchObject({ allowed: false, status, code });
  if (decision.allowed) throw new Error('allowed');
  expect(decision.message.length).toBeGreaterThan(20);
  return decision;
}

async function allowed(input: Input) {
  const decision = await authorize(input);
  if (!decision.allowed) throw new Error(`refused: ${JSON.stringify(decision)}`);
  return decision;
}

const today = () => new Date().toISOString().slice(0, 10);

async function newKey(input: Record<string, unknown> = {}) {
  return createKey(env.server, input);
}

describe('routing.authorize: who may ask', () => {
  it('401 without a key, 403 for a regular or a management key, 200 for a platform key', async () => {
    const { hash, key } = await newKey();
    const input = { api_key_hash: hash, model: 'openai/gpt-4o' };
    expect((await trpcRaw(env.server, 'routing.authorize', input, { key: null })).status).toBe(401);
    expect((await trpcRaw(env.server, 'routing.authorize', input, { key })).status).toBe(403);
    expect((await trpcRaw(env.server, 'routing.authorize', input, { key: env.server.managementKey })).status).toBe(403);
    expect((await trpcRaw(env.server, 'routing.release', { reservation_id: randomUUID() }, { key })).status).toBe(403);
    expect((await trpcRaw(env.server, 'routing.authorize', input)).status).toBe(200);
  });

  it('400 for a malformed input, in the error envelope', async () => {
    const bad = await trpcRaw(env.server, 'routing.authorize', { api_key_hash: 'nope', model: 'openai/gpt-4o' });
    expect(bad.status).toBe(400);
    expect((await trpcRaw(env.server, 'routing.authorize', { api_key_hash: hashApiKey('x'), model: 'm', estimated_cost: -1 })).status).toBe(400);
    expect((await trpcRaw(env.server, 'routing.release', { reservation_id: 'not-a-uuid' })).status).toBe(400);
  });
});

describe('an allowed request', () => {
  it('answers the canonical model, its endpoints in order, and every limit that applied', async () => {
    const { hash } = await newKey({ limit: 5, limit_reset: 'monthly' });
    const decision = await allowed({ api_key_hash: hash, model: 'OpenAI/GPT-4o' });
    expect(decision.model).toBe('openai/gpt-4o');
    expect(decision.reservation_id).toBeNull();
    expect(decision.endpoints.length).toBeGreaterThan(0);
    expect(decision.endpoints[0]).toMatchObject({ provider: 'openai', byok: null });
    const limits = decision.remaining.map((r) => r.limit);
    expect(limits).toEqual(['key', 'credits']);
    expect(decision.remaining[0]).toMatchObject({ limit: 'key', remaining: 5 });
    expect(new Date(decision.remaining[0]!.resets_at!).getUTCDate()).toBe(1);
  });
});

describe('401: the key and its organization', () => {
  it('refuses an unknown, disabled, expired or deleted key, and a key of a disabled organization', async () => {
    await refusedWith({ api_key_hash: hashApiKey('sk-sy-v1-unknown'), model: 'openai/gpt-4o' }, 401, 'key_unknown');
    const disabled = await newKey();
    await ok(env.server, 'keys.update', { hash: disabled.hash, disabled: true });
    await refusedWith({ api_key_hash: disabled.hash, model: 'openai/gpt-4o' }, 401, 'key_disabled');
    const expired = await newKey();
    await env.server.db.apiKey.update({ where: { hash: expired.hash }, data: { expires_at: new Date(Date.now() - 1000) } });
    await refusedWith({ api_key_hash: expired.hash, model: 'openai/gpt-4o' }, 401, 'key_expired');
    const deleted = await newKey();
    await ok(env.server, 'keys.delete', { hash: deleted.hash });
    await refusedWith({ api_key_hash: deleted.hash, model: 'openai/gpt-4o' }, 401, 'key_deleted');
    // A platform key is not a tenant's key.
    await refusedWith({ api_key_hash: hashApiKey(env.server.platformKey), model: 'openai/gpt-4o' }, 401, 'key_unknown');
    const doomed = await createOrganization(env.server.db, 'Disabled org');
    await ok(env.server, 'organizations.disable', { organization_id: doomed.organizationId });
    await refusedWith({ api_key_hash: hashApiKey(doomed.managementKey), model: 'openai/gpt-4o' }, 401, 'organization_disabled');
  });
});

describe('404 and 403: the model and the guardrails', () => {
  it('404 for a model the catalog does not know', async () => {
    const { hash } = await newKey();
    const refusal = await refusedWith({ api_key_hash: hash, model: 'acme/none' }, 404, 'model_not_found');
    expect(refusal.message).toContain('acme/none');
  });

  it("403 when a guardrail assigned to the key keeps the model out; the workspace's default guardrail governs keys with no assignment", async () => {
    const { hash } = await newKey();
    const guardrail = await ok(env.server, 'guardrails.create', { name: 'only mini', allowed_models: ['openai/gpt-4o-mini'] });
    await ok(env.server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [hash] });
    const refusal = await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o' }, 403, 'model_not_allowed');
    expect(refusal.message).toContain(guardrail.data.id);
    await allowed({ api_key_hash: hash, model: 'openai/gpt-4o-mini' });

    // A second workspace: its default guardrail ignores a model, which every unassigned key there loses.
    const workspace = await ok(env.server, 'workspaces.create', { slug: `routing-${randomUUID().slice(0, 8)}`, name: 'Routing' });
    const inside = await newKey({ workspace_id: workspace.data.id });
    await allowed({ api_key_hash: inside.hash, model: 'openai/gpt-4o' });
    await ok(env.server, 'guardrails.update', { id: defaultGuardrailId(workspace.data.id), ignored_models: ['openai/gpt-4o'] });
    await refusedWith({ api_key_hash: inside.hash, model: 'openai/gpt-4o' }, 403, 'model_not_allowed');
    // GET /model asks the same policy.
    expect((await env.server.request('/api/v1/model/openai/gpt-4o', { key: inside.key })).status).toBe(403);
    // A key assigned to another guardrail of the workspace is governed by that one instead.
    const own = await ok(env.server, 'guardrails.create', { name: 'open', workspace_id: workspace.data.id });
    const assigned = await newKey({ workspace_id: workspace.data.id });
    await ok(env.server, 'guardrails.assignKeys', { id: own.data.id, key_hashes: [assigned.hash] });
    await allowed({ api_key_hash: assigned.hash, model: 'openai/gpt-4o' });
  });

  it('403 for a region the guardrails do not allow; the request without a region is global', async () => {
    const { hash } = await newKey();
    const guardrail = await ok(env.server, 'guardrails.create', { name: 'eu only', allowed_data_regions: ['europe'] });
    await ok(env.server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [hash] });
    await allowed({ api_key_hash: hash, model: 'openai/gpt-4o', region: 'europe' });
    await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o', region: 'us' }, 403, 'region_not_allowed');
    await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o' }, 403, 'region_not_allowed');
  });

  it('403 when the provider lists or ZDR leave no endpoint; the request filters and orders the rest', async () => {
    const { hash } = await newKey();
    const guardrail = await ok(env.server, 'guardrails.create', { name: 'no openai', ignored_providers: ['openai', 'azure'] });
    await ok(env.server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [hash] });
    await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o' }, 403, 'no_endpoint');

    const other = await newKey();
    await refusedWith({ api_key_hash: other.hash, model: 'openai/gpt-4o', provider: { only: ['azure-nowhere'] } }, 403, 'no_endpoint');
    await refusedWith({ api_key_hash: other.hash, model: 'openai/gpt-4o', provider: { zdr: true } }, 403, 'no_endpoint');
    const zdr = await ok(env.server, 'guardrails.create', { name: 'zdr', enforce_zdr: true });
    await ok(env.server, 'guardrails.assignKeys', { id: zdr.data.id, key_hashes: [other.hash] });
    await refusedWith({ api_key_hash: other.hash, model: 'openai/gpt-4o' }, 403, 'no_endpoint');
    // The catalog marks an endpoint ZDR: it is the one left. Written straight to the table, the change
    // reaches the cached catalog within CACHE_TTL_MS: wait for it.
    await env.server.db.modelEndpoint.updateMany({ where: { model_id: 'anthropic/claude-sonnet-4' }, data: { zdr: true } });
    await until(async () => (await authorize({ api_key_hash: other.hash, model: 'anthropic/claude-sonnet-4' })).allowed, {
      what: 'the ZDR endpoint to reach the cached catalog',
    });
    const zdrAnswer = await allowed({ api_key_hash: other.hash, model: 'anthropic/claude-sonnet-4' });
    expect(zdrAnswer.endpoints.every((e) => e.zdr)).toBe(true);
  });
});

describe('BYOK credentials', () => {
  it("route first through the workspace's own key, whose secret only this answer carries; BYOK-only drops the shared capacity", async () => {
    const workspace = await ok(env.server, 'workspaces.create', { slug: `byok-${randomUUID().slice(0, 8)}`, name: 'BYOK' });
    const { hash } = await newKey({ workspace_id: workspace.data.id });
    const secret = `sk-provider-${randomUUID()}`;
    const credential = await ok(env.server, 'byok.create', { provider: 'openai', key: secret, workspace_id: workspace.data.id });
    const decision = await allowed({ api_key_hash: hash, model: 'openai/gpt-4o' });
    expect(decision.endpoints[0]).toMatchObject({ provider: 'openai', byok: { id: credential.data.id, secret } });
    expect(decision.endpoints.some((e) => e.provider === 'openai' && e.byok === null)).toBe(true);
    // The secret is in no log.
    expect(JSON.stringify(env.server.logs)).not.toContain(secret);

    // A write reaches the routing cache through its announcement (LISTEN/NOTIFY), not in the
    // write's own request: wait for it.
    const openaiRoutes = async () =>
      (await allowed({ api_key_hash: hash, model: 'openai/gpt-4o' })).endpoints.filter((e) => e.provider === 'openai').map((e) => e.byok?.id ?? null);
    await ok(env.server, 'byok.update', { id: credential.data.id, is_byok_only: true });
    await until(async () => JSON.stringify(await openaiRoutes()) === JSON.stringify([credential.data.id]), { what: 'BYOK-only to drop the shared capacity' });

    // Restricted to other keys: this key gets the shared capacity again.
    const elsewhere = await newKey({ workspace_id: workspace.data.id });
    await ok(env.server, 'byok.update', { id: credential.data.id, allowed_api_key_hashes: [elsewhere.hash] });
    await until(async () => (await openaiRoutes()).every((id) => id === null), { what: 'the shared capacity for a key the credential no longer serves' });
  });
  it("a credential for every workspace (workspace_id null) serves each workspace's keys after the workspace's own, and no other organization's", async () => {
    const workspace = await ok(env.server, 'workspaces.create', { slug: `all-${randomUUID().slice(0, 8)}`, name: 'Every' });
    const { hash } = await newKey({ workspace_id: workspace.data.id });
    const everywhere = `sk-everywhere-${randomUUID()}`;
    const shared = await ok(env.server, 'byok.create', { provider: 'anthropic', key: everywhere, workspace_id: null, sort_order: 1 });
    const own = await ok(env.server, 'byok.create', { provider: 'anthropic', key: `sk-own-${randomUUID()}`, workspace_id: workspace.data.id });
    try {
      const decision = await allowed({ api_key_hash: hash, model: 'anthropic/claude-sonnet-4' });
      const anthropic = decision.endpoints.filter((e) => e.byok !== null).map((e) => e.byok!.id);
      expect(anthropic).toEqual([own.data.id, shared.data.id]);
      expect(decision.endpoints.find((e) => e.byok?.id === shared.data.id)?.byok?.secret).toBe(everywhere);
      // Another organization's key never sees it.
      await ok(env.server, 'generations.addCredits', { organization_id: env.other.organizationId, amount: 10 });
      const other = await ok(env.server, 'keys.create', { name: 'other org' }, { key: env.other.managementKey });
      const foreign = await allowed({ api_key_hash: other.data.hash, model: 'anthropic/claude-sonnet-4' });
      expect(foreign.endpoints.every((e) => e.byok === null)).toBe(true);
    } finally {
      // The other tests of this file expect no credential outside their own workspaces.
      await ok(env.server, 'byok.delete', { id: shared.data.id });
    }
  });
});

describe('429: the free-model quota', () => {
  it("refuses a key's free-model requests past its daily limit, as GET /key counts them", async () => {
    const { key, hash } = await newKey();
    await env.server.db.apiKey.update({ where: { hash }, data: { free_model_daily_limit: 3 } });
    await addUsage(env.server.db, hash, today(), 0, 0, 2);
    const decision = await allowed({ api_key_hash: hash, model: 'openai/gpt-oss-20b:free' });
    expect(decision.remaining.find((r) => r.limit === 'free:daily')?.remaining).toBe(0);
    await record(env.server, { api_key_hash: hash, model: 'openai/gpt-oss-20b:free' });
    const refusal = await refusedWith({ api_key_hash: hash, model: 'openai/gpt-oss-20b:free' }, 429, 'free_model_daily');
    expect(refusal.retry_after_s).toBeGreaterThan(0);
    const shown = (await (await env.server.request('/api/v1/key', { key })).json()) as { data: { free_model_daily_requests: unknown } };
    expect(shown.data.free_model_daily_requests).toEqual({ used: 3, limit: 3, remaining: 0 });
    // Paid models are not free-model requests.
    await allowed({ api_key_hash: hash, model: 'openai/gpt-4o' });
  });
});

describe('spend limits, at their boundary', () => {
  it("the key's limit in its window: allowed below it, refused at it", async () => {
    const { hash } = await newKey({ limit: 2, limit_reset: 'daily' });
    await addUsage(env.server.db, hash, today(), 1.5);
    await allowed({ api_key_hash: hash, model: 'openai/gpt-4o' });
    // Exactly 0.5 left: a reservation of 0.5 fits, and leaves nothing.
    const held = await allowed({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 0.5 });
    expect(held.reservation_id).not.toBeNull();
    expect(held.remaining.find((r) => r.limit === 'key')?.remaining).toBe(0);
    const refusal = await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 0.01 }, 403, 'key_limit');
    expect(refusal.message).toMatch(/daily spending limit of 2 USD/);
    expect(refusal.retry_after_s).toBeGreaterThan(0);
    // Spend of an earlier day does not count against a daily limit.
    const { hash: yesterdayHash } = await newKey({ limit: 1, limit_reset: 'daily' });
    await addUsage(env.server.db, yesterdayHash, new Date(Date.now() - 86_400_000).toISOString().slice(0, 10), 5);
    await allowed({ api_key_hash: yesterdayHash, model: 'openai/gpt-4o', estimated_cost: 1 });
  });

  it('BYOK spend counts against the key limit only with include_byok_in_limit', async () => {
    const without = await newKey({ limit: 1, limit_reset: 'monthly' });
    const withByok = await newKey({ limit: 1, limit_reset: 'monthly', include_byok_in_limit: true });
    for (const k of [without, withByok]) await addUsage(env.server.db, k.hash, today(), 0.5, 0.5);
    await allowed({ api_key_hash: without.hash, model: 'openai/gpt-4o', estimated_cost: 0.5 });
    await refusedWith({ api_key_hash: withByok.hash, model: 'openai/gpt-4o', estimated_cost: 0.01 }, 403, 'key_limit');
  });

  it("402 once the workspace's budget is spent, over every key of the workspace", async () => {
    const workspace = await ok(env.server, 'workspaces.create', { slug: `budget-${randomUUID().slice(0, 8)}`, name: 'Budget' });
    await ok(env.server, 'budgets.set', { workspace_ref: workspace.data.id, interval: 'lifetime', limit_usd: 3 });
    const one = await newKey({ workspace_id: workspace.data.id });
    const two = await newKey({ workspace_id: workspace.data.id });
    await addUsage(env.server.db, one.hash, today(), 2);
    await allowed({ api_key_hash: two.hash, model: 'openai/gpt-4o', estimated_cost: 1 });
    const refusal = await refusedWith({ api_key_hash: two.hash, model: 'openai/gpt-4o' }, 402, 'budget_exhausted');
    expect(refusal.message).toContain('lifetime budget of 3 USD');
    expect(refusal.retry_after_s).toBeNull();
  });

  it("403 once a guardrail's limit is spent, over every key it covers", async () => {
    const guardrail = await ok(env.server, 'guardrails.create', { name: 'capped', limit_usd: 1, reset_interval: 'weekly' });
    const one = await newKey();
    const two = await newKey();
    await ok(env.server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [one.hash, two.hash] });
    await addUsage(env.server.db, one.hash, today(), 0.75);
    await allowed({ api_key_hash: two.hash, model: 'openai/gpt-4o', estimated_cost: 0.25 });
    await refusedWith({ api_key_hash: two.hash, model: 'openai/gpt-4o', estimated_cost: 0.01 }, 403, 'guardrail_limit');
  });

  it('402 when the credit balance is exhausted, for paid models only', async () => {
    const poor = await createOrganization(env.server.db, 'Poor');
    const hash = hashApiKey(poor.managementKey);
    await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o' }, 402, 'credits_exhausted');
    await allowed({ api_key_hash: hash, model: 'openai/gpt-oss-20b:free' });
    await ok(env.server, 'generations.addCredits', { organization_id: poor.organizationId, amount: 1 });
    await allowed({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 1 });
    await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 0.01 }, 402, 'credits_exhausted');
  });

  it('names the first refusal in the documented order when several apply', async () => {
    const { hash } = await newKey({ limit: 1, limit_reset: 'monthly' });
    await addUsage(env.server.db, hash, today(), 1);
    const guardrail = await ok(env.server, 'guardrails.create', { name: 'nothing', allowed_models: ['openai/o3'] });
    await ok(env.server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [hash] });
    // The model rule comes before the spend limits.
    await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o' }, 403, 'model_not_allowed');
    await refusedWith({ api_key_hash: hash, model: 'openai/o3' }, 403, 'key_limit');
    expect(REFUSAL_ORDER.indexOf('model_not_allowed')).toBeLessThan(REFUSAL_ORDER.indexOf('key_limit'));
    expect(REFUSAL_ORDER.slice(0, 5)).toEqual(['key_unknown', 'key_deleted', 'key_disabled', 'key_expired', 'organization_disabled']);
  });
});

describe('reservations', () => {
  it('with R remaining and 50 concurrent reservations of c, exactly floor(R / c) are allowed', async () => {
    const { hash } = await newKey({ limit: 1, limit_reset: 'monthly' });
    const decisions = await Promise.all(Array.from({ length: 50 }, () => authorize({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 0.03 })));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(Math.floor(1 / 0.03));
    expect(decisions.filter((d) => !d.allowed).every((d) => !d.allowed && d.code === 'key_limit')).toBe(true);
    const held = await env.server.db.spendReservation.aggregate({ _sum: { amount: true }, where: { api_key_id: (await keyRow(hash)).id } });
    expect(held._sum.amount?.toString()).toBe('0.99');
  });

  it('recording settles the reservation in the same transaction as the spend; the overshoot is bounded by actual - reserved', async () => {
    const { hash } = await newKey({ limit: 1, limit_reset: 'monthly' });
    const first = await allowed({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 0.6 });
    const second = await allowed({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 0.4 });
    await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 0.01 }, 403, 'key_limit');
    // The first costs more than it held: the limit is overshot by exactly actual - reserved.
    await record(env.server, { api_key_hash: hash, usage: 0.7, reservation_id: first.reservation_id });
    await record(env.server, { api_key_hash: hash, usage: 0.4, reservation_id: second.reservation_id });
    expect(await env.server.db.spendReservation.count({ where: { api_key_id: (await keyRow(hash)).id } })).toBe(0);
    const key = await keyRow(hash);
    expect(key.usage.toNumber() - 1).toBeCloseTo(0.7 - 0.6, 10);
    await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o' }, 403, 'key_limit');
  });

  it('release frees what was held; a second release, or an unknown id, releases nothing', async () => {
    const { hash } = await newKey({ limit: 1, limit_reset: 'monthly' });
    const held = await allowed({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 1 });
    await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 0.5 }, 403, 'key_limit');
    const released = await ok(env.server, 'routing.release', { reservation_id: held.reservation_id! });
    expect(RoutingReleaseOutputSchema.parse(released).data).toEqual({ released: true });
    expect((await ok(env.server, 'routing.release', { reservation_id: held.reservation_id! })).data).toEqual({ released: false });
    await allowed({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 1 });
  });

  it('an expired reservation counts against nothing, and the sweep deletes it', async () => {
    const { hash } = await newKey({ limit: 1, limit_reset: 'monthly' });
    await allowed({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 1 });
    await refusedWith({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 1 }, 403, 'key_limit');
    const key = await keyRow(hash);
    await env.server.db.spendReservation.updateMany({ where: { api_key_id: key.id }, data: { expires_at: new Date(Date.now() - 1) } });
    await allowed({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 1 });
    await env.server.db.spendReservation.updateMany({ where: { api_key_id: key.id }, data: { expires_at: new Date(Date.now() - 1) } });
    expect(await expireReservations({ db: env.server.db, now: () => new Date() }, SERVER_ACTOR)).toBeGreaterThanOrEqual(2);
    expect(await env.server.db.spendReservation.count({ where: { api_key_id: key.id } })).toBe(0);
  });

  it("another organization's reservations and spend never count against this one's limits", async () => {
    const { hash } = await newKey({ limit: 1, limit_reset: 'monthly' });
    await ok(env.server, 'generations.addCredits', { organization_id: env.other.organizationId, amount: 10 });
    const theirs = hashApiKey(env.other.managementKey);
    await allowed({ api_key_hash: theirs, model: 'openai/gpt-4o', estimated_cost: 5 });
    await record(env.server, { api_key_hash: theirs, usage: 3, id: generationId() });
    await allowed({ api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: 1 });
  });
});

async function keyRow(hash: string) {
  return env.server.db.apiKey.findUniqueOrThrow({ where: { hash } });
}
