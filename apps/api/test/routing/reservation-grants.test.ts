// The reservation statement's partial grant and give-back (routing.service.ts grant() and
// giveBack(), the edge decider's leases stand on them), on the real server and PostgreSQL: up to
// `wanted`, at least `min`, across every limit that applies, exact under concurrency; the running
// totals that routing_spend() reads (migration "reservation_running_totals") equal the sums they
// replace after every kind of write; and the statement's work does not grow with keys, open
// reservations or days of history. A minted key's grant holds against its makers' limits too, over
// each maker's whole lineage (migration "minted_keys").
import { createHash, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Prisma, queryRows } from '@switchyard/db';
import { ExchangedKeySchema } from '@switchyard/schema';
import { limitChecks } from '@switchyard/rules';
import { beforeAll, describe, expect, it } from 'vitest';
import { KeyCache, SERVER_ACTOR } from '../../src/access/callers.js';
import { GuardrailCache } from '../../src/modules/guardrails/guardrail-cache.js';
import { expireReservations, giveBack, grant, release, WorkspaceRoutingCache } from '../../src/modules/routing/routing.service.js';
import { ReservationQueue } from '../../src/modules/routing/reservation-queue.js';
import type { Reservation } from '../../src/modules/routing/routing-queries.js';
import { SpendCache, sinceOf } from '../../src/modules/routing/spend.js';
import { addUsage, useServer } from '../fixtures.js';
import { createKey, importDemoCatalog, record } from '../fixtures-catalog.js';
import { ok } from '../fixtures-trpc.js';

const env = useServer('Grants neighbour');

/** node-postgres, as the server runs it: one connection, so that a statement's plan is its own backend's. */
const pg = createRequire(import.meta.resolve('@switchyard/db'))('pg') as {
  Client: new (options: {
    connectionString: string;
  }) => {
    connect(): Promise<void>;
    query(text: string, values: unknown[]): Promise<{ rows: { 'QUERY PLAN': { Plan: Record<string, number> }[] }[] }>;
    end(): Promise<void>;
  };
};

beforeAll(async () => {
  await importDemoCatalog(env.server);
  await ok(env.server, 'generations.addCredits', { organization_id: env.server.organizationId, amount: 1000 });
});

/** One queue for every call, as a server process has: concurrent grants of an organization go together. */
const reservations = new ReservationQueue((statement, values) => queryRows(env.server.db, statement, values));

/** What the services read, fresh for every call (no cache keeps a figure between them). */
const deps = () => ({
  db: env.server.db,
  keys: new KeyCache(0),
  guardrails: new GuardrailCache(0),
  workspaceRouting: new WorkspaceRoutingCache(0),
  spend: new SpendCache(0),
  reservations,
  reservationTtlMs: 600_000,
  now: () => new Date(),
});

const today = () => new Date().toISOString().slice(0, 10);

async function granted(hash: string, min: number, wanted: number) {
  const answer = await grant(deps(), SERVER_ACTOR, { api_key_hash: hash, paid: true, min, wanted });
  if (!answer.granted) throw new Error(`refused: ${JSON.stringify(answer.refusal)}`);
  return answer;
}

