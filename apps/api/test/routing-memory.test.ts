// Issue 36, "Speed": a decision that reserves nothing makes no database round trip. On the real
// server and PostgreSQL, with a key that has a limit, a workspace budget and a guardrail with a
// spend limit (so that every rule runs), every statement the server's pool sends is counted:
// once the caches are warm, decisions with estimated_cost 0 send none while the spend they read
// is younger than USAGE_CACHE_MS, and a decision that reserves makes its one statement.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing.js';
import { UNTIL_TIMEOUT_MS } from './fixtures.js';
import { createKey, importDemoCatalog } from './fixtures-catalog.js';
import { ok, trpcRaw } from './fixtures-trpc.js';
import { RoutingAuthorizeOutputSchema } from '@switchyard/schema';

/** Spend read for a decision that reserves nothing is reused this long (ms): the setting's largest value. */
const USAGE_CACHE_MS = 1_000;
/** Rows (keys, guardrails, workspaces, the catalog) are kept this long (ms): the largest value. */
const CACHE_TTL_MS = 60_000;
/** Decisions made while the caches are warm, in rounds of CONCURRENT at once. */
const DECISIONS = 64;
const CONCURRENT = 32;

const statements: string[] = [];
let server: TestServer;
let hash: string;
let guardrailId: string;

beforeAll(async () => {
  server = await startTestServer({
    adminUrl: inject('pgAdminUrl'),
    template: inject('pgTemplate'),
    // No reservation sweep: it would be a statement no decision made.
    env: { USAGE_CACHE_MS: String(USAGE_CACHE_MS), CACHE_TTL_MS: String(CACHE_TTL_MS), RESERVATION_SWEEP_INTERVAL_MS: '0' },
    onQuery: (event) => void statements.push(event.query),
  });
  await importDemoCatalog(server);
  await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 1000 });
  ({ hash } = await createKey(server, { limit: 500, limit_reset: 'monthly' }));
  await ok(server, 'budgets.set', { workspace_ref: server.workspaceId, interval: 'monthly', limit_usd: 800 });
  const guardrail = await ok(server, 'guardrails.create', { name: 'capped', limit_usd: 600, reset_interval: 'monthly', allowed_providers: ['openai'] });
  guardrailId = guardrail.data.id;
  await ok(server, 'guardrails.assignKeys', { id: guardrailId, key_hashes: [hash] });
});

afterAll(async () => {
  await server?.close();
});

async function authorize(estimatedCost = 0) {
  const { status, data, error } = await trpcRaw(server, 'routing.authorize', { api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: estimatedCost });
  expect(status, JSON.stringify(error)).toBe(200);
  const decision = RoutingAuthorizeOutputSchema.parse(data).data;
  if (!decision.allowed) throw new Error(`refused: ${JSON.stringify(decision)}`);
  return decision;
}

/** The statements the server sent while `fn` ran. */
async function sentDuring<T>(fn: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const before = statements.length;
  const result = await fn();
  return { result, sent: statements.slice(before) };
}

const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 160);

describe('routing.authorize from memory', () => {
  it('decides with estimated_cost 0 without a statement while the spend it read is fresh; every rule applied', async () => {
    // Warm the caches, and wait for the notifications of the writes above (each forgets what it
    // names) to have arrived: until two decisions in a row send nothing.
    const deadline = performance.now() + UNTIL_TIMEOUT_MS;
    let quiet = 0;
    while (quiet < 2) {
      if (performance.now() > deadline) throw new Error(`decisions kept sending statements: ${statements.slice(-5).map(oneLine).join(' | ')}`);
      const { result, sent } = await sentDuring(() => authorize());
      expect(result.remaining.map((r) => r.limit)).toEqual(['key', `guardrail:${guardrailId}`, 'budget:monthly', 'credits']);
      quiet = sent.length === 0 ? quiet + 1 : 0;
    }

    // The rows stay cached for CACHE_TTL_MS; the spend for USAGE_CACHE_MS. Each attempt starts with
    // the decision that reads the spend again (the first once the last read expired), then makes
    // DECISIONS more: the attempt counts only when they all finished within USAGE_CACHE_MS of that
    // read (a busy machine may need another attempt).
    const rowsRead = performance.now();
    for (let attempt = 1; ; attempt++) {
      if (performance.now() > deadline || performance.now() - rowsRead > CACHE_TTL_MS / 2) {
        throw new Error(`no attempt made ${DECISIONS} decisions within ${USAGE_CACHE_MS} ms of reading the spend (${attempt - 1} attempts)`);
      }
      const started = performance.now();
      const first = await sentDuring(() => authorize());
      if (!first.sent.some((sql) => sql.includes('routing_spend'))) {
        // The spend read earlier is still fresh: the next decision after it expires reads it again.
        expect(first.sent.map(oneLine)).toEqual([]);
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      // What a decision reads once its cache is cold: the spend alone (the rows are still cached).
      expect(first.sent.map(oneLine)).toEqual([expect.stringContaining('routing_spend')]);
      const { result: decisions, sent } = await sentDuring(async () => {
        const made = [];
        for (let round = 0; round < DECISIONS / CONCURRENT; round++) made.push(...(await Promise.all(Array.from({ length: CONCURRENT }, () => authorize()))));
        return made;
      });
      if (performance.now() - started >= USAGE_CACHE_MS) continue;
      expect(sent.map(oneLine)).toEqual([]);
      expect(decisions).toHaveLength(DECISIONS);
      for (const decision of decisions) {
        expect(decision.reservation_id).toBeNull();
        expect(decision.remaining).toEqual(first.result.remaining);
      }
      return;
    }
  });

  it('a decision that reserves makes one statement, routing_reserve(), however warm the caches', async () => {
    await authorize();
    for (let i = 0; i < 3; i++) {
      const { result, sent } = await sentDuring(() => authorize(0.01));
      expect(result.reservation_id).not.toBeNull();
      expect(sent.map(oneLine)).toEqual([expect.stringContaining('routing_reserve(')]);
    }
  });
});
