// The fair share of the server, on the real server and PostgreSQL: POST /analytics/query's
// statement and shaping run in a worker thread on connections of its own (never the server's pool
// or its event loop); a query past its time is 408 and the thread goes on with another
// organization's; and the costliest other operations (here GET /organization/members) take a share
// per organization, so that one tenant's stream of them never keeps another's waiting.
import { inject, describe, expect, it } from 'vitest';
import { startTestServer } from '../../src/testing/test-server.js';
import { createOrganization, until } from '../fixtures.js';
import { expectEnvelope, rest } from '../fixtures-admin.js';
import { record } from '../fixtures-catalog.js';
import { testServerWith } from '../fixtures-files.js';
import { lockAnalyticsTables, slotsAre, withLockedTables } from '../fixtures-locks.js';
import { scaled } from '@switchyard/db/testing';

describe('the analytics worker thread', () => {
  it("runs the statement on connections of its own, never on the server's pool, and answers from it", async () => {
    const sent: string[] = [];
    const server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), onQuery: ({ query }) => void sent.push(query) });
    try {
      const key = await server.db.apiKey.findFirstOrThrow({ where: { organization_id: server.organizationId } });
      await record(server, { api_key_hash: key.hash, created_at: new Date(Date.now() - 3_600_000).toISOString(), latency: 120 });
      const answer = await rest(server, '/analytics/query', { method: 'POST', json: { metrics: ['request_count', 'p50_latency'] } });
      expect(answer.status).toBe(200);
      expect((answer.body as { data: { data: Record<string, number>[] } }).data.data).toEqual([{ request_count: 1, p50_latency: expect.closeTo(120, -1) }]);
      expect(sent.filter((query) => query.includes('WITH src AS'))).toEqual([]);
      const [worker] = await server.db.$queryRaw<{ n: bigint }[]>`
        SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'switchyard-analytics'`;
      expect(Number(worker!.n)).toBeGreaterThanOrEqual(1);
    } finally {
      await server.close();
    }
  });

  it(
    "a query past its time is 408, and the thread goes on: another organization's query in flight on it is answered",
    async () => {
      // Both windows of this test (the second must be waiting before the first's time is up, and
      // must be answered before its own is) are halves of the query's time, which grows with the
      // machine's load.
      const timeoutMs = scaled(3_000);
      await withLockedTables({ ANALYTICS_QUERY_TIMEOUT_MS: String(timeoutMs) }, async (limited, lock) => {
        const other = await createOrganization(limited.db, 'Neighbour');
        const query = (key: string) => rest(limited, '/analytics/query', { method: 'POST', key, json: { metrics: ['request_count'] } });
        const first = query(limited.managementKey);
        await until(async () => (await lock.blocked()) === 1);
        // The second starts half the time later: when the first's time is up, the second has half of its own left.
        await until(async () => (await lock.longestSeconds()) > timeoutMs / 2_000, { everyMs: 50, what: 'the first statement to have waited half its time' });
        const second = query(other.managementKey);
        await until(async () => (await lock.blocked()) === 2);
        expectEnvelope(await first, 408);
        await lock.release();
        const answered = await second;
        expect(answered.status).toBe(200);
        // The neighbour has recorded nothing: no group.
        expect((answered.body as { data: { data: unknown[] } }).data.data).toEqual([]);
      });
    },
    scaled(60_000),
  );
});

describe("the heavy operations' share per organization (HEAVY_OPERATIONS_CONCURRENCY)", () => {
  it("GET /organization/members: one organization runs at most half of them at once, the rest wait in the server; another organization's run meanwhile", async () => {
    const server = await testServerWith({ HEAVY_OPERATIONS_CONCURRENCY: '2', METRICS_PORT: '0', CACHE_TTL_MS: '0' });
    // Made before the lock: its owner is a row of the locked table.
    const other = await createOrganization(server.db, 'Neighbour');
    const lock = await lockAnalyticsTables(server, 'organization_members', '%organization_members%');
    try {
      const members = (key: string) => rest(server, '/organization/members', { key });
      const first = members(server.managementKey);
      await until(async () => (await lock.blocked()) === 1);
      const second = members(server.managementKey);
      await slotsAre(server, 'heavy', 1, 1);
      // The other organization's request is not behind the first one's second: it runs.
      const theirs = members(other.managementKey);
      await slotsAre(server, 'heavy', 2, 1);
      await until(async () => (await lock.blocked()) === 2);
      await lock.release();
      for (const answer of await Promise.all([first, second, theirs])) expect(answer.status).toBe(200);
      await slotsAre(server, 'heavy', 0, 0);
    } finally {
      await lock.release();
      await server.close();
    }
  });
});