/** A key minted by the key `maker` through an authorization code (D10, D11). */
async function mint(maker: string): Promise<{ key: string; hash: string }> {
  const post = async (path: string, body: unknown, key: string | null) => {
    const res = await env.server.request(`/api/v1${path}`, {
      method: 'POST',
      key,
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    const answer = (await res.json()) as unknown;
    expect(res.status, JSON.stringify(answer)).toBe(200);
    return answer;
  };
  const code = (await post('/auth/keys/code', { callback_url: `https://grants-${randomUUID().slice(0, 8)}.example` }, maker)) as { data: { id: string } };
  const { key } = ExchangedKeySchema.parse(await post('/auth/keys', { code: code.data.id }, null));
  return { key, hash: createHash('sha256').update(key).digest('hex') };
}

async function heldOf(reservationId: string): Promise<string | null> {
  const row = await env.server.db.spendReservation.findUnique({ where: { id: reservationId } });
  return row ? row.amount.toString() : null;
}

describe('a partial grant', () => {
  it('holds up to wanted, at least min: what is left once less than wanted, then refuses under min', async () => {
    const { hash } = await createKey(env.server, { limit: 1, limit_reset: 'monthly' });
    const first = await granted(hash, 0.1, 0.7);
    expect(first.amount).toBe(0.7);
    expect(first.remaining.find((r) => r.limit === 'key')).toMatchObject({ remaining: 0.3 });
    expect(await heldOf(first.reservation_id)).toBe('0.7');
    const second = await granted(hash, 0.1, 0.7);
    expect(second.amount).toBe(0.3);
    expect(second.remaining.find((r) => r.limit === 'key')).toMatchObject({ remaining: 0 });
    const third = await grant(deps(), SERVER_ACTOR, { api_key_hash: hash, paid: true, min: 0.1, wanted: 0.7 });
    expect(third).toMatchObject({ granted: false, refusal: { status: 403, code: 'key_limit' } });
  });

  it('grants what the narrowest limit has left: the key, a guardrail, the budget, the credits, in one snapshot', async () => {
    const workspace = await ok(env.server, 'workspaces.create', { slug: `grant-${randomUUID().slice(0, 8)}`, name: 'Grants' });
    await ok(env.server, 'budgets.set', { workspace_ref: workspace.data.id, interval: 'monthly', limit_usd: 2 });
    const guardrail = await ok(env.server, 'guardrails.create', {
      name: 'grant cap',
      limit_usd: 1.5,
      reset_interval: 'monthly',
      workspace_id: workspace.data.id,
    });
    const { hash } = await createKey(env.server, { limit: 5, limit_reset: 'monthly', workspace_id: workspace.data.id });
    const other = await createKey(env.server, { workspace_id: workspace.data.id });
    await ok(env.server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [hash] });
    // The budget counts every key of the workspace; the guardrail only the key it covers.
    await addUsage(env.server.db, other.hash, today(), 0.25);
    const lease = await granted(hash, 0.01, 10);
    expect(lease.amount).toBe(1.5);
    expect(Object.fromEntries(lease.remaining.map((r) => [r.limit, r.remaining]))).toEqual({
      key: 3.5,
      [`guardrail:${guardrail.data.id}`]: 0,
      'budget:monthly': 0.25,
      credits: expect.any(Number),
    });
    // Given back in part, what is left of every limit grows by as much at once.
    expect(await giveBack(deps(), SERVER_ACTOR, { reservation_id: lease.reservation_id, amount: 1 })).toEqual({ held: 0.5 });
    const more = await granted(hash, 0.01, 10);
    expect(more.amount).toBe(1);
    expect(await grant(deps(), SERVER_ACTOR, { api_key_hash: hash, paid: true, min: 0.01, wanted: 1 })).toMatchObject({
      granted: false,
      refusal: { status: 403, code: 'guardrail_limit' },
    });
  });

  it('never grants more than a limit has left, whatever number ask at once; exactly floor(R / c) when min = wanted', async () => {
    const partial = await createKey(env.server, { limit: 1, limit_reset: 'monthly' });
    const answers = await Promise.all(
      Array.from({ length: 24 }, () => grant(deps(), SERVER_ACTOR, { api_key_hash: partial.hash, paid: true, min: 0.05, wanted: 0.3 })),
    );
    const amounts = answers.filter((a) => a.granted).map((a) => (a.granted ? a.amount : 0));
    expect(amounts.reduce((sum, a) => sum.plus(a), new Prisma.Decimal(0)).toString()).toBe('1');
    expect(amounts.sort()).toEqual([0.1, 0.3, 0.3, 0.3]);
    expect(answers.filter((a) => !a.granted).every((a) => !a.granted && a.refusal.code === 'key_limit')).toBe(true);

    const exact = await createKey(env.server, { limit: 1, limit_reset: 'monthly' });
    const whole = await Promise.all(
      Array.from({ length: 24 }, () => grant(deps(), SERVER_ACTOR, { api_key_hash: exact.hash, paid: true, min: 0.3, wanted: 0.3 })),
    );
    expect(whole.filter((a) => a.granted)).toHaveLength(3);
  });

  it("a minted key's grant holds no more than every maker above it has left, over each maker's lineage; a give-back frees it for them", async () => {
    const maker = await createKey(env.server, { name: 'grant maker', limit: 1 });
    const child = await mint(maker.key);
    const grandchild = await mint(child.key);
    const own = await granted(maker.hash, 0.1, 0.4);
    expect(own.amount).toBe(0.4);
    // Each minted key copied a limit of 1; the maker has 0.6 left, held by its own reservation.
    const leaf = await granted(grandchild.hash, 0.1, 10);
    expect(leaf.amount).toBe(0.6);
    expect(Object.fromEntries(leaf.remaining.map((r) => [r.limit, r.remaining]))).toMatchObject({ key: 0.4, makers: 0 });
    // The maker's own limit counts what its lineage holds: nothing is left for it nor for the middle key.
    for (const hash of [maker.hash, child.hash]) {
      expect(await grant(deps(), SERVER_ACTOR, { api_key_hash: hash, paid: true, min: 0.01, wanted: 1 })).toMatchObject({
        granted: false,
        refusal: { status: 403, code: 'key_limit' },
      });
    }
    expect(await giveBack(deps(), SERVER_ACTOR, { reservation_id: leaf.reservation_id, amount: 0.25 })).toEqual({ held: 0.35 });
    expect((await granted(maker.hash, 0.01, 1)).amount).toBe(0.25);
    // Spend recorded by the leaf counts toward the maker as its holds did.
    await record(env.server, { api_key_hash: grandchild.hash, usage: 0.35, reservation_id: leaf.reservation_id });
    expect(await grant(deps(), SERVER_ACTOR, { api_key_hash: maker.hash, paid: true, min: 0.01, wanted: 1 })).toMatchObject({
      granted: false,
      refusal: { code: 'key_limit' },
    });
    expect(await totalsAdrift()).toEqual([]);
  });

  it('refuses as routing.authorize does: an unknown or disabled key, and credits spent', async () => {
    expect(await grant(deps(), SERVER_ACTOR, { api_key_hash: 'f'.repeat(64), paid: true, min: 1, wanted: 1 })).toMatchObject({
      granted: false,
      refusal: { status: 401, code: 'key_unknown' },
    });
    const { hash } = await createKey(env.server, { limit: 1 });
    await ok(env.server, 'keys.update', { hash, disabled: true });
    expect(await grant(deps(), SERVER_ACTOR, { api_key_hash: hash, paid: true, min: 0.1, wanted: 1 })).toMatchObject({
      granted: false,
      refusal: { code: 'key_disabled' },
    });
    const poor = await env.server.db.organization.findUniqueOrThrow({ where: { id: env.other.organizationId } });
    const theirs = await env.server.db.apiKey.findFirstOrThrow({ where: { organization_id: poor.id } });
    expect(await grant(deps(), SERVER_ACTOR, { api_key_hash: theirs.hash, paid: true, min: 0.1, wanted: 1 })).toMatchObject({
      granted: false,
      refusal: { status: 402, code: 'credits_exhausted' },
    });
  });

  it('rejects a range that is not 0 < min <= wanted, and a key with no limit to lease', async () => {
    const { hash } = await createKey(env.server, { limit: 1 });
    for (const [min, wanted] of [
      [0, 1],
      [-1, 1],
      [2, 1],
      [1, Infinity],
    ]) {
      await expect(grant(deps(), SERVER_ACTOR, { api_key_hash: hash, paid: true, min: min!, wanted: wanted! })).rejects.toThrow(RangeError);
    }
    const unlimited = await createKey(env.server);
    await expect(grant(deps(), SERVER_ACTOR, { api_key_hash: unlimited.hash, paid: false, min: 1, wanted: 1 })).rejects.toThrow(/no limit/);
  });
});

describe('a give-back', () => {
  it('keeps the rest, deletes a reservation given back whole, and finds nothing once it is gone; recording still settles what is left', async () => {
    const { hash } = await createKey(env.server, { limit: 1, limit_reset: 'monthly' });
    const lease = await granted(hash, 1, 1);
    expect(await giveBack(deps(), SERVER_ACTOR, { reservation_id: lease.reservation_id, amount: 0.25 })).toEqual({ held: 0.75 });
    expect(await heldOf(lease.reservation_id)).toBe('0.75');
    await record(env.server, { api_key_hash: hash, usage: 0.75, reservation_id: lease.reservation_id });
    expect(await heldOf(lease.reservation_id)).toBeNull();
    expect(await giveBack(deps(), SERVER_ACTOR, { reservation_id: lease.reservation_id, amount: 0.1 })).toEqual({ held: null });

    const whole = await granted(hash, 0.25, 0.25);
    expect(await giveBack(deps(), SERVER_ACTOR, { reservation_id: whole.reservation_id, amount: 5 })).toEqual({ held: 0 });
    expect(await heldOf(whole.reservation_id)).toBeNull();
    expect((await granted(hash, 0.25, 0.25)).amount).toBe(0.25);
    await expect(giveBack(deps(), SERVER_ACTOR, { reservation_id: whole.reservation_id, amount: 0 })).rejects.toThrow(RangeError);
  });
});

/** The running totals that differ from the sums they stand for (none when they are kept right). */
async function totalsAdrift(): Promise<unknown[]> {
  return env.server.db.$queryRawUnsafe(`
    WITH held AS (
      SELECT organization_id, s.scope, s.scope_id, sum(amount) AS amount
        FROM spend_reservations r
       CROSS JOIN LATERAL (VALUES ('key', api_key_id::text), ('organization', organization_id), ('workspace', workspace_id::text)) AS s(scope, scope_id)
       GROUP BY 1, 2, 3
    ), days AS (
      SELECT k.workspace_id, d.day, sum(d.usage) AS usage, sum(d.byok_usage) AS byok_usage
        FROM key_usage_daily d JOIN api_keys k ON k.id = d.api_key_id GROUP BY 1, 2
    ), lifetimes AS (
      SELECT workspace_id, sum(usage) AS usage, sum(byok_usage) AS byok_usage FROM api_keys GROUP BY 1
    )
    SELECT 'hold' AS what, h.scope_id AS id, h.amount::text AS kept, coalesce(s.amount, 0)::text AS sum
      FROM spend_holds h LEFT JOIN held s USING (organization_id, scope, scope_id) WHERE h.amount <> coalesce(s.amount, 0)
    UNION ALL
    SELECT 'hold missing', s.scope_id, NULL, s.amount::text FROM held s
     WHERE NOT EXISTS (SELECT 1 FROM spend_holds h WHERE (h.organization_id, h.scope, h.scope_id) = (s.organization_id, s.scope, s.scope_id))
    UNION ALL
    SELECT 'day', d.workspace_id::text || ' ' || d.day, w.usage::text || '/' || w.byok_usage::text, d.usage::text || '/' || d.byok_usage::text
      FROM days d LEFT JOIN workspace_spend_daily w USING (workspace_id, day)
     WHERE (d.usage <> 0 OR d.byok_usage <> 0) AND (w.usage IS DISTINCT FROM d.usage OR w.byok_usage IS DISTINCT FROM d.byok_usage)
    UNION ALL
    SELECT 'lifetime', l.workspace_id::text, w.usage::text || '/' || w.byok_usage::text, l.usage::text || '/' || l.byok_usage::text
      FROM lifetimes l LEFT JOIN workspace_spend w USING (workspace_id)
     WHERE (l.usage <> 0 OR l.byok_usage <> 0) AND (w.usage IS DISTINCT FROM l.usage OR w.byok_usage IS DISTINCT FROM l.byok_usage)`);
}

describe('the running totals', () => {
  it('equal the sums they replace after reserving, settling, releasing, giving back, expiring and recording', async () => {
    const workspace = await ok(env.server, 'workspaces.create', { slug: `totals-${randomUUID().slice(0, 8)}`, name: 'Totals' });
    const keys = await Promise.all([1, 2, 3].map(() => createKey(env.server, { limit: 10, limit_reset: 'daily', workspace_id: workspace.data.id })));
    const leases = [];
    for (const { hash } of keys) for (let i = 0; i < 3; i++) leases.push({ hash, lease: await granted(hash, 0.1, 0.5) });
    expect(await totalsAdrift()).toEqual([]);
    await record(env.server, { api_key_hash: leases[0]!.hash, usage: 0.4, reservation_id: leases[0]!.lease.reservation_id });
    await release(deps(), SERVER_ACTOR, { reservation_id: leases[1]!.lease.reservation_id });
    await giveBack(deps(), SERVER_ACTOR, { reservation_id: leases[2]!.lease.reservation_id, amount: 0.2 });
    await addUsage(env.server.db, keys[1]!.hash, today(), 0.3, 0.1);
    await addUsage(env.server.db, keys[2]!.hash, new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10), 0.6);
    await env.server.db.spendReservation.updateMany({ where: { id: leases[3]!.lease.reservation_id }, data: { expires_at: new Date(Date.now() - 1) } });
    expect(await totalsAdrift()).toEqual([]);
    // An expired reservation counts against nothing before the sweep deletes it, and after.
    const before = await granted(keys[1]!.hash, 0.01, 100);
    await release(deps(), SERVER_ACTOR, { reservation_id: before.reservation_id });
    await expireReservations({ db: env.server.db, now: () => new Date() }, SERVER_ACTOR);
    const after = await granted(keys[1]!.hash, 0.01, 100);
    expect(after.amount).toBe(before.amount);
    expect(await totalsAdrift()).toEqual([]);
  });
});

