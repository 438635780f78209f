// The counter store going away is a documented state, not a 500: a real redis-server is the store,
// killed (SIGKILL) and started again on the same port while two servers share it, one with the
// defaults (API rate limits open; free-model decisions and the token exchange closed) and one with
// every caller turned the other way (COUNTER_STORE_FAILURE=open, COUNTER_STORE_FAILURE_API_RATE_LIMITS
// =closed). Each caller of the limiter answers as its setting says; the loss and the return are
// logged once each however many requests meet them; switchyard_counter_store_up follows the store;
// both servers count again once it is back, without a restart. Every wait is on a condition.
import { randomBytes, randomUUID } from 'node:crypto';
import { RoutingAuthorizeOutputSchema } from '@switchyard/schema';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { COUNTER_STORE_FAILURE_DEFAULTS, loadConfig } from '../../src/config.js';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { until } from '../fixtures.js';
import { errorOf, expectEnvelope } from '../fixtures-admin.js';
import { createKey, importDemoCatalog } from '../fixtures-catalog.js';
import { AUDIENCE, exchange, exchangeForm, identityProvider, ISSUER, type IdentityProvider } from '../fixtures-identity.js';
import { REDIS_SKIP_REASON, skipRedis, startRedis, type TestRedis } from '../fixtures-redis.js';
import { type InProcessReplica, inProcessReplica } from '../fixtures-replica.js';
import { ok, type Requester, trpcRaw } from '../fixtures-trpc.js';

const FREE = 'openai/gpt-oss-20b:free';
const SECRET_KEY = randomBytes(32).toString('hex');
const LOST = 'the counter store is unreachable';
const BACK = 'the counter store is reachable again';

describe('COUNTER_STORE_FAILURE: the setting and its defaults', () => {
  it('each caller has its default; COUNTER_STORE_FAILURE sets them all; COUNTER_STORE_FAILURE_<CALLER> its own; other values stop the start', () => {
    expect(COUNTER_STORE_FAILURE_DEFAULTS).toEqual({ apiRateLimits: 'open', freeModels: 'closed', tokenExchange: 'closed' });
    expect(loadConfig({}).counterStoreFailure).toEqual(COUNTER_STORE_FAILURE_DEFAULTS);
    expect(loadConfig({ COUNTER_STORE_FAILURE: 'open' }).counterStoreFailure).toEqual({ apiRateLimits: 'open', freeModels: 'open', tokenExchange: 'open' });
    expect(loadConfig({ COUNTER_STORE_FAILURE: 'closed', COUNTER_STORE_FAILURE_TOKEN_EXCHANGE: 'open' }).counterStoreFailure).toEqual({
      apiRateLimits: 'closed',
      freeModels: 'closed',
      tokenExchange: 'open',
    });
    expect(() => loadConfig({ COUNTER_STORE_FAILURE: 'sometimes' })).toThrow(/COUNTER_STORE_FAILURE/);
    expect(() => loadConfig({ COUNTER_STORE_FAILURE_FREE_MODELS: 'yes' })).toThrow(/COUNTER_STORE_FAILURE_FREE_MODELS/);
  });
});

