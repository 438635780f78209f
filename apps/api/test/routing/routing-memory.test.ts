// A decision that reserves nothing makes no database round trip. On the real
// server and PostgreSQL, with a key that has a limit, a workspace budget and a guardrail with a
// spend limit (so that every rule runs), every statement the server's pool sends is counted:
// once the caches are warm, decisions with estimated_cost 0 send none of their own (the spend they
// use is read at most once per USAGE_CACHE_MS, however many decisions use it), and a decision that
// reserves makes its one statement.
import { KEY_USES_FLUSH_MS } from '../../src/access/callers.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { UNTIL_TIMEOUT_MS } from '../fixtures.js';
import { createKey, importDemoCatalog } from '../fixtures-catalog.js';
import { ok, trpcRaw } from '../fixtures-trpc.js';
import { RoutingAuthorizeOutputSchema } from '@switchyard/schema';

/** Spend read for a decision that reserves nothing is reused this long (ms): the setting's largest value. */
const USAGE_CACHE_MS = 1_000;
/** Rows (keys, guardrails, workspaces, the catalog) are kept this long (ms): the largest value. */
const CACHE_TTL_MS = 60_000;
/** Decisions are made CONCURRENT at a time, for MEASURED_MS, once the caches are warm. */
const CONCURRENT = 32;
const MEASURED_MS = 3_000;

const statements: string[] = [];
let server: TestServer;
let hash: string;
let guardrailId: string;

beforeAll(async () => {
  server = await startTestServer({
    adminUrl: inject('pgAdminUrl'),
    template: inject('pgTemplate'),
    // No reservation sweep, no look for queued jobs or due deliveries every second: statements no decision made.
    env: {
      USAGE_CACHE_MS: String(USAGE_CACHE_MS),
      CACHE_TTL_MS: String(CACHE_TTL_MS),
      RESERVATION_SWEEP_INTERVAL_MS: '0',
      JOB_POLL_MS: '0',
      DELIVERY_POLL_MS: '0',
    },
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

/** The write of the secrets' last uses (access/callers.ts): one statement per KEY_USES_FLUSH_MS for every key, never one per decision. */
const isUseFlush = (sql: string) => /^\s*UPDATE api_key_secrets s SET last_used_at/.test(sql);

/** The statements the server sent while `fn` ran (`sent`), but the writes of last uses (`uses`). */
async function sentDuring<T>(fn: () => Promise<T>): Promise<{ result: T; sent: string[]; uses: number }> {
  const before = statements.length;
  const result = await fn();
  const all = statements.slice(before);
  return { result, sent: all.filter((sql) => !isUseFlush(sql)), uses: all.filter(isUseFlush).length };
}

const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 160);

describe('routing.authorize from memory', () => {
  it('decides with estimated_cost 0 without a statement per decision: the spend is read once per USAGE_CACHE_MS, the rows not at all', async () => {
    // Warm the caches, and wait for the notifications of the writes above (each forgets what it
    // names) to have arrived: until two decisions in a row send nothing.
    const started = performance.now();
    const deadline = started + UNTIL_TIMEOUT_MS;
    let quiet = 0;
    while (quiet < 2) {
      if (performance.now() > deadline) throw new Error(`decisions kept sending statements: ${statements.slice(-5).map(oneLine).join(' | ')}`);
      const { result, sent } = await sentDuring(() => authorize());
      expect(result.remaining.map((r) => r.limit)).toEqual(['key', `guardrail:${guardrailId}`, 'budget:monthly', 'credits']);
      quiet = sent.length === 0 ? quiet + 1 : 0;
    }

    // Then decisions, CONCURRENT at a time, for MEASURED_MS. The rows (read less than CACHE_TTL_MS / 2
    // ago, so not even refreshed ahead) are never read again. The spend is read again ahead of its
    // expiry, in the background, at most once per 3/4 of USAGE_CACHE_MS, however many decisions
    // use it, and however slow its read (a value that expires during its refresh waits for it).
    const measuredFrom = performance.now();
    const {
      result: decisions,
      sent,
      uses,
    } = await sentDuring(async () => {
      const made = [];
      while (performance.now() - measuredFrom < MEASURED_MS) made.push(...(await Promise.all(Array.from({ length: CONCURRENT }, () => authorize()))));
      return made;
    });
    const elapsed = performance.now() - measuredFrom;
    expect(performance.now() - started, 'the rows were read long enough ago to be refreshed').toBeLessThan(CACHE_TTL_MS / 2);
    const reads = Math.floor(elapsed / ((USAGE_CACHE_MS * 3) / 4)) + 1;
    const what = `${decisions.length} decisions in ${elapsed.toFixed(0)} ms sent ${sent.length} statements`;
    expect(sent.map(oneLine), what).toEqual(sent.map(() => expect.stringContaining('routing_spend')));
    expect(sent.length, what).toBeLessThanOrEqual(reads);
    expect(uses, what).toBeLessThanOrEqual(Math.floor(elapsed / KEY_USES_FLUSH_MS) + 1);
    expect(decisions.length, what).toBeGreaterThan((sent.length * CONCURRENT) / 4);
    for (const decision of decisions) {
      expect(decision.reservation_id).toBeNull();
      expect(decision.remaining).toEqual(decisions[0]!.remaining);
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
