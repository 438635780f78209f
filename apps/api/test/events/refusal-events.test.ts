// Routing refusals as events in the outbox (table `events`), on the real server and PostgreSQL: one
// row per key, code and minute however many refusals and replicas; each organization's rows its
// own; the request path never waits for the outbox (a lock held on the table blocks only the
// writer); close() writes what is pending; a failed write is retried; the pending map is bounded.
import { createDb, type Db, freePort } from '@switchyard/db';
import { RoutingAuthorizeOutputSchema } from '@switchyard/schema';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { Metrics } from '../../src/lib/metrics.js';
import { emitEvent } from '../../src/modules/events/emit.js';
import { RefusalEvents } from '../../src/modules/events/refusal-events.js';
import { hashApiKey } from '../../src/access/key-format.js';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { createOrganization, type OrgFixture, until } from '../fixtures.js';
import { createKey, importDemoCatalog } from '../fixtures-catalog.js';
import { type InProcessReplica, inProcessReplica } from '../fixtures-replica.js';
import { ok, type Requester, trpcRaw } from '../fixtures-trpc.js';
import { scaled } from '@switchyard/db/testing';

let server: TestServer;
let other: OrgFixture;
// The server's clock, fixed inside one minute: every refusal of a test falls in the same bucket.
const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
const at = new Date(minute.getTime() + 7_000);

beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), env: { METRICS_PORT: '0' } });
  server.setNow(at);
  other = await createOrganization(server.db, 'Events neighbour');
  await importDemoCatalog(server);
});
afterAll(async () => {
  await server?.close();
});

type Via = Requester & { platformKey: string; managementKey: string };

async function authorize(input: { api_key_hash: string; model: string }, via: Via = server) {
  const { status, data, error } = await trpcRaw(via, 'routing.authorize', input);
  expect(status, JSON.stringify(error)).toBe(200);
  return RoutingAuthorizeOutputSchema.parse(data).data;
}

async function refused(input: { api_key_hash: string; model: string }, code: string, via: Via = server) {
  const decision = await authorize(input, via);
  expect(decision).toMatchObject({ allowed: false, code });
  return decision;
}

const keyOf = (hash: string) => server.db.apiKey.findUniqueOrThrow({ where: { hash } });
const causeOf = (keyId: string, code: string) => `routing.refused:${keyId}:${code}:${minute.toISOString()}`;
const rowsOf = (keyId: string) => server.db.event.findMany({ where: { cause: { startsWith: `routing.refused:${keyId}:` } }, orderBy: { cause: 'asc' } });

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(server.metricsUrl!)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

/** Holds LOCK TABLE events IN ACCESS EXCLUSIVE MODE in a transaction until the returned release(). */
async function lockEvents(db: Db) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: () => void;
  const held = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const transaction = db.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
      locked();
      await released;
    },
    { timeout: scaled(120_000), maxWait: scaled(30_000) },
  );
  await held;
  return {
    release: async () => {
      release();
      await transaction;
    },
  };
}

/** Statements inserting into `events` that wait for a lock (the writers blocked by lockEvents). */
async function blockedWriters(db: Db): Promise<number> {
  const [row] = await db.$queryRawUnsafe<{ count: number }[]>(
    `SELECT count(*)::int AS count FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO events%'`,
  );
  return row?.count ?? 0;
}

/** Another server on the same database, with the same fixed clock; its warnings are kept. */
async function replica(): Promise<InProcessReplica & { warnings: string[] }> {
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
  const running = await inProcessReplica(server, { env: { LOG_LEVEL: 'warn', DATABASE_POOL_MAX: '3' }, logger, now: () => at });
  return Object.assign(running, { warnings });
}

/** Refuses a new key and waits for its row: every refusal noted before it is in the outbox by then. */
async function marker() {
  const { hash } = await createKey(server);
  const key = await keyOf(hash);
  await refused({ api_key_hash: hash, model: 'acme/none' }, 'model_not_found');
  await until(async () => (await rowsOf(key.id)).length === 1, { what: "a later refusal's row" });
}

