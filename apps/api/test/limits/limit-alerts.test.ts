// limit.threshold_crossed and credits.low: emitted by the recorder in the batch's
// own transaction, once per threshold, limit and window, however many recordings run at once and on
// however many replicas; a new window fires again; a recording that rolls back emits nothing.
import { randomUUID } from 'node:crypto';
import { OrganizationAlertsOutputSchema } from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { CREDITS_LOW, LIMIT_THRESHOLD_CROSSED } from '../../src/modules/events/limit-alerts.js';
import { hashApiKey } from '../../src/access/key-format.js';
import { defaultGuardrailId } from '../../src/modules/guardrails/default-guardrail.js';
import { createOrganization, useServer } from '../fixtures.js';
import { createKey, createMember, generationId, importDemoCatalog, record } from '../fixtures-catalog.js';
import { inProcessReplica } from '../fixtures-replica.js';
import { ok, trpcRaw } from '../fixtures-trpc.js';

const env = useServer('Alerts neighbour');
const NOW = new Date(Date.UTC(2031, 4, 14, 12)); // a Wednesday in May 2031

beforeAll(async () => {
  env.server.setNow(NOW);
  await importDemoCatalog(env.server);
  await ok(env.server, 'generations.addCredits', { organization_id: env.server.organizationId, amount: 1000 });
});

interface Crossing {
  version: number;
  kind: string;
  id: string;
  threshold_percent: number;
  limit: number;
  spent: number;
  window: { interval: string; start: string | null; end: string | null };
  include_byok: boolean;
  organization_id: string;
  workspace_id: string;
}

/** The crossings of one limit, in threshold order. */
async function crossingsOf(id: string) {
  const events = await env.server.db.event.findMany({ where: { type: LIMIT_THRESHOLD_CROSSED, cause: { contains: `:${id}:` } } });
  return events
    .map((e) => ({ ...e, payload: e.payload as unknown as Crossing }))
    .sort((a, b) => (a.payload.window.start ?? '').localeCompare(b.payload.window.start ?? '') || a.payload.threshold_percent - b.payload.threshold_percent);
}

const percents = async (id: string) => (await crossingsOf(id)).map((e) => e.payload.threshold_percent);

async function keyId(hash: string) {
  return (await env.server.db.apiKey.findUniqueOrThrow({ where: { hash } })).id;
}

