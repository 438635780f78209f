import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, KeySchema } from '@switchyard/schema';
import { hashApiKey } from '../../src/access/key-format.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { addUsage, createOrganization, testServer, until } from '../fixtures.js';
import { ok, trpc, type InputOf } from '../fixtures-trpc.js';

/** GET /key's answer: { data: Key }, every field of the record and no other. */
const KeyAnswer = dataOf(KeySchema.strict());

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});
afterAll(async () => {
  await server?.close();
});

async function createKey(input: Partial<InputOf<'keys.create'>>): Promise<{ key: string; hash: string }> {
  const created = await ok(server, 'keys.create', { name: 'test key', ...input });
  return { key: created.key, hash: created.data.hash };
}

async function getKey(key: string | null) {
  const res = await server.request('/api/v1/key', { key });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as unknown };
}

describe('GET /key', () => {
  it('returns every field of the Key record and of compat.md for the management key', async () => {
    const { status, type, body } = await getKey(server.managementKey);
    expect(status).toBe(200);
    expect(type).toMatch(/^application\/json/);
    const key = KeyAnswer.parse(body).data;
    expect(key).toMatchObject({
      is_management_key: true,
      is_provisioning_key: false,
      is_free_tier: false,
      limit: null,
      limit_remaining: null,
      limit_reset: null,
      include_byok_in_limit: false,
      usage: 0,
      usage_daily: 0,
      usage_weekly: 0,
      usage_monthly: 0,
      byok_usage: 0,
      expires_at: null,
      allowed_data_regions: ['global'],
      free_model_daily_requests: { used: 0, limit: 50, remaining: 50 },
      rate_limit: { requests: -1, interval: '10s' },
    });
    expect(key.rate_limit.note).toMatch(/safe to ignore/);
    expect(key.label).toMatch(/^sk-sy-v1-[0-9a-f]{3}\.\.\.[0-9a-f]{3}$/);
    expect(key.label.slice(9, 12)).toBe(server.managementKey.slice(9, 12));
    expect(key.label.slice(-3)).toBe(server.managementKey.slice(-3));
    expect(key.organization_id).toMatch(/^org_/);
    expect(key.workspace_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(key.creator_user_id).toMatch(/^user_/);
    expect(JSON.stringify(body)).not.toContain(server.managementKey);
  });

  it('answers a regular key with its own record, and expires_at in ISO 8601 with Z', async () => {
    const { key } = await createKey({ limit: 10, limit_reset: 'monthly', expires_at: '2099-01-02T03:04:05+02:00' });
    const { status, body } = await getKey(key);
    expect(status).toBe(200);
    expect(KeyAnswer.parse(body).data).toMatchObject({ is_management_key: false, limit: 10, limit_remaining: 10, limit_reset: 'monthly' });
    expect(KeyAnswer.parse(body).data.expires_at).toBe('2099-01-02T01:04:05.000Z');
  });

  describe('usage windows (UTC day, Monday-start week, calendar month)', () => {
    it('splits spend at UTC midnight, between Sunday and Monday, and at month end', async () => {
      const { key, hash } = await createKey({});
      // Monday 2026-06-01 is both a week start and a month start.
      await addUsage(server.db, hash, '2026-05-29', 1); // Friday: previous week and month
      await addUsage(server.db, hash, '2026-05-31', 2, 0.5); // Sunday, last day of May
      await addUsage(server.db, hash, '2026-06-01', 4, 0.25); // Monday, first of June
      await addUsage(server.db, hash, '2026-06-02', 8); // Tuesday

      server.setNow(new Date('2026-05-31T23:59:59.999Z'));
      let { body } = await getKey(key);
      expect(KeyAnswer.parse(body).data).toMatchObject({
        usage: 15,
        usage_daily: 2,
        usage_weekly: 3, // Mon 25 May .. Sun 31 May
        usage_monthly: 3, // May
        byok_usage: 0.75,
        byok_usage_daily: 0.5,
        byok_usage_weekly: 0.5,
        byok_usage_monthly: 0.5,
      });

      server.setNow(new Date('2026-06-01T00:00:00.000Z'));
      ({ body } = await getKey(key));
      expect(KeyAnswer.parse(body).data).toMatchObject({ usage_daily: 4, usage_weekly: 4, usage_monthly: 4, byok_usage_daily: 0.25 });

      server.setNow(new Date('2026-06-02T12:00:00.000Z'));
      ({ body } = await getKey(key));
      expect(KeyAnswer.parse(body).data).toMatchObject({ usage: 15, usage_daily: 8, usage_weekly: 12, usage_monthly: 12, byok_usage_monthly: 0.25 });
      server.setNow(null);
    });

    it('counts a week that straddles two months in full, and a month in full across weeks', async () => {
      const { key, hash } = await createKey({});
      // Week of Mon 2026-06-29 .. Sun 2026-07-05.
      await addUsage(server.db, hash, '2026-06-29', 1);
      await addUsage(server.db, hash, '2026-06-30', 2);
      await addUsage(server.db, hash, '2026-07-01', 4);
      server.setNow(new Date('2026-07-05T18:00:00Z'));
      const { body } = await getKey(key);
      expect(KeyAnswer.parse(body).data).toMatchObject({ usage_daily: 0, usage_weekly: 7, usage_monthly: 4, usage: 7 });
      server.setNow(null);
    });

    it('counts free-model requests of the current UTC day', async () => {
      const { key, hash } = await createKey({});
      await addUsage(server.db, hash, '2026-03-09', 0, 0, 7);
      await addUsage(server.db, hash, '2026-03-10', 0, 0, 3);
      server.setNow(new Date('2026-03-10T08:00:00Z'));
      const { body } = await getKey(key);
      expect(KeyAnswer.parse(body).data.free_model_daily_requests).toEqual({ used: 3, limit: 50, remaining: 47 });
      server.setNow(null);
    });
  });

  describe('limit_remaining', () => {
    const now = new Date('2026-06-03T10:00:00Z'); // Wednesday
    async function keyWithSpend(input: Partial<InputOf<'keys.create'>>) {
      const created = await createKey(input);
      await addUsage(server.db, created.hash, '2026-05-20', 5, 1); // an earlier month
      await addUsage(server.db, created.hash, '2026-06-01', 2, 1); // this week and month
      await addUsage(server.db, created.hash, '2026-06-03', 1, 0.5); // today
      server.setNow(now);
      const { body } = await getKey(created.key);
      server.setNow(null);
      return KeyAnswer.parse(body).data;
    }

    it('is the limit minus lifetime usage when limit_reset is null', async () => {
      expect((await keyWithSpend({ limit: 20 })).limit_remaining).toBe(12);
    });
    it('uses the current day, week or month for daily, weekly and monthly limits', async () => {
      expect((await keyWithSpend({ limit: 20, limit_reset: 'daily' })).limit_remaining).toBe(19);
      expect((await keyWithSpend({ limit: 20, limit_reset: 'weekly' })).limit_remaining).toBe(17);
      expect((await keyWithSpend({ limit: 20, limit_reset: 'monthly' })).limit_remaining).toBe(17);
    });
    it('includes BYOK spend when include_byok_in_limit is true', async () => {
      expect((await keyWithSpend({ limit: 20, include_byok_in_limit: true })).limit_remaining).toBe(9.5);
      expect((await keyWithSpend({ limit: 20, limit_reset: 'daily', include_byok_in_limit: true })).limit_remaining).toBe(18.5);
    });
    it('is floored at 0 and null without a limit', async () => {
      expect((await keyWithSpend({ limit: 3 })).limit_remaining).toBe(0);
      expect((await keyWithSpend({})).limit_remaining).toBeNull();
    });
    it('keeps exact decimal sums', async () => {
      const { key, hash } = await createKey({ limit: 1 });
      for (const day of ['2026-01-01', '2026-01-02', '2026-01-03']) await addUsage(server.db, hash, day, 0.1);
      const { body } = await getKey(key);
      expect(KeyAnswer.parse(body).data.usage).toBe(0.3);
      expect(KeyAnswer.parse(body).data.limit_remaining).toBe(0.7);
    });
  });

  describe('401', () => {
    const unauthorized = { error: { code: 401, message: 'Missing Authentication header' } };
    it('without an Authorization header', async () => {
      expect(await getKey(null)).toMatchObject({ status: 401, body: unauthorized });
    });
    it('with a malformed header or an unknown key: the same message, and a reason telling the two apart', async () => {
      const cases = [
        ['Basic abc', 'missing key'],
        ['Bearer', 'missing key'],
        [server.managementKey, 'missing key'],
        [`Bearer sk-sy-v1-${'0'.repeat(64)}`, 'unknown key'],
        ['Bearer not-a-key-at-all', 'unknown key'],
      ] as const;
      for (const [header, reason] of cases) {
        const res = await server.request('/api/v1/key', { key: null, headers: { authorization: header } });
        expect(res.status).toBe(401);
        // Nothing but the status, the message, the reason and the request's id.
        expect(await res.json(), header).toEqual({ error: { ...unauthorized.error, metadata: { reason, request_id: res.headers.get('x-request-id') } } });
      }
      // Over tRPC, the same reason.
      const trpcRes = await server.request('/trpc/keys.current', { key: null });
      expect(trpcRes.status).toBe(401);
      expect(JSON.stringify(await trpcRes.json())).toContain('"reason":"missing key"');
    });
    it('with a disabled key: the reason says so (only the holder of its secret can learn it)', async () => {
      const { key, hash } = await createKey({});
      expect((await trpc(server, 'keys.update', { hash, disabled: true })).status).toBe(200);
      expect(await getKey(key)).toMatchObject({ status: 401, body: { error: { ...unauthorized.error, metadata: { reason: 'disabled key' } } } });
    });
    it('with a key disabled through keys.update: at once', async () => {
      const { key, hash } = await createKey({});
      expect((await getKey(key)).status).toBe(200);
      expect((await trpc(server, 'keys.update', { hash, disabled: true })).status).toBe(200);
      expect(await getKey(key)).toMatchObject({ status: 401, body: unauthorized });
    });
    it('with a key disabled by another process (straight to the database)', async () => {
      const { key, hash } = await createKey({});
      expect((await getKey(key)).status).toBe(200);
      await server.db.apiKey.update({ where: { hash }, data: { disabled: true } });
      // This server read the row just now and may use it until its TTL runs out, then reads again.
      await until(async () => (await getKey(key)).status === 401, { everyMs: 50, what: 'the key disabled elsewhere to be refused' });
      expect(await getKey(key)).toMatchObject({ status: 401, body: unauthorized });
    });
    it('with an expired key', async () => {
      server.setNow(new Date('2025-12-31T23:59:59Z'));
      const { key } = await createKey({ expires_at: '2026-01-01T00:00:00Z' });
      expect((await getKey(key)).status).toBe(200);
      server.setNow(new Date('2026-01-01T00:00:00Z'));
      expect(await getKey(key)).toMatchObject({ status: 401, body: { error: { ...unauthorized.error, metadata: { reason: 'expired key' } } } });
      server.setNow(null);
    });
  });

  it("shows another organization's key only its own organization and spend", async () => {
    const other = await createOrganization(server.db);
    await addUsage(server.db, hashApiKey(other.managementKey), '2026-02-02', 42);
    const mine = await getKey(server.managementKey);
    const theirs = await getKey(other.managementKey);
    expect(KeyAnswer.parse(theirs.body).data.organization_id).toBe(other.organizationId);
    expect(KeyAnswer.parse(theirs.body).data.workspace_id).toBe(other.workspaceId);
    expect(KeyAnswer.parse(theirs.body).data.usage).toBe(42);
    expect(KeyAnswer.parse(mine.body).data.organization_id).not.toBe(other.organizationId);
    expect(KeyAnswer.parse(mine.body).data.usage).toBe(0);
  });
});
