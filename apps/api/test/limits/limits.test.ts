// The limiter (src/limits/) and the free-model quota per minute it counts for routing.authorize, on
// both counter stores: PostgreSQL (the default) and a real redis-server started here
// (fixtures-redis.ts). The limiter alone: up to the limit and not past it, refunds, the window's
// end, exactly L of N concurrent callers, two limiters (two replicas) sharing one count. Through the
// real server: the quota per key and per organization, the settings row over the default, the exact
// refusal, nothing counted for refused or paid requests, the metric, and two server replicas sharing
// the store. Windows are the limiter's own (they start with a key's first request, not at the
// clock's minute), so every test stays inside one window of 60 s, except the one that waits, on the
// condition, for a 1-second window to end.
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing';
import { RoutingAuthorizeOutputSchema } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { type LimitAnswer, Limits } from '../../src/limits/limits.js';
import { hashApiKey } from '../../src/access/key-format.js';
import { FREE_MODEL_MINUTE } from '../../src/modules/routing/free-quota.js';
import { REFUSAL_ORDER } from '@switchyard/rules';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { addUsage, createOrganization, until } from '../fixtures.js';
import { createKey, importDemoCatalog } from '../fixtures-catalog.js';
import { REDIS_SKIP_REASON, skipRedis, startRedis, type TestRedis } from '../fixtures-redis.js';
import { inProcessReplica } from '../fixtures-replica.js';
import { ok, type Requester, trpcRaw } from '../fixtures-trpc.js';

type Store = 'postgres' | 'redis';
const STORES: Store[] = ['postgres', 'redis'];
const FREE = 'openai/gpt-oss-20b:free';
const PAID = 'openai/gpt-4o';

/** Where each store's tests find their store: a database of their own, and the Redis started here. */
const stores: { database?: TestDatabase; redis?: TestRedis } = {};
beforeAll(async () => {
  stores.database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
  if (!skipRedis) stores.redis = await startRedis();
});
afterAll(async () => {
  await stores.redis?.stop();
  await stores.database?.drop();
});

const storeOf = (store: Store) =>
  store === 'postgres' ? ({ kind: 'postgres', databaseUrl: stores.database!.url } as const) : ({ kind: 'redis', url: stores.redis!.url } as const);

const describeStore = (store: Store, name: string, fn: () => void) =>
  store === 'redis' && skipRedis ? describe.skip(`${name} (${REDIS_SKIP_REASON})`, fn) : describe(name, fn);

describe('configuration', () => {
  it('keeps the counters in PostgreSQL unless COUNTER_STORE_URL names a Redis; 20 free-model requests a minute by default', () => {
    const config = loadConfig({});
    expect(config.counterStoreUrl).toBeUndefined();
    expect(config.freeModelRequestsPerMinute).toBe(20);
    expect(loadConfig({ COUNTER_STORE_URL: 'rediss://user:pw@cache:6380/2', FREE_MODEL_REQUESTS_PER_MINUTE: '0' })).toMatchObject({
      counterStoreUrl: 'rediss://user:pw@cache:6380/2',
      freeModelRequestsPerMinute: 0,
    });
    expect(() => loadConfig({ COUNTER_STORE_URL: 'http://cache:6379' })).toThrow(ConfigError);
    expect(() => loadConfig({ COUNTER_STORE_URL: 'http://cache:6379' })).toThrow(
      /COUNTER_STORE_URL="http:\/\/cache:6379": must be a redis:\/\/ or rediss:\/\/ URL/,
    );
    expect(() => loadConfig({ FREE_MODEL_REQUESTS_PER_MINUTE: '-1' })).toThrow(/FREE_MODEL_REQUESTS_PER_MINUTE/);
  });

  it('a Redis that cannot be reached stops the start, naming COUNTER_STORE_URL (without its password)', async () => {
    const { freePort } = await import('@switchyard/db');
    const url = `redis://:secret-pw@127.0.0.1:${await freePort()}`;
    await expect(Limits.open({ store: { kind: 'redis', url }, rules: {} })).rejects.toThrow(
      /^COUNTER_STORE_URL: cannot reach redis:\/\/:\*\*\*@127\.0\.0\.1:\d+/,
    );
  });
});