describe('refusals become events, one per key, code and minute', () => {
  it('20 identical refusals make one row; another code or key its own; organizations apart', async () => {
    const { key: secret, hash } = await createKey(server);
    const key = await keyOf(hash);
    const writtenBefore = await metric('switchyard_refusal_events_total', 'outcome="written"');
    const dedupBefore = await metric('switchyard_refusal_events_total', 'outcome="deduplicated"');

    const input = { api_key_hash: hash, model: 'acme/none' };
    await Promise.all(Array.from({ length: 20 }, () => refused(input, 'model_not_found')));
    expect(await metric('switchyard_refusal_events_total', 'outcome="deduplicated"')).toBe(dedupBefore + 19);
    await until(async () => (await rowsOf(key.id)).length === 1, { what: 'the refusal event row' });
    await until(async () => (await metric('switchyard_refusal_events_total', 'outcome="written"')) === writtenBefore + 1, { what: 'the written count' });

    const [row] = await rowsOf(key.id);
    expect(row).toMatchObject({
      organization_id: server.organizationId,
      workspace_id: server.workspaceId,
      type: 'routing.refused',
      cause: causeOf(key.id, 'model_not_found'),
      created_at: at,
    });
    const payload = row!.payload as Record<string, unknown>;
    expect(payload).toMatchObject({
      code: 'model_not_found',
      status: 404,
      model: 'acme/none',
      api_key: { id: key.id, hash, hash_prefix: hash.slice(0, 12) },
      workspace_id: server.workspaceId,
      bucket: { start: minute.toISOString(), end: new Date(minute.getTime() + 60_000).toISOString() },
      first_at: at.toISOString(),
    });
    expect(payload.message).toContain('acme/none');
    // The refusals this process had seen when it wrote the row: the first, and up to all 20.
    expect(payload.refusals).toBeGreaterThanOrEqual(1);
    expect(payload.refusals).toBeLessThanOrEqual(20);
    // Nothing of the key's secret: its hash (the key's public id), not the secret.
    expect(JSON.stringify(row, (_name, value: unknown) => (typeof value === 'bigint' ? String(value) : value))).not.toContain(secret);

    // The same refusal again in the minute: no second row, ever (a later event's row is written by
    // the same or a later flush).
    await refused(input, 'model_not_found');
    await marker();
    expect(await rowsOf(key.id)).toHaveLength(1);

    // Another code of the same key, and another key: a row each.
    await ok(server, 'keys.update', { hash, disabled: true });
    await until(
      async () => {
        const decision = await authorize(input);
        return !decision.allowed && decision.code === 'key_disabled';
      },
      { what: 'the disabled key to be refused as such' },
    );
    const second = await createKey(server);
    const secondKey = await keyOf(second.hash);
    await refused({ api_key_hash: second.hash, model: 'acme/none' }, 'model_not_found');
    await until(async () => (await rowsOf(key.id)).length === 2 && (await rowsOf(secondKey.id)).length === 1, { what: 'the rows of the other code and key' });
    expect((await rowsOf(key.id)).map((r) => r.cause)).toEqual([causeOf(key.id, 'key_disabled'), causeOf(key.id, 'model_not_found')]);
    expect((await rowsOf(key.id))[0]!.payload).toMatchObject({ code: 'key_disabled', status: 401 });

    // The other organization's refusal lands in its own rows, never in this organization's.
    const otherKey = await keyOf(hashApiKey(other.managementKey));
    await refused({ api_key_hash: otherKey.hash, model: 'acme/none' }, 'model_not_found');
    await until(async () => (await rowsOf(otherKey.id)).length === 1, { what: "the other organization's row" });
    expect(await rowsOf(otherKey.id)).toMatchObject([{ organization_id: other.organizationId, workspace_id: other.workspaceId }]);
    const mine = await server.db.event.findMany({ where: { organization_id: server.organizationId } });
    expect(mine.every((r) => (r.payload as { api_key: { id: string } }).api_key.id !== otherKey.id)).toBe(true);
    expect(await server.db.event.count({ where: { organization_id: other.organizationId } })).toBe(1);

    // An unknown key has no organization to own an event: none is written.
    const before = await server.db.event.count();
    await refused({ api_key_hash: hashApiKey('sk-sy-v1-nobody'), model: 'acme/none' }, 'key_unknown');
    await marker();
    expect(await server.db.event.count()).toBe(before + 1);
  });

  it('two replicas refusing the same key the same way in the same minute make one row', async () => {
    const { hash } = await createKey(server);
    const key = await keyOf(hash);
    const [b, c] = await Promise.all([replica(), replica()]);
    try {
      // Both writers blocked on the table, then let go at once: they race on the unique cause.
      const lock = await lockEvents(server.db);
      await Promise.all([b, c].flatMap((via) => Array.from({ length: 5 }, () => refused({ api_key_hash: hash, model: 'acme/none' }, 'model_not_found', via))));
      await until(async () => (await blockedWriters(server.db)) >= 2, { what: 'both replicas to try to write' });
      await lock.release();
      await until(async () => (await rowsOf(key.id)).length === 1, { what: 'the row' });
    } finally {
      // close() writes anything still pending: afterwards both replicas have written all they noted.
      await Promise.all([b.close(), c.close()]);
    }
    expect(await rowsOf(key.id)).toMatchObject([{ cause: causeOf(key.id, 'model_not_found'), organization_id: server.organizationId }]);
    expect([...b.warnings, ...c.warnings].filter((w) => w.includes('refusal events'))).toEqual([]);
  });
});

