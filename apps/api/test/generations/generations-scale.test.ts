// 5,000 generations for one key: GET /key still answers from the daily rollups (never touching
// generations) and GET /generation from the primary key. Checked with EXPLAIN ANALYZE on the exact
// SQL the services send (captured from Prisma), not with a timer.
import { createDb, type Db } from '@switchyard/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeySchema } from '@switchyard/schema';
import { authenticate, KeyCache } from '../../src/access/callers.js';
import { admitTenant } from '../../src/access/rules.js';
import { getKeyInfo } from '../../src/modules/keys/keys.service.js';
import { UsageCache } from '../../src/modules/keys/usage-cache.js';
import { getGeneration } from '../../src/modules/generations/generations.service.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { testServer } from '../fixtures.js';
import { createKey } from '../fixtures-catalog.js';
import { trpc } from '../fixtures-trpc.js';
import { scaled } from '@switchyard/db/testing';

const GENERATIONS = 5000;
const DAYS = 40;
const CONCURRENCY = 8;
const NOW = new Date('2026-07-15T12:00:00Z');

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

/** Rows a scan node read: those it returned plus those its filter threw away. */
const rowsRead = (n: PlanNode) =>
  ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) * (n['Actual Loops'] ?? 1);

let server: TestServer;
let traced: Db;
let captured: { query: string; params: string }[] = [];
let key: { key: string; hash: string };
const ids: string[] = [];
let expectedUsage = 0;

beforeAll(async () => {
  server = await testServer();
  server.setNow(NOW);
  await trpc(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 1_000_000 });
  key = await createKey(server);
  let next = 0;
  const worker = async () => {
    while (next < GENERATIONS) {
      const i = next++;
      const id = `gen-scale-${i}`;
      const usage = ((i % 7) + 1) / 1000;
      const created = new Date(NOW.getTime() - (i % DAYS) * 86_400_000 - (i % 3600) * 1000);
      const { status } = await trpc(server, 'generations.record', {
        id,
        api_key_hash: key.hash,
        model: i % 10 === 0 ? 'openai/gpt-oss-20b:free' : 'openai/gpt-4o',
        created_at: created.toISOString(),
        tokens_prompt: 100 + (i % 50),
        tokens_completion: 20,
        usage,
        total_cost: usage,
      });
      expect(status).toBe(200);
      ids.push(id);
      expectedUsage += usage;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await server.db.$executeRawUnsafe('ANALYZE generations, key_usage_daily, api_keys, organizations');
  traced = createDb(server.databaseUrl, { poolMax: 1, onQuery: (event) => captured.push(event) });
}, scaled(300_000));

afterAll(async () => {
  await traced?.$disconnect();
  await server?.close();
});

/** Runs fn on the traced client and EXPLAIN ANALYZEs every SELECT it sent. */
async function plansOf(fn: (db: Db) => Promise<unknown>): Promise<{ query: string; nodes: PlanNode[] }[]> {
  captured = [];
  await fn(traced);
  const selects = captured.filter((q) => /^\s*SELECT/i.test(q.query));
  expect(selects.length).toBeGreaterThan(0);
  const plans = [];
  for (const { query, params } of selects) {
    const rows = await server.db.$queryRawUnsafe<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${query}`,
      ...(JSON.parse(params) as unknown[]),
    );
    plans.push({ query, nodes: nodesOf(rows[0]!['QUERY PLAN'][0].Plan) });
  }
  return plans;
}

describe(`${GENERATIONS} generations for one key`, () => {
  it('were all recorded, and the rollups add up to the generations', async () => {
    expect(ids).toHaveLength(GENERATIONS);
    const [{ count, total }] = await server.db.$queryRaw<[{ count: bigint; total: string }]>`
      SELECT count(*) AS count, sum(g.usage)::text AS total FROM generations g JOIN api_keys k ON k.id = g.api_key_id WHERE k.hash = ${key.hash}`;
    expect(Number(count)).toBe(GENERATIONS);
    const rollup = await server.db.keyUsageDaily.aggregate({
      where: { api_key: { hash: key.hash } },
      _sum: { request_count: true, free_request_count: true, usage: true },
      _count: true,
    });
    expect(rollup._count).toBe(DAYS);
    expect(Number(rollup._sum.request_count)).toBe(GENERATIONS);
    expect(Number(rollup._sum.free_request_count)).toBe(GENERATIONS / 10);
    expect(rollup._sum.usage!.toString()).toBe(Number(total).toString());

    const res = await server.request('/api/v1/key', { key: key.key });
    const info = KeySchema.parse(((await res.json()) as { data: unknown }).data);
    expect(info.usage).toBeCloseTo(expectedUsage, 9);
    expect(info.usage).toBe(Number(total));
  });

  it('GET /key reads the key and at most its rollup rows, never generations', async () => {
    const plans = await plansOf(async (db) => {
      const actor = admitTenant(await authenticate(db, new KeyCache(0), key.hash, NOW), 'tenant');
      await getKeyInfo({ db, usage: new UsageCache(0), now: () => NOW }, actor);
    });
    const nodes = plans.flatMap((p) => p.nodes);
    expect(nodes.filter((n) => n['Relation Name'] === 'generations')).toEqual([]);
    const rollupScans = nodes.filter((n) => n['Relation Name'] === 'key_usage_daily');
    expect(rollupScans).toHaveLength(1);
    // Only the rows of the widest current period: on 2026-07-15 (a Wednesday) the month, 1..15 July.
    // (On a table this small PostgreSQL may scan the rollups sequentially rather than by primary
    // key; either way the work is bounded by rollup rows, one per key and day, not by generations.)
    expect(rollupScans[0]!['Actual Rows']).toBe(15);
    expect(await server.db.keyUsageDaily.count({ where: { api_key: { hash: key.hash } } })).toBe(DAYS);
  });

  it('GET /generation reads one generation through its primary key (management and regular keys)', async () => {
    for (const hash of [key.hash, (await server.db.apiKey.findFirstOrThrow({ where: { is_management_key: true } })).hash]) {
      const plans = await plansOf(async (db) => {
        const actor = admitTenant(await authenticate(db, new KeyCache(0), hash, NOW), 'tenant');
        const generation = await getGeneration({ db }, actor, { id: ids[GENERATIONS - 1]! });
        expect(generation.id).toBe(ids[GENERATIONS - 1]);
      });
      const scans = plans.flatMap((p) => p.nodes).filter((n) => n['Relation Name'] === 'generations');
      expect(scans).toHaveLength(1);
      expect(scans[0]).toMatchObject({ 'Node Type': 'Index Scan', 'Index Name': 'generations_pkey' });
      expect(rowsRead(scans[0]!)).toBe(1);
    }
  });
});