for (const store of STORES) {
  describeStore(store, `the limiter on ${store}`, () => {
    const opened: Limits[] = [];
    const rejected: string[] = [];
    const open = async (rules: Record<string, { points: number; durationS: number }>) => {
      const limits = await Limits.open({ store: storeOf(store), rules, rejected: (name) => void rejected.push(name) });
      opened.push(limits);
      return limits;
    };
    afterAll(async () => {
      await Promise.all(opened.map((l) => l.close()));
    });
    // Keys unique to each test (the store outlives them).
    let n = 0;
    const fresh = () => `${store}-${process.pid}-${Date.now()}-${n++}`;

    it('allows up to the limit and refuses at it, counting per key; a refusal says how long to wait', async () => {
      const limits = await open({ calls: { points: 3, durationS: 60 } });
      expect(limits.store).toBe(store);
      const key = fresh();
      const answers: LimitAnswer[] = [];
      for (let i = 0; i < 4; i++) answers.push(await limits.consume('calls', key));
      expect(answers.map((a) => [a.allowed, a.remaining, a.retry_after_s])).toEqual([
        [true, 2, null],
        [true, 1, null],
        [true, 0, null],
        [false, 0, expect.any(Number)],
      ]);
      const refused = answers[3]!;
      expect(refused.retry_after_s).toBeGreaterThanOrEqual(1);
      expect(refused.retry_after_s).toBeLessThanOrEqual(60);
      // One window: every answer names the same end (to the store's millisecond rounding).
      for (const a of answers) expect(Math.abs(a.resets_at.getTime() - answers[0]!.resets_at.getTime())).toBeLessThan(1_000);
      // Another key has its own count; a caller's own limit replaces the rule's.
      expect((await limits.consume('calls', fresh())).remaining).toBe(2);
      const wide = fresh();
      expect(await limits.consume('calls', wide, { limit: 10 })).toMatchObject({ allowed: true, limit: 10, remaining: 9 });
      expect(await limits.peek('calls', wide, { limit: 10 })).toMatchObject({ allowed: true, remaining: 9 });
      expect(rejected.filter((name) => name === 'calls')).toHaveLength(1);
      // A cost of several points counts them all.
      expect(await limits.consume('calls', wide, { limit: 10, cost: 9 })).toMatchObject({ allowed: true, remaining: 0 });
      // A limit of 0 refuses without counting, and waiting does not help.
      expect(await limits.consume('calls', fresh(), { limit: 0 })).toMatchObject({ allowed: false, limit: 0, retry_after_s: null });
      await expect(limits.consume('nothing', key)).rejects.toThrow(/no limit named "nothing"/);
    });

    it('a refused request counts nothing; a refund gives an allowed one back within its window', async () => {
      const limits = await open({ calls: { points: 2, durationS: 60 } });
      const key = fresh();
      const first = await limits.consume('calls', key);
      await limits.consume('calls', key);
      for (let i = 0; i < 3; i++) expect((await limits.consume('calls', key)).allowed).toBe(false);
      expect((await limits.peek('calls', key)).remaining).toBe(0);
      await limits.refund('calls', key, first);
      expect((await limits.peek('calls', key)).remaining).toBe(1);
      expect(await limits.consume('calls', key)).toMatchObject({ allowed: true, remaining: 0 });
      // The limit raised to 3 within the window: the refusals left room for exactly one more.
      expect(await limits.consume('calls', key, { limit: 3 })).toMatchObject({ allowed: true, remaining: 0 });
      expect((await limits.consume('calls', key, { limit: 3 })).allowed).toBe(false);
    });

    it('the count starts again when the window ends', async () => {
      const limits = await open({ short: { points: 1, durationS: 1 } });
      const key = fresh();
      expect((await limits.consume('short', key)).allowed).toBe(true);
      const refused = await limits.consume('short', key);
      expect(refused).toMatchObject({ allowed: false, retry_after_s: 1 });
      await until(async () => (await limits.peek('short', key)).remaining === 1, { what: 'the 1-second window to end', everyMs: 50 });
      expect((await limits.consume('short', key)).allowed).toBe(true);
    });

    it('N concurrent callers through two limiters (two replicas) sharing the store: exactly L allowed', async () => {
      const rule = { shared: { points: 17, durationS: 60 } };
      const [a, b] = [await open(rule), await open(rule)];
      const key = fresh();
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).consume('shared', key)));
      expect(answers.filter((x) => x.allowed)).toHaveLength(17);
      // Every allowed answer saw a different count: the store counted each once.
      expect(new Set(answers.filter((x) => x.allowed).map((x) => x.remaining)).size).toBe(17);
      expect((await b.peek('shared', key)).remaining).toBe(0);
    });
  });
}

