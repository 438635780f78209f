// The API's rate limits (src/limits/api-rate-limits.ts, docs/rate-limits.md), on the real
// server and its PostgreSQL counter store: per key and per organization, 429 with Retry-After in the
// envelope (REST, tRPC and a raw route), the settings row over the environment's defaults, platform
// keys never limited, 401 and 403 before the limit and not counted, exactly L of N concurrent
// requests on one server and across two replicas, a change of the settings at once, and the
// allowances: one round trip to the store for many requests. Every test stays inside one window of
// 60 s (a window starts with the caller's first request).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { allowanceOf } from '../../src/limits/api-rate-limits.js';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { createOrganization, until, type OrgFixture } from '../fixtures.js';
import { createMember } from '../fixtures-catalog.js';
import { inProcessReplica } from '../fixtures-replica.js';
import { ok } from '../fixtures-trpc.js';

type Requester = Pick<TestServer, 'request'>;

const getKey = (server: Requester, key: string) => server.request('/api/v1/key', { key });

/** An organization whose settings row sets its API limits (as the platform sets them, before any of its keys calls). */
async function limitedOrganization(
  server: TestServer,
  limits: { api_requests_per_minute_per_key?: number; api_requests_per_minute?: number },
): Promise<OrgFixture> {
  const org = await createOrganization(server.db, 'Limited');
  await ok(server, 'organizations.updateSettings', { organization_id: org.organizationId, ...limits });
  return org;
}

async function expectRefused(res: Response, limit: 'key' | 'organization', perMinute: number) {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  const body = (await res.json()) as { error: { code: number; message: string; metadata: Record<string, unknown> } };
  expect(body.error).toMatchObject({ code: 429, message: 'Rate limit exceeded', metadata: { limit, requests_per_minute: perMinute } });
  expect(Date.parse(body.error.metadata.resets_at as string)).toBeGreaterThan(Date.now());
}

describe('allowances', () => {
  it('take 1% of the limit at a time, at most 1,000, at most an eighth of what the store has left, at least 1', () => {
    expect(allowanceOf(5, null)).toBe(1);
    expect(allowanceOf(199, null)).toBe(1);
    expect(allowanceOf(200, null)).toBe(2);
    expect(allowanceOf(10_000, null)).toBe(100);
    expect(allowanceOf(600_000, null)).toBe(1_000);
    expect(allowanceOf(600_000, 4_000)).toBe(500);
    expect(allowanceOf(600_000, 7)).toBe(1);
    expect(allowanceOf(600_000, 0)).toBe(1);
  });
});