describe('off the request path', () => {
  it('authorize answers while the outbox is locked; the row appears once the lock goes', async () => {
    const { hash } = await createKey(server);
    const key = await keyOf(hash);
    const lock = await lockEvents(server.db);
    try {
      await refused({ api_key_hash: hash, model: 'acme/none' }, 'model_not_found');
      await until(async () => (await blockedWriters(server.db)) >= 1, { what: 'the writer to wait for the lock' });
      // The writer waits on the table; decisions, refused and allowed, still answer.
      await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 10 });
      for (let i = 0; i < 5; i++) await refused({ api_key_hash: hash, model: 'acme/none' }, 'model_not_found');
      expect((await authorize({ api_key_hash: hash, model: 'openai/gpt-4o' })).allowed).toBe(true);
      expect(await blockedWriters(server.db)).toBeGreaterThanOrEqual(1);
    } finally {
      await lock.release();
    }
    await until(async () => (await rowsOf(key.id)).length === 1, { what: 'the row after the lock' });
  });

  it("a server's close() writes what is pending", async () => {
    const { hash } = await createKey(server);
    const key = await keyOf(hash);
    const b = await replica();
    await refused({ api_key_hash: hash, model: 'acme/none' }, 'model_not_found', b);
    await b.close();
    // No waiting: close() resolved after the write.
    expect(await rowsOf(key.id)).toMatchObject([{ cause: causeOf(key.id, 'model_not_found') }]);
  });
});