for (const store of STORES) {
  describeStore(store, `the free-model quota per minute through routing.authorize, counters on ${store}`, () => {
    let server: TestServer;
    const env = (): Record<string, string> => ({
      FREE_MODEL_REQUESTS_PER_MINUTE: '3',
      ...(store === 'redis' ? { COUNTER_STORE_URL: stores.redis!.url } : {}),
    });
    beforeAll(async () => {
      server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), env: { ...env(), METRICS_PORT: '0' } });
      await importDemoCatalog(server);
      await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 1000 });
    });
    afterAll(async () => {
      await server?.close();
    });

    type Input = { api_key_hash: string; model: string; explain?: boolean };
    const authorize = async (input: Input, via: Requester & { platformKey: string; managementKey: string } = server) => {
      const { status, data, error } = await trpcRaw(via, 'routing.authorize', input);
      expect(status, JSON.stringify(error)).toBe(200);
      return RoutingAuthorizeOutputSchema.parse(data).data;
    };
    const minuteOf = (decision: Awaited<ReturnType<typeof authorize>>) =>
      decision.allowed ? decision.remaining.find((r) => r.limit === 'free:minute') : undefined;
    const rejections = async () => {
      const text = await (await fetch(server.metricsUrl!)).text();
      const line = text.split('\n').find((l) => l.startsWith(`switchyard_limiter_rejections_total{limit="${FREE_MODEL_MINUTE}"}`));
      return Number(line?.split(' ')[1]);
    };
    const DEFAULT_SETTING = "free_model_requests_per_minute setting (unset: the platform's FREE_MODEL_REQUESTS_PER_MINUTE)";

    it('allows a key FREE_MODEL_REQUESTS_PER_MINUTE free-model requests, refuses the next with 429 and when to retry; other keys and organizations are unaffected', async () => {
      const before = await rejections();
      const { hash } = await createKey(server);
      const allowed = [];
      for (let i = 0; i < 3; i++) allowed.push(await authorize({ api_key_hash: hash, model: FREE }));
      expect(allowed.map((d) => minuteOf(d)?.remaining)).toEqual([2, 1, 0]);
      const resetsAt = Date.parse(minuteOf(allowed[0]!)!.resets_at!);
      expect(resetsAt - Date.now()).toBeGreaterThan(0);
      expect(resetsAt - Date.now()).toBeLessThanOrEqual(60_000);

      const refusal = await authorize({ api_key_hash: hash, model: FREE });
      if (refusal.allowed) throw new Error('the 4th free-model request of the minute was allowed');
      expect(refusal.status).toBe(429);
      expect(refusal.code).toBe('free_model_per_minute');
      expect(refusal.retry_after_s).toBeGreaterThanOrEqual(1);
      expect(refusal.retry_after_s).toBeLessThanOrEqual(60);
      expect(refusal.message).toBe(
        `This key has made its 3 free-model requests of this minute. Try again in ${refusal.retry_after_s} s, use a paid model, or ask the platform's operator to raise the organization's ${DEFAULT_SETTING}.`,
      );
      expect(await rejections()).toBe(before + 1);
      // The count lives in the configured store: a row of limiter_counters, or a Redis key (the table stays empty).
      const key = await server.db.apiKey.findUniqueOrThrow({ where: { hash } });
      const row = await server.db.limiterCounter.findUnique({ where: { key: `${FREE_MODEL_MINUTE}:${key.id}` } });
      expect(row?.points ?? null).toBe(store === 'postgres' ? 3 : null);
      if (store === 'redis') expect(await server.db.limiterCounter.count()).toBe(0);

      // Paid models are not free-model requests; another key of the organization has its own minute;
      // so has a key of another organization.
      expect((await authorize({ api_key_hash: hash, model: PAID })).allowed).toBe(true);
      const sibling = await createKey(server);
      expect(minuteOf(await authorize({ api_key_hash: sibling.hash, model: FREE }))?.remaining).toBe(2);
      const other = await createOrganization(server.db, 'Elsewhere');
      expect(minuteOf(await authorize({ api_key_hash: hashApiKey(other.managementKey), model: FREE }))?.remaining).toBe(2);
    });

    it("the organization's settings row overrides the default, and a change to it applies", async () => {
      const org = await createOrganization(server.db, 'Own quota');
      // Set by the platform (organizations.updateSettings), as an operator would.
      const set = (free_model_requests_per_minute: number | null) =>
        ok(server, 'organizations.updateSettings', { organization_id: org.organizationId, free_model_requests_per_minute });
      expect((await set(1)).data).toMatchObject({ organization_id: org.organizationId, free_model_requests_per_minute: 1 });
      const hash = hashApiKey(org.managementKey);
      expect(minuteOf(await authorize({ api_key_hash: hash, model: FREE }))).toMatchObject({ remaining: 0 });
      const refusal = await authorize({ api_key_hash: hash, model: FREE });
      if (refusal.allowed) throw new Error('allowed past the settings row');
      expect(refusal.message).toBe(
        `This key has made its 1 free-model requests of this minute. Try again in ${refusal.retry_after_s} s, use a paid model, or ask the platform's operator to raise the organization's free_model_requests_per_minute setting.`,
      );
      // Raised to 4: announced to the server (routing:<organization>), which reads the row again. The
      // key's count carries over (1 made; refusals count nothing).
      await set(4);
      await until(async () => (await authorize({ api_key_hash: hash, model: FREE })).allowed, { what: 'the raised limit to apply' });
      // 0: no free-model request at all, and waiting does not help.
      await set(0);
      await until(async () => !(await authorize({ api_key_hash: hash, model: FREE })).allowed, { what: 'the limit of 0 to apply' });
      const none = await authorize({ api_key_hash: hash, model: FREE });
      expect(none).toMatchObject({ allowed: false, status: 429, code: 'free_model_per_minute', retry_after_s: null });
      if (!none.allowed) expect(none.message).toContain('allows no free-model requests (its free_model_requests_per_minute setting is 0)');
    });

    it('a request another rule refuses counts nothing, nor does a paid one; --explain names the rule', async () => {
      const { hash } = await createKey(server, { limit: 1, limit_reset: 'monthly' });
      await addUsage(server.db, hash, new Date().toISOString().slice(0, 10), 1);
      // The key's limit is spent: free models are refused too (key_limit comes after the quota).
      expect(REFUSAL_ORDER.indexOf('free_model_per_minute')).toBe(REFUSAL_ORDER.indexOf('free_model_daily') + 1);
      expect(REFUSAL_ORDER.indexOf('free_model_per_minute')).toBeLessThan(REFUSAL_ORDER.indexOf('key_limit'));
      for (let i = 0; i < 5; i++) expect(await authorize({ api_key_hash: hash, model: FREE })).toMatchObject({ allowed: false, code: 'key_limit' });
      await ok(server, 'keys.update', { hash, limit: 100 });
      for (let i = 0; i < 5; i++) expect((await authorize({ api_key_hash: hash, model: PAID })).allowed).toBe(true);
      const explained = await authorize({ api_key_hash: hash, model: FREE, explain: true });
      expect(minuteOf(explained)?.remaining).toBe(2);
      const trace = explained.explain ?? [];
      expect(trace.find((t) => t.rule === 'free:minute')?.said).toMatch(
        /^1 of 3 free-model requests of this key's minute made \(until .+; the limit from FREE_MODEL_REQUESTS_PER_MINUTE\)$/,
      );
      expect((await authorize({ api_key_hash: hash, model: PAID, explain: true })).explain?.find((t) => t.rule === 'free:minute')?.said).toBe(
        'not a free model',
      );
      await authorize({ api_key_hash: hash, model: FREE });
      expect(minuteOf(await authorize({ api_key_hash: hash, model: FREE }))?.remaining).toBe(0);
      expect((await authorize({ api_key_hash: hash, model: FREE })).allowed).toBe(false);
    });

    it('50 concurrent authorizations against a limit of 7 allow exactly 7', async () => {
      const org = await createOrganization(server.db, 'Concurrent');
      await server.db.organizationSettings.create({ data: { organization_id: org.organizationId, free_model_requests_per_minute: 7 } });
      const hash = hashApiKey(org.managementKey);
      const decisions = await Promise.all(Array.from({ length: 50 }, () => authorize({ api_key_hash: hash, model: FREE })));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(7);
      expect(decisions.filter((d) => !d.allowed).every((d) => !d.allowed && d.status === 429 && d.code === 'free_model_per_minute')).toBe(true);
      expect(
        new Set(
          decisions
            .map(minuteOf)
            .filter(Boolean)
            .map((m) => m!.remaining),
        ),
      ).toEqual(new Set([0, 1, 2, 3, 4, 5, 6]));
    });

    it('two server replicas sharing the store share the counts: 40 concurrent authorizations across both allow exactly 5', async () => {
      const replica = await inProcessReplica(server, { env: env() });
      try {
        const org = await createOrganization(server.db, 'Two replicas');
        await server.db.organizationSettings.create({ data: { organization_id: org.organizationId, free_model_requests_per_minute: 5 } });
        const hash = hashApiKey(org.managementKey);
        const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => authorize({ api_key_hash: hash, model: FREE }, i % 2 ? replica : server)));
        expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
        expect((await authorize({ api_key_hash: hash, model: FREE }, replica)).allowed).toBe(false);
        expect((await authorize({ api_key_hash: hash, model: FREE }, server)).allowed).toBe(false);
      } finally {
        await replica.close();
      }
    });
  });
}