describe('the API rate limits, with the default limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("a key past its limit gets 429 with Retry-After in the envelope; its organization's other keys and other organizations go on", async () => {
    const org = await limitedOrganization(server, { api_requests_per_minute_per_key: 3 });
    const sibling = await createMember(server.db, org.organizationId);
    for (let i = 0; i < 3; i++) expect((await getKey(server, org.managementKey)).status).toBe(200);
    await expectRefused(await getKey(server, org.managementKey), 'key', 3);
    // Every operation of the key, not only GET /key.
    await expectRefused(await server.request('/api/v1/keys', { key: org.managementKey }), 'key', 3);
    expect((await getKey(server, sibling.key)).status).toBe(200);
    expect((await getKey(server, server.managementKey)).status).toBe(200);
  });

  it("an organization past its limit: every one of its keys gets 429, naming the organization's limit", async () => {
    const org = await limitedOrganization(server, { api_requests_per_minute: 4 });
    const member = await createMember(server.db, org.organizationId);
    for (const key of [org.managementKey, org.managementKey, member.key, member.key]) expect((await getKey(server, key)).status).toBe(200);
    await expectRefused(await getKey(server, org.managementKey), 'organization', 4);
    await expectRefused(await getKey(server, member.key), 'organization', 4);
    expect((await getKey(server, server.managementKey)).status).toBe(200);
  });

  it('tRPC calls of tenant keys are counted too: 429 TOO_MANY_REQUESTS with Retry-After', async () => {
    const org = await limitedOrganization(server, { api_requests_per_minute_per_key: 1 });
    expect((await server.request('/trpc/keys.current', { key: org.managementKey })).status).toBe(200);
    const res = await server.request('/trpc/keys.current', { key: org.managementKey });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await res.json()) as { error: { message: string; data: { code: string; httpStatus: number; metadata: Record<string, unknown> } } };
    expect(body.error).toMatchObject({
      message: 'Rate limit exceeded',
      data: { code: 'TOO_MANY_REQUESTS', httpStatus: 429, metadata: { limit: 'key', requests_per_minute: 1 } },
    });
  });

  it('a raw route (GET /files/{id}/content) is counted: 429 before the handler runs', async () => {
    const org = await limitedOrganization(server, { api_requests_per_minute_per_key: 1 });
    expect((await server.request('/api/v1/files/file-nothing/content', { key: org.managementKey })).status).not.toBe(429);
    await expectRefused(await server.request('/api/v1/files/file-nothing/content', { key: org.managementKey }), 'key', 1);
  });

  it('no key is 401, never 429; a regular key on a management operation is 403 and not counted', async () => {
    const org = await limitedOrganization(server, { api_requests_per_minute_per_key: 2 });
    const member = await createMember(server.db, org.organizationId);
    for (let i = 0; i < 5; i++) {
      expect((await server.request('/api/v1/keys', { key: null })).status).toBe(401);
      expect((await server.request('/api/v1/keys', { key: member.key })).status).toBe(403);
    }
    expect((await getKey(server, member.key)).status).toBe(200);
    expect((await getKey(server, member.key)).status).toBe(200);
    await expectRefused(await getKey(server, member.key), 'key', 2);
  });

  it('of 60 concurrent requests of one key against a limit of 20, exactly 20 pass', async () => {
    const org = await limitedOrganization(server, { api_requests_per_minute_per_key: 20 });
    const statuses = await Promise.all(Array.from({ length: 60 }, () => getKey(server, org.managementKey).then((res) => res.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);
  });

  it('two replicas share the count: of 60 concurrent requests across both against a limit of 20, exactly 20 pass', async () => {
    const replica = await inProcessReplica(server);
    try {
      const org = await limitedOrganization(server, { api_requests_per_minute: 20 });
      const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => getKey(i % 2 ? replica : server, org.managementKey).then((res) => res.status)));
      expect(statuses.filter((s) => s === 200)).toHaveLength(20);
      expect(statuses.filter((s) => s === 429)).toHaveLength(40);
    } finally {
      await replica.close();
    }
  });

  it('a change of the settings applies at once: a refused key passes after its limit is raised', async () => {
    const org = await limitedOrganization(server, { api_requests_per_minute_per_key: 1 });
    expect((await getKey(server, org.managementKey)).status).toBe(200);
    await expectRefused(await getKey(server, org.managementKey), 'key', 1);
    await ok(server, 'organizations.updateSettings', { organization_id: org.organizationId, api_requests_per_minute_per_key: 3 });
    // The write is announced to every replica (cache-events.ts); this one hears it within the bound.
    await until(async () => (await getKey(server, org.managementKey)).status === 200, { what: 'the raised limit to apply' });
  });

  it('the default limits hold allowances: 300 requests of one key take 1,000 points from the store in one round trip each for the key and its organization', async () => {
    const org = await createOrganization(server.db, 'Busy');
    const key = await server.db.apiKey.findFirstOrThrow({ where: { organization_id: org.organizationId } });
    for (let i = 0; i < 30; i++) {
      const statuses = await Promise.all(Array.from({ length: 10 }, () => getKey(server, org.managementKey).then((res) => res.status)));
      expect(statuses.every((s) => s === 200)).toBe(true);
    }
    const rows = await server.db.$queryRaw<Array<{ key: string; points: number }>>`
      SELECT key, points FROM limiter_counters WHERE key IN (${`api_key_minute:${key.id}`}, ${`api_organization_minute:${org.organizationId}`}) ORDER BY key`;
    expect(rows).toEqual([
      { key: `api_key_minute:${key.id}`, points: 1_000 },
      { key: `api_organization_minute:${org.organizationId}`, points: 1_000 },
    ]);
  });

  it('the platform sets the limits in the settings row, within bounds; a tenant key cannot', async () => {
    const org = await createOrganization(server.db, 'Bounds');
    const set = await ok(server, 'organizations.updateSettings', {
      organization_id: org.organizationId,
      api_requests_per_minute_per_key: 10,
      api_requests_per_minute: 50,
    });
    expect(set.data).toMatchObject({ api_requests_per_minute_per_key: 10, api_requests_per_minute: 50 });
    const reset = await ok(server, 'organizations.updateSettings', { organization_id: org.organizationId, api_requests_per_minute_per_key: null });
    expect(reset.data).toMatchObject({ api_requests_per_minute_per_key: null, api_requests_per_minute: 50 });
    for (const bad of [0, -1, 1.5, 100_000_001]) {
      const res = await server.request('/trpc/organizations.updateSettings', {
        key: server.platformKey,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ organization_id: org.organizationId, api_requests_per_minute: bad }),
      });
      expect(res.status, String(bad)).toBe(400);
    }
    const tenant = await server.request('/trpc/organizations.updateSettings', {
      key: org.managementKey,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ organization_id: org.organizationId, api_requests_per_minute: 100_000 }),
    });
    expect(tenant.status).toBe(403);
  });
});

describe('the API rate limits, with small defaults in the environment', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      adminUrl: inject('pgAdminUrl'),
      template: inject('pgTemplate'),
      env: { API_REQUESTS_PER_MINUTE_PER_KEY: '2', API_REQUESTS_PER_MINUTE_PER_ORGANIZATION: '1000', METRICS_PORT: '0' },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('tenant keys meet the default; an organization whose settings row says otherwise gets its own', async () => {
    const plain = await createOrganization(server.db, 'Default');
    expect((await getKey(server, plain.managementKey)).status).toBe(200);
    expect((await getKey(server, plain.managementKey)).status).toBe(200);
    await expectRefused(await getKey(server, plain.managementKey), 'key', 2);
    const own = await limitedOrganization(server, { api_requests_per_minute_per_key: 5 });
    for (let i = 0; i < 5; i++) expect((await getKey(server, own.managementKey)).status).toBe(200);
    await expectRefused(await getKey(server, own.managementKey), 'key', 5);
  });

  it('platform keys are never limited', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await server.request(`/trpc/organizations.list?input=${encodeURIComponent('{}')}`, { key: server.platformKey });
      expect(res.status).toBe(200);
    }
  });

  it('counts the rejections in switchyard_limiter_rejections_total, once per refused request', async () => {
    const metrics = async () => (await fetch(server.metricsUrl!)).text();
    const count = (text: string) => Number(/switchyard_limiter_rejections_total\{limit="api_key_minute"\} (\d+)/.exec(text)?.[1] ?? 'NaN');
    const before = count(await metrics());
    const org = await createOrganization(server.db, 'Counted');
    for (let i = 0; i < 5; i++) await getKey(server, org.managementKey);
    expect(count(await metrics())).toBe(before + 3);
  });
});