describe("an organization's reservations waiting together", () => {
  /** The reservation of `amount` for the key `hash`, with its checks as the service builds them. */
  async function reservationOf(hash: string, id: string, amount: number): Promise<Reservation> {
    const key = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash } });
    const actor = { kind: 'tenant' as const, key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
    const [guardrails, workspace] = await Promise.all([
      new GuardrailCache(0).applicable(env.server.db, actor),
      new WorkspaceRoutingCache(0).of(env.server.db, key.organization_id, key.workspace_id),
    ]);
    const now = new Date();
    return { id, key, amount: { min: amount, wanted: amount }, checks: limitChecks(key, guardrails, workspace!, true, now), now, ttlMs: 600_000 };
  }

  it('go in one statement, decided in order: exactly floor(R / c) of them hold, as one at a time would', async () => {
    const { hash } = await createKey(env.server, { limit: 1, limit_reset: 'monthly' });
    const sizes: number[] = [];
    const queue = new ReservationQueue((statement, values) => queryRows(env.server.db, statement, values), { observe: (size) => sizes.push(size) });
    const reservations = await Promise.all(Array.from({ length: 30 }, () => reservationOf(hash, randomUUID(), 0.15)));
    const answers = await Promise.all(reservations.map((r) => queue.reserve(r)));
    // The first goes alone at once; the others wait for it and go together.
    expect(sizes[0]).toBe(1);
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(30);
    const held = answers.filter((rows) => rows[0]!.reserved);
    expect(held).toHaveLength(6);
    // In order: each one after another, every check's remaining amount falling by what each held.
    expect(answers.map((rows) => rows.find((r) => r.name === 'key')!.remaining)).toEqual([
      ...['0.85', '0.7', '0.55', '0.4', '0.25', '0.1'].map((v) => expect.stringMatching(new RegExp(`^${v}0*$`))),
      ...Array.from({ length: 24 }, () => expect.stringMatching(/^0\.10*$/)),
    ]);
    const rows = await env.server.db.spendReservation.findMany({ where: { id: { in: reservations.map((r) => r.id) } } });
    expect(rows).toHaveLength(6);
    expect(await totalsAdrift()).toEqual([]);
  });

  it('a statement that fails as a whole is made again one reservation at a time: each gets its own answer or error', async () => {
    const { hash } = await createKey(env.server, { limit: 1, limit_reset: 'monthly' });
    const sizes: number[] = [];
    const queue = new ReservationQueue((statement, values) => queryRows(env.server.db, statement, values), { observe: (size) => sizes.push(size) });
    const [first, twice, other] = [randomUUID(), randomUUID(), randomUUID()];
    const made = [
      await reservationOf(hash, first, 0.1),
      await reservationOf(hash, twice, 0.1),
      await reservationOf(hash, twice, 0.1),
      await reservationOf(hash, other, 0.1),
    ];
    // The first goes alone; the other three wait for it and go together, and the id made twice
    // fails their statement.
    const answers = await Promise.allSettled(made.map((r) => queue.reserve(r)));
    expect(sizes.slice(0, 2)).toEqual([1, 3]);
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((answers[2] as PromiseRejectedResult).reason)).toMatch(/duplicate key/);
    const rows = await env.server.db.spendReservation.findMany({ where: { id: { in: [first, twice, other] } } });
    expect(rows.map((r) => r.amount.toString()).sort()).toEqual(['0.1', '0.1', '0.1']);
    expect(await totalsAdrift()).toEqual([]);
  });
});