describe('limit.threshold_crossed', () => {
  it("fires at 50, 80 and 100 percent of a key's limit, once each, with the versioned payload", async () => {
    const { hash } = await createKey(env.server, { name: 'limited', limit: 10, limit_reset: 'monthly' });
    const id = await keyId(hash);
    await record(env.server, { api_key_hash: hash, usage: 4 });
    expect(await percents(id)).toEqual([]);
    await record(env.server, { api_key_hash: hash, usage: 1 }); // exactly 50 percent
    expect(await percents(id)).toEqual([50]);
    await record(env.server, { api_key_hash: hash, usage: 3.5 });
    expect(await percents(id)).toEqual([50, 80]);
    await record(env.server, { api_key_hash: hash, usage: 0.25 });
    expect(await percents(id)).toEqual([50, 80]);
    await record(env.server, { api_key_hash: hash, usage: 2 }); // 10.75: past the limit (settling can overshoot)
    await record(env.server, { api_key_hash: hash, usage: 1 });
    const events = await crossingsOf(id);
    expect(events.map((e) => e.payload.threshold_percent)).toEqual([50, 80, 100]);
    const key = await env.server.db.apiKey.findUniqueOrThrow({ where: { id } });
    expect(events[0]).toMatchObject({ organization_id: env.server.organizationId, workspace_id: key.workspace_id });
    expect(events[0]!.cause).toBe(`${LIMIT_THRESHOLD_CROSSED}:key:${id}:2031-05-01T00:00:00.000Z:10:50`);
    expect(events[2]!.payload).toEqual({
      version: 1,
      kind: 'key',
      id,
      api_key: { id, hash, hash_prefix: hash.slice(0, 12), name: 'limited' },
      threshold_percent: 100,
      limit: 10,
      spent: 10.75,
      window: { interval: 'monthly', start: '2031-05-01T00:00:00.000Z', end: '2031-06-01T00:00:00.000Z' },
      include_byok: false,
      organization_id: env.server.organizationId,
      workspace_id: key.workspace_id,
    });
  });

  it('a lifetime limit has no window; a jump past several thresholds fires each of them', async () => {
    const { hash } = await createKey(env.server, { limit: 2 });
    const id = await keyId(hash);
    await record(env.server, { api_key_hash: hash, usage: 1.7 });
    const events = await crossingsOf(id);
    expect(events.map((e) => e.payload.threshold_percent)).toEqual([50, 80]);
    expect(events[0]!.payload.window).toEqual({ interval: 'lifetime', start: null, end: null });
    expect(events[0]!.cause).toBe(`${LIMIT_THRESHOLD_CROSSED}:key:${id}:lifetime:2:50`);
  });

  it('counts BYOK spend as the limit says (include_byok_in_limit)', async () => {
    const without = await createKey(env.server, { limit: 1, limit_reset: 'daily' });
    const withByok = await createKey(env.server, { limit: 1, limit_reset: 'daily', include_byok_in_limit: true });
    for (const { hash } of [without, withByok]) {
      await record(env.server, { api_key_hash: hash, is_byok: true, usage: 0, upstream_inference_cost: 0.9 });
    }
    expect(await percents(await keyId(without.hash))).toEqual([]);
    expect(await percents(await keyId(withByok.hash))).toEqual([50, 80]);
  });

  it("fires for a workspace budget and a guardrail's limit over all the keys they cover, in that workspace", async () => {
    const workspace = await ok(env.server, 'workspaces.create', { slug: `alerts-${randomUUID().slice(0, 8)}`, name: 'Alerts' });
    const budget = await ok(env.server, 'budgets.set', { workspace_ref: workspace.data.id, interval: 'weekly', limit_usd: 4 });
    const guardrail = await ok(env.server, 'guardrails.create', { name: 'capped', workspace_id: workspace.data.id, limit_usd: 2, reset_interval: 'daily' });
    const one = await createKey(env.server, { workspace_id: workspace.data.id });
    const two = await createKey(env.server, { workspace_id: workspace.data.id });
    const three = await createKey(env.server, { workspace_id: workspace.data.id });
    await ok(env.server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [one.hash, two.hash] });
    await record(env.server, { api_key_hash: one.hash, usage: 0.6 });
    await record(env.server, { api_key_hash: two.hash, usage: 0.6 });
    expect(await percents(guardrail.data.id)).toEqual([50]);
    // Not covered by the guardrail: counts for the budget only.
    await record(env.server, { api_key_hash: three.hash, usage: 2 });
    expect(await percents(guardrail.data.id)).toEqual([50]);
    const budgetId = (await env.server.db.budget.findFirstOrThrow({ where: { workspace_id: workspace.data.id } })).id;
    expect(await percents(budgetId)).toEqual([50, 80]);
    const [crossing] = await crossingsOf(budgetId);
    expect(crossing).toMatchObject({ workspace_id: workspace.data.id });
    expect(crossing!.payload).toMatchObject({
      kind: 'budget',
      api_key: null,
      limit: 4,
      window: { interval: 'weekly', start: '2031-05-12T00:00:00.000Z', end: '2031-05-19T00:00:00.000Z' },
    });
    expect(budget.data).toBeDefined();
    const [byGuardrail] = await crossingsOf(guardrail.data.id);
    expect(byGuardrail!.payload).toMatchObject({ kind: 'guardrail', api_key: null, limit: 2, spent: 1.2, workspace_id: workspace.data.id });
  });

  it("a guardrail assigned to a member covers that member's keys; another guardrail of the workspace is not touched", async () => {
    const member = await createMember(env.server.db, env.server.organizationId);
    const mine = await ok(env.server, 'guardrails.create', { name: 'member cap', limit_usd: 1, reset_interval: 'weekly' });
    const unrelated = await ok(env.server, 'guardrails.create', { name: 'unrelated cap', limit_usd: 1, reset_interval: 'weekly' });
    await ok(env.server, 'guardrails.assignMembers', { id: mine.data.id, member_user_ids: [member.userId] });
    await record(env.server, { api_key_hash: member.hash, usage: 0.9 });
    expect(await percents(mine.data.id)).toEqual([50, 80]);
    expect(await percents(unrelated.data.id)).toEqual([]);
  });

  it("a workspace's default guardrail covers its keys without an assignment", async () => {
    const workspace = await ok(env.server, 'workspaces.create', { slug: `default-${randomUUID().slice(0, 8)}`, name: 'Default guardrail' });
    const id = defaultGuardrailId(workspace.data.id);
    await ok(env.server, 'guardrails.update', { id, limit_usd: 1, reset_interval: 'monthly' });
    const { hash } = await createKey(env.server, { workspace_id: workspace.data.id });
    await record(env.server, { api_key_hash: hash, usage: 0.8 });
    expect(await percents(id)).toEqual([50, 80]);
  });

  it('many concurrent recordings cross each threshold once', async () => {
    const workspace = await ok(env.server, 'workspaces.create', { slug: `busy-${randomUUID().slice(0, 8)}`, name: 'Busy' });
    await ok(env.server, 'budgets.set', { workspace_ref: workspace.data.id, interval: 'monthly', limit_usd: 10 });
    const budgetId = (await env.server.db.budget.findFirstOrThrow({ where: { workspace_id: workspace.data.id } })).id;
    const keys = await Promise.all([1, 2, 3, 4].map(() => createKey(env.server, { workspace_id: workspace.data.id, limit: 5, limit_reset: 'monthly' })));
    // 80 recordings of 0.25 at once, 20 per key: 5 per key (100 percent), 20 over the budget (200 percent).
    await Promise.all(Array.from({ length: 80 }, (_, i) => record(env.server, { api_key_hash: keys[i % 4]!.hash, usage: 0.25 })));
    expect(await percents(budgetId)).toEqual([50, 80, 100]);
    for (const { hash } of keys) expect(await percents(await keyId(hash))).toEqual([50, 80, 100]);
  });

  it('two replicas recording at once cross each threshold once', async () => {
    const replica = await inProcessReplica(env.server, { now: () => NOW });
    try {
      const { hash } = await createKey(env.server, { limit: 3, limit_reset: 'weekly' });
      const id = await keyId(hash);
      const both = Array.from({ length: 40 }, (_, i) =>
        trpcRaw(
          i % 2 === 0 ? env.server : replica,
          'generations.record',
          { id: generationId(), api_key_hash: hash, model: 'openai/gpt-4o', usage: 0.1 },
          { key: env.server.platformKey },
        ),
      );
      for (const answer of await Promise.all(both)) expect(answer.status).toBe(200);
      expect(await percents(id)).toEqual([50, 80, 100]);
    } finally {
      await replica.close();
    }
  });

  it('a new window fires again; a changed limit is a new crossing', async () => {
    const { hash } = await createKey(env.server, { limit: 1, limit_reset: 'daily' });
    const id = await keyId(hash);
    await record(env.server, { api_key_hash: hash, usage: 0.5 });
    env.server.setNow(new Date(NOW.getTime() + 86_400_000));
    try {
      await record(env.server, { api_key_hash: hash, usage: 0.5 });
      await record(env.server, { api_key_hash: hash, usage: 0.1 });
      const events = await crossingsOf(id);
      expect(events.map((e) => [e.payload.window.start, e.payload.threshold_percent])).toEqual([
        ['2031-05-14T00:00:00.000Z', 50],
        ['2031-05-15T00:00:00.000Z', 50],
      ]);
      // The limit lowered to 0.6: 0.6 spent today is 100 percent of the new limit.
      await ok(env.server, 'keys.update', { hash, limit: 0.6 });
      await record(env.server, { api_key_hash: hash, usage: 0 });
      expect((await crossingsOf(id)).filter((e) => e.payload.limit === 0.6).map((e) => e.payload.threshold_percent)).toEqual([50, 80, 100]);
    } finally {
      env.server.setNow(NOW);
    }
  });

  it('a recording that rolls back emits nothing, and its retry emits once', async () => {
    const { hash } = await createKey(env.server, { limit: 1, limit_reset: 'monthly' });
    const id = await keyId(hash);
    // A trigger that fails this key's events: the recording's transaction fails after its spend was written.
    await env.server.db.$executeRawUnsafe(`CREATE FUNCTION fail_alert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
    await env.server.db.$executeRawUnsafe(
      `CREATE TRIGGER fail_alert BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.payload->>'id' = '${id}') EXECUTE FUNCTION fail_alert()`,
    );
    const generation = generationId();
    try {
      const failed = await trpcRaw(
        env.server,
        'generations.record',
        { id: generation, api_key_hash: hash, model: 'openai/gpt-4o', usage: 0.7 },
        { key: env.server.platformKey },
      );
      expect(failed.status).toBe(500);
      expect(await env.server.db.generation.findUnique({ where: { id: generation } })).toBeNull();
      expect((await env.server.db.apiKey.findUniqueOrThrow({ where: { id } })).usage.toNumber()).toBe(0);
      expect(await percents(id)).toEqual([]);
    } finally {
      await env.server.db.$executeRawUnsafe('DROP TRIGGER fail_alert ON events');
      await env.server.db.$executeRawUnsafe('DROP FUNCTION fail_alert()');
    }
    await record(env.server, { id: generation, api_key_hash: hash, usage: 0.7 });
    await record(env.server, { id: generation, api_key_hash: hash, usage: 0.7 }); // a retry: nothing counted twice
    expect(await percents(id)).toEqual([50]);
  });

  it("another organization's spend does not count, and its alerts are its own", async () => {
    const theirs = env.other;
    const hash = hashApiKey(theirs.managementKey);
    const ours = await createKey(env.server, { limit: 1, limit_reset: 'monthly' });
    await env.server.db.apiKey.update({ where: { hash }, data: { limit: 1, limit_reset: 'monthly' } });
    await ok(env.server, 'generations.addCredits', { organization_id: theirs.organizationId, amount: 10 });
    await record(env.server, { api_key_hash: hash, usage: 0.9 });
    expect(await percents(await keyId(ours.hash))).toEqual([]);
    const events = await crossingsOf(await keyId(hash));
    expect(events.map((e) => [e.organization_id, e.payload.threshold_percent])).toEqual([
      [theirs.organizationId, 50],
      [theirs.organizationId, 80],
    ]);
  });
});

describe('credits.low', () => {
  it('nothing while credits_low_usd is unset (the default)', async () => {
    expect(await env.server.db.event.findMany({ where: { type: CREDITS_LOW } })).toEqual([]);
  });

  it('fires once when the balance falls under the threshold, and again after a top-up and a new fall', async () => {
    const org = await createOrganization(env.server.db, 'Low credits');
    const hash = hashApiKey(org.managementKey);
    await ok(env.server, 'generations.addCredits', { organization_id: org.organizationId, amount: 10 });
    const set = await trpcRaw(env.server, 'settings.updateAlerts', { credits_low_usd: 5 }, { key: org.managementKey });
    expect(set.status).toBe(200);
    const lows = async () =>
      (
        await env.server.db.event.findMany({
          where: { type: CREDITS_LOW, organization_id: org.organizationId },
          orderBy: [{ created_at: 'asc' }, { seq: 'asc' }],
        })
      ).map((e) => e.payload as Record<string, unknown>);
    await record(env.server, { api_key_hash: hash, usage: 5 }); // balance 5: not under 5
    expect(await lows()).toEqual([]);
    await Promise.all([0.5, 0.5, 0.5, 0.5].map((usage) => record(env.server, { api_key_hash: hash, usage })));
    await record(env.server, { api_key_hash: hash, usage: 1 });
    expect(await lows()).toHaveLength(1);
    const [event] = await env.server.db.event.findMany({ where: { type: CREDITS_LOW, organization_id: org.organizationId } });
    expect(event).toMatchObject({ workspace_id: null, cause: `${CREDITS_LOW}:${org.organizationId}:10:5` });
    // Under 5 in whichever batch of the four concurrent recordings took it there: 4.5, 4, 3.5 or 3.
    expect((event!.payload as { balance: number }).balance).toBeGreaterThanOrEqual(3);
    expect((event!.payload as { balance: number }).balance).toBeLessThan(5);
    expect(event!.payload).toMatchObject({ version: 1, organization_id: org.organizationId, threshold_usd: 5, total_credits: 10 });
    // A top-up over the threshold, then a new fall: a new credit state, a new event.
    await ok(env.server, 'generations.addCredits', { organization_id: org.organizationId, amount: 10 });
    await record(env.server, { api_key_hash: hash, usage: 1 });
    expect(await lows()).toHaveLength(1);
    await record(env.server, { api_key_hash: hash, usage: 9 });
    expect((await lows()).map((p) => [p.total_credits, p.balance])).toEqual([
      [10, expect.any(Number)],
      [20, 2],
    ]);
  });
});

describe('the thresholds in the settings row', () => {
  it('settings.alerts answers the defaults; settings.updateAlerts sets, sorts and resets them', async () => {
    const org = await createOrganization(env.server.db, 'Thresholds');
    const as = { key: org.managementKey };
    const shown = await trpcRaw(env.server, 'settings.alerts', undefined, { ...as, query: true });
    expect(shown.status).toBe(200);
    expect(OrganizationAlertsOutputSchema.strict().parse(shown.data)).toEqual({
      data: { alert_thresholds: [50, 80, 100], credits_low_usd: null, updated_at: null },
    });
    const set = await trpcRaw(env.server, 'settings.updateAlerts', { alert_thresholds: [90, 25], credits_low_usd: 12.5 }, as);
    expect(set.status).toBe(200);
    expect(set.data).toMatchObject({ data: { alert_thresholds: [25, 90], credits_low_usd: 12.5 } });
    // Omitted: unchanged; null: back to the default.
    expect((await trpcRaw(env.server, 'settings.updateAlerts', { credits_low_usd: null }, as)).data).toMatchObject({
      data: { alert_thresholds: [25, 90], credits_low_usd: null },
    });
    // The platform sees (and sets) the same fields in organizations.settings.
    const platform = await ok(env.server, 'organizations.settings', { organization_id: org.organizationId }, { query: true });
    expect(platform.data).toMatchObject({ alert_thresholds: [25, 90], credits_low_usd: null, free_model_requests_per_minute: null });
    await ok(env.server, 'organizations.updateSettings', { organization_id: org.organizationId, alert_thresholds: null, credits_low_usd: 3 });
    expect((await trpcRaw(env.server, 'settings.alerts', undefined, { ...as, query: true })).data).toMatchObject({
      data: { alert_thresholds: [50, 80, 100], credits_low_usd: 3 },
    });
    // Each organization its own: the server's organization still has the defaults.
    expect((await trpcRaw(env.server, 'settings.alerts', undefined, { query: true })).data).toMatchObject({
      data: { alert_thresholds: [50, 80, 100], credits_low_usd: null },
    });
  });

  it('custom thresholds fire instead of the defaults; [] none', async () => {
    const org = await createOrganization(env.server.db, 'Custom thresholds');
    await ok(env.server, 'generations.addCredits', { organization_id: org.organizationId, amount: 100 });
    const hash = hashApiKey(org.managementKey);
    await env.server.db.apiKey.update({ where: { hash }, data: { limit: 4, limit_reset: 'monthly' } });
    await trpcRaw(env.server, 'settings.updateAlerts', { alert_thresholds: [25, 150] }, { key: org.managementKey });
    await record(env.server, { api_key_hash: hash, usage: 3 });
    expect(await percents(await keyId(hash))).toEqual([25]);
    await record(env.server, { api_key_hash: hash, usage: 3 });
    expect(await percents(await keyId(hash))).toEqual([25, 150]);
    await trpcRaw(env.server, 'settings.updateAlerts', { alert_thresholds: [] }, { key: org.managementKey });
    await env.server.db.apiKey.update({ where: { hash }, data: { limit: 5 } });
    await record(env.server, { api_key_hash: hash, usage: 1 });
    expect(await percents(await keyId(hash))).toEqual([25, 150]);
  });

  it('400 for thresholds out of range, repeated or too many, and a negative amount, in the error envelope; nothing changes', async () => {
    for (const input of [
      { alert_thresholds: [0] },
      { alert_thresholds: [50, 50] },
      { alert_thresholds: [1001] },
      { alert_thresholds: [1.5] },
      { alert_thresholds: Array.from({ length: 11 }, (_, i) => i + 1) },
      { alert_thresholds: '50,80' },
      { credits_low_usd: -1 },
      { credits_low_usd: '5' },
    ]) {
      const answer = await trpcRaw(env.server, 'settings.updateAlerts', input as never);
      expect(answer.status, JSON.stringify(input)).toBe(400);
      expect(answer.error?.message).toBeTruthy();
    }
    expect(await env.server.db.organizationSettings.findUnique({ where: { organization_id: env.server.organizationId } })).toBeNull();
  });

  it('401 without a key; 403 for a regular key, a platform key and a management key without the budgets scope', async () => {
    const regular = await createKey(env.server);
    const readOnly = await createKey(env.server, { is_management_key: true, scopes: ['budgets:read'] });
    for (const path of ['settings.alerts', 'settings.updateAlerts'] as const) {
      const input = path === 'settings.alerts' ? undefined : { credits_low_usd: 1 };
      const query = path === 'settings.alerts';
      expect((await trpcRaw(env.server, path, input, { key: null, query })).status).toBe(401);
      expect((await trpcRaw(env.server, path, input, { key: regular.key, query })).status).toBe(403);
      expect((await trpcRaw(env.server, path, input, { key: env.server.platformKey, query })).status).toBe(403);
    }
    expect((await trpcRaw(env.server, 'settings.alerts', undefined, { key: readOnly.key, query: true })).status).toBe(200);
    const refused = await trpcRaw(env.server, 'settings.updateAlerts', { credits_low_usd: 1 }, { key: readOnly.key });
    expect(refused.status).toBe(403);
    expect(refused.error?.data.metadata?.reason).toContain('budgets:write');
  });
});