(skipRedis ? describe.skip : describe)(`a Redis counter store killed and started again${skipRedis ? ` (${REDIS_SKIP_REASON})` : ''}`, () => {
  let redis: TestRedis;
  let server: TestServer;
  let inverted: InProcessReplica;
  const invertedLogs: Record<string, unknown>[] = [];
  let idp: IdentityProvider;
  let policyId: string;
  let subject: string;
  let freeKey: string;

  beforeAll(async () => {
    redis = await startRedis();
    idp = await identityProvider();
    const env = { COUNTER_STORE_URL: redis.url, SWITCHYARD_SECRET_KEY: SECRET_KEY, TOKEN_EXCHANGES_PER_MINUTE: '1000', FREE_MODEL_REQUESTS_PER_MINUTE: '1000' };
    server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), env: { ...env, METRICS_PORT: '0' } });
    const logger = pino({ level: 'info' }, { write: (line: string) => void invertedLogs.push(JSON.parse(line) as Record<string, unknown>) });
    inverted = await inProcessReplica(server, {
      env: { ...env, LOG_LEVEL: 'info', COUNTER_STORE_FAILURE: 'open', COUNTER_STORE_FAILURE_API_RATE_LIMITS: 'closed' },
      logger,
    });
    await importDemoCatalog(server);
    await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 1000 });
    freeKey = (await createKey(server, { name: 'free-user' })).hash;
    subject = `repo:switchyard/${randomUUID()}`;
    const regular = await createKey(server, { name: 'workload' });
    policyId = (await ok(server, 'federationPolicies.create', { issuer: ISSUER, audience: AUDIENCE, subject, key_hash: regular.hash, jwks: idp.jwks as never }))
      .id;
  });
  afterAll(async () => {
    await inverted?.close();
    await server?.close();
    await redis?.stop();
  });

  const authorize = async (via: Requester & { platformKey: string; managementKey: string }) => {
    const { status, data, error } = await trpcRaw(via, 'routing.authorize', { api_key_hash: freeKey, model: FREE, explain: true });
    expect(status, JSON.stringify(error)).toBe(200);
    return RoutingAuthorizeOutputSchema.parse(data).data;
  };
  const exchangeOn = async (via: TestServer | InProcessReplica) => exchange(via as TestServer, exchangeForm(policyId, await idp.sign(subject)));
  const gauge = async () => {
    const text = await (await fetch(server.metricsUrl!)).text();
    const line = text.split('\n').find((l) => l.startsWith('switchyard_counter_store_up{store="redis"} '));
    return Number(line?.split(' ')[1]);
  };
  const linesOf = (logs: Record<string, unknown>[], start: string) => logs.filter((l) => String(l.msg ?? '').startsWith(start)).length;
  const internalErrors = (logs: Record<string, unknown>[]) => logs.filter((l) => l.msg === 'internal error').length;
  /** A tenant key no server holds an allowance of yet: its first request asks the store. */
  const freshTenantKey = async () => (await createKey(server, { name: `fresh-${randomUUID().slice(0, 6)}` })).key;

  it('while it is up, everything counts', async () => {
    expect(await gauge()).toBe(1);
    const decision = await authorize(server);
    expect(decision.allowed && decision.remaining.some((r) => r.limit === 'free:minute')).toBe(true);
    expect((await exchangeOn(server)).status).toBe(200);
    expect((await exchangeOn(inverted)).status).toBe(200);
  });

  it('killed: each caller answers as its setting says, no 500, the loss logged once per server; started again: everything counts again, without a restart', async () => {
    await redis.kill();
    await until(async () => (await gauge()) === 0, { what: 'switchyard_counter_store_up to say 0' });

    const rounds = 5;
    for (let i = 0; i < rounds; i++) {
      // Free-model decisions. Closed (the default): the limits_unavailable refusal, 503, with when to ask again.
      const refused = await authorize(server);
      if (refused.allowed) throw new Error('a free-model decision was allowed with the store away and the quota closed');
      expect(refused).toMatchObject({ status: 503, code: 'limits_unavailable' });
      expect(refused.retry_after_s).toBeGreaterThanOrEqual(1);
      expect(refused.message).toContain('cannot be checked against its limits right now');
      expect(refused.explain?.find((e) => e.rule === 'free:minute')?.said).toContain('COUNTER_STORE_FAILURE_FREE_MODELS=closed');
      // Open: allowed, uncounted (no free:minute entry).
      const allowed = await authorize(inverted);
      if (!allowed.allowed) throw new Error(`a free-model decision was refused with the quota open: ${allowed.code}`);
      expect(allowed.remaining.map((r) => r.limit)).not.toContain('free:minute');
      expect(allowed.explain?.find((e) => e.rule === 'free:minute')?.said).toContain('COUNTER_STORE_FAILURE_FREE_MODELS=open');

      // The token exchange. Closed (the default): OAuth's temporarily_unavailable, 503, Retry-After.
      const closed = await exchangeOn(server);
      expect(closed.status).toBe(503);
      expect(Number(closed.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(((await closed.json()) as { error: string }).error).toBe('temporarily_unavailable');
      // Open: the exchange goes on, uncounted.
      expect((await exchangeOn(inverted)).status).toBe(200);

      // The API's rate limits. Open (the default): a key's first request passes.
      const key = await freshTenantKey();
      expect((await server.request('/api/v1/key', { key })).status).toBe(200);
      // Closed: 503 with Retry-After, the reason in the envelope's metadata.
      const refusedApi = await inverted.request('/api/v1/key', { key });
      const body = { status: refusedApi.status, body: await refusedApi.json() };
      expectEnvelope(body, 503);
      expect(Number(refusedApi.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(String((errorOf(body).metadata as { reason: string }).reason)).toContain('counter store is unreachable');
    }
    // The loss is one line per server, however many requests met it; nothing was an internal error.
    expect(linesOf(server.logs, LOST)).toBe(1);
    expect(linesOf(invertedLogs, LOST)).toBe(1);
    expect(internalErrors(server.logs)).toBe(0);
    expect(internalErrors(invertedLogs)).toBe(0);

    await redis.restart();
    await until(async () => (await gauge()) === 1, { what: 'switchyard_counter_store_up to say 1 again' });
    await until(async () => (await authorize(inverted)).allowed && linesOf(invertedLogs, BACK) === 1, { what: 'the inverted server to see the store back' });
    // Counted again, in the restarted (empty) store: this decision at least (the inverted server's
    // decisions around its return may or may not have reached the store), and each one after it.
    const minuteLeft = async () => {
      const counted = await authorize(server);
      return counted.allowed ? counted.remaining.find((r) => r.limit === 'free:minute')?.remaining : undefined;
    };
    const first = await minuteLeft();
    expect(first).toBeLessThanOrEqual(999);
    expect(first).toBeGreaterThan(900);
    expect(await minuteLeft()).toBe(first! - 1);
    expect((await exchangeOn(server)).status).toBe(200);
    const key = await freshTenantKey();
    expect((await inverted.request('/api/v1/key', { key })).status).toBe(200);
    expect(linesOf(server.logs, BACK)).toBe(1);
    expect(linesOf(server.logs, LOST)).toBe(1);
    expect(internalErrors(server.logs)).toBe(0);
  });
});