describe('the reservation statement', () => {
  /** The buffers routing_spend() reads for a key's checks (every statement nested in it counts). */
  async function buffersOf(hash: string): Promise<number> {
    const key = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash } });
    const guardrail = await env.server.db.guardrailKeyAssignment.findFirstOrThrow({ where: { api_key_id: key.id } });
    const since = sinceOf('monthly', new Date());
    const checks = [
      { name: 'key', scope: 'keys', keys: [key.id], since, byok: false, limit: '100' },
      {
        name: 'guardrail',
        scope: 'guardrail',
        guardrail_id: guardrail.guardrail_id,
        workspace_id: key.workspace_id,
        is_default: false,
        since,
        byok: false,
        limit: '100',
      },
      { name: 'budget', scope: 'workspace', workspace_id: key.workspace_id, since, byok: false, limit: '100' },
      { name: 'budget:lifetime', scope: 'workspace', workspace_id: key.workspace_id, since: null, byok: true, limit: '100' },
      { name: 'credits', scope: 'credits', since: null, byok: false, limit: '0' },
    ];
    // On one connection, the third call's: the first plans and reads the catalog.
    const client = new pg.Client({ connectionString: env.server.databaseUrl });
    await client.connect();
    let buffers = 0;
    try {
      for (let i = 0; i < 3; i++) {
        const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM routing_spend($1, $2::jsonb, now())`, [
          key.organization_id,
          JSON.stringify(checks),
        ]);
        const plan = rows[0]!['QUERY PLAN'][0]!.Plan;
        buffers = plan['Shared Hit Blocks']! + plan['Shared Read Blocks']!;
      }
    } finally {
      await client.end();
    }
    return buffers;
  }

  it("reads as much with twice the workspace's keys, open reservations and days of every key's spend", async () => {
    const workspace = await ok(env.server, 'workspaces.create', { slug: `flat-${randomUUID().slice(0, 8)}`, name: 'Flat' });
    const guardrail = await ok(env.server, 'guardrails.create', {
      name: 'flat cap',
      limit_usd: 100,
      reset_interval: 'monthly',
      workspace_id: workspace.data.id,
    });
    const { hash } = await createKey(env.server, { limit: 100, limit_reset: 'monthly', workspace_id: workspace.data.id });
    await ok(env.server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [hash] });
    await granted(hash, 0.01, 0.01);
    await addUsage(env.server.db, hash, today(), 0.01);
    const key = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash } });
    const { db } = env.server;
    /** 2,000 more keys in the workspace, each with 60 days of spend and an open reservation. */
    const grow = async (batch: string) => {
      await db.$executeRawUnsafe(
        `INSERT INTO api_keys (id, organization_id, workspace_id, creator_user_id, hash, label, name, created_at, updated_at)
         SELECT gen_random_uuid(), $1, $2::uuid, $3, md5($4 || i || $2) || md5($4 || '-b' || i || $2), 'sk-...', 'flat ' || $4 || ' ' || i, now(), now()
           FROM generate_series(1, 2000) AS i`,
        key.organization_id,
        key.workspace_id,
        key.creator_user_id,
        batch,
      );
      await db.$executeRawUnsafe(
        `INSERT INTO key_usage_daily (api_key_id, day, organization_id, usage, byok_usage, request_count, free_request_count)
         SELECT k.id, current_date - d, k.organization_id, 0.0001, 0, 1, 0
           FROM api_keys k CROSS JOIN generate_series(0, 59) AS d WHERE k.workspace_id = $1::uuid AND k.name LIKE 'flat ' || $2 || ' %'`,
        key.workspace_id,
        batch,
      );
      await db.$executeRawUnsafe(
        `INSERT INTO spend_reservations (id, organization_id, workspace_id, api_key_id, amount, created_at, expires_at)
         SELECT gen_random_uuid(), k.organization_id, k.workspace_id, k.id, 0.0001, now(), now() + interval '1 hour'
           FROM api_keys k WHERE k.workspace_id = $1::uuid AND k.name LIKE 'flat ' || $2 || ' %'`,
        key.workspace_id,
        batch,
      );
      await db.$executeRawUnsafe('ANALYZE api_keys, key_usage_daily, spend_reservations, spend_holds, workspace_spend_daily');
    };
    await grow('a');
    const once = await buffersOf(hash);
    await grow('b');
    const twice = await buffersOf(hash);
    expect(twice, `${once} buffers with 2,000 more keys, ${twice} with 4,000`).toBeLessThanOrEqual(once + 8);
    expect(await totalsAdrift()).toEqual([]);
    await db.$executeRawUnsafe(`DELETE FROM spend_reservations WHERE workspace_id = $1::uuid`, key.workspace_id);
  });
});