describe('RefusalEvents on the real database', () => {
  const logs: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(line) });
  const hour = 3_600_000;

  it('close() writes the pending events (no timer tick in between)', async () => {
    const { hash } = await createKey(server);
    const key = await keyOf(hash);
    const events = new RefusalEvents({ db: server.db, now: () => at, metrics: new Metrics(() => undefined), logger, flushMs: hour });
    events.note({ status: 404, code: 'model_not_found', message: 'no such model' }, key, 'acme/none');
    expect(events.pending).toBe(1);
    expect(await rowsOf(key.id)).toHaveLength(0);
    await events.close();
    expect(events.pending).toBe(0);
    expect(await rowsOf(key.id)).toHaveLength(1);
  });

  it('a failed write is logged and retried; the map is bounded and counts what it drops', async () => {
    const { hash } = await createKey(server);
    const key = await keyOf(hash);
    // A client whose statements give up on a lock after 200 ms: the locked outbox fails its write.
    const impatient = createDb(`${server.databaseUrl}${server.databaseUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent('-c lock_timeout=200')}`, {
      poolMax: 1,
    });
    // Prisma disposes the pool at $disconnect only once it has connected.
    await impatient.$queryRawUnsafe('SELECT 1');
    const metrics = new Metrics(() => undefined);
    const events = new RefusalEvents({ db: impatient, now: () => at, metrics, logger, flushMs: hour, maxEntries: 2 });
    const count = async (name: string, labels: string) =>
      (await metrics.registry.getSingleMetricAsString(name)).split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
    try {
      const lock = await lockEvents(server.db);
      try {
        events.note({ status: 404, code: 'model_not_found', message: 'm' }, key, 'acme/none');
        events.note({ status: 401, code: 'key_disabled', message: 'd' }, key, 'acme/none');
        events.note({ status: 403, code: 'key_limit', message: 'l' }, key, 'acme/none');
        await events.flush();
        expect(logs.some((l) => l.includes('could not write refusal events'))).toBe(true);
        expect(await count('switchyard_refusal_event_flushes_total', 'result="failed"')).toMatch(/ 1$/);
        expect(events.pending).toBe(2);
      } finally {
        await lock.release();
      }
      await events.flush();
      expect(events.pending).toBe(0);
      expect((await rowsOf(key.id)).map((r) => (r.payload as { code: string }).code)).toEqual(['key_disabled', 'model_not_found']);
      expect(await count('switchyard_refusal_events_total', 'outcome="dropped"')).toMatch(/ 1$/);
      expect(await count('switchyard_refusal_events_total', 'outcome="written"')).toMatch(/ 2$/);
    } finally {
      await events.close();
      await impatient.$disconnect();
    }
  });

  it('a database that is not there: the events wait, with no line a tick (the health monitor logs the loss); close() says what it could not write', async () => {
    const { hash } = await createKey(server);
    const key = await keyOf(hash);
    // A real client of a port where nothing listens: every connection is refused.
    const gone = new URL(server.databaseUrl);
    gone.port = String(await freePort());
    const db = createDb(gone.toString(), { poolMax: 1 });
    const lines: string[] = [];
    const own = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const events = new RefusalEvents({ db, now: () => at, metrics: new Metrics(() => undefined), logger: own, flushMs: hour });
    try {
      events.note({ status: 404, code: 'model_not_found', message: 'm' }, key, 'acme/none');
      await events.flush();
      await events.flush();
      expect(events.pending).toBe(1);
      expect(lines).toEqual([]);
    } finally {
      await events.close();
      await db.$disconnect();
    }
    expect(lines.map((line) => JSON.parse(line) as { msg: string; pending: number }).map(({ msg, pending }) => [msg, pending])).toEqual([
      ['closed with refusal events not written', 1],
    ]);
  });

  it('emitEvent in a transaction: once per cause, and rolled back with its transaction', async () => {
    const cause = `test:${Date.now()}:${Math.random()}`;
    const event = { type: 'test.event', cause, organizationId: server.organizationId, workspaceId: null, payload: { n: 1 } };
    const first = await server.db.$transaction((tx) => emitEvent(tx, event));
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await server.db.$transaction((tx) => emitEvent(tx, { ...event, payload: { n: 2 } }))).toEqual({ id: null });
    expect(await server.db.event.findMany({ where: { cause } })).toMatchObject([{ id: first.id, payload: { n: 1 }, workspace_id: null }]);
    const undone = `${cause}:undone`;
    await expect(
      server.db.$transaction(async (tx) => {
        await emitEvent(tx, { ...event, cause: undone });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await server.db.event.count({ where: { cause: undone } })).toBe(0);
  });
});
