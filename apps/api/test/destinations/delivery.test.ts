// Delivery of events to webhook destinations (decision 0025) on the real server, with real
// receivers on loopback: Standard Webhooks signatures verified with the `standardwebhooks` package,
// the same event id on every attempt, the retry schedule over a driven clock (no real waiting),
// auto-disable after 24 hours of failures, other organizations' and undeliverable destinations
// never receiving, a hanging receiver slowing nothing else, the status operation for every kind of
// caller, and the outbox metrics.
import { DestinationStatusOutputSchema } from '@switchyard/schema';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitEvent } from '../../src/modules/events/emit.js';
import { MAX_ATTEMPTS, outboxState, RETRY_DELAYS_S } from '../../src/modules/events/delivery.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { createOrganization, until, type OrgFixture } from '../fixtures.js';
import { createRegularKey, createWorkspace, rest } from '../fixtures-admin.js';
import { testServerWith } from '../fixtures-files.js';
import { Receiver } from '../fixtures-receiver.js';
import { ok, trpc } from '../fixtures-trpc.js';

const TIMEOUT_MS = 1_500;
let server: TestServer;
let other: OrgFixture;
const receivers: Receiver[] = [];
const receiver = async () => {
  const made = await new Receiver().start();
  receivers.push(made);
  return made;
};

beforeAll(async () => {
  // The poll off: each test dispatches and delivers when it chooses, on the clock it sets.
  server = await testServerWith({
    UPSTREAM_ALLOWED_HOSTS: '127.0.0.1',
    DELIVERY_POLL_MS: '0',
    DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
    METRICS_PORT: '0',
    KEY_EXPIRY_SCAN_INTERVAL_MS: '0',
  });
  other = await createOrganization(server.db);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await server?.close();
});

let seq = 0;
async function webhook(workspace_id: string, url: string, extra: Record<string, unknown> = {}, key = server.managementKey) {
  const res = await rest(server, '/observability/destinations', {
    method: 'POST',
    key,
    json: { type: 'webhook', name: `hook-${++seq}`, workspace_id, config: { url }, ...extra },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return (res.body as { data: { id: string } }).data.id;
}

async function alert(workspaceId: string | null, type = 'limit.threshold_crossed', organizationId = server.organizationId) {
  const { id } = await emitEvent(server.db, {
    type,
    cause: `test:${type}:${++seq}:${Math.random()}`,
    organizationId,
    workspaceId,
    payload: { version: 1, percent: 80, n: seq },
  });
  return id!;
}

const statusOf = async (id: string, key = server.managementKey) => {
  const res = await rest(server, `/observability/destinations/${id}/status`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return DestinationStatusOutputSchema.parse(res.body).data;
};

const secretOf = async (id: string) => (await ok(server, 'destinations.secret', { id }, { query: true })).secret as string;

describe('webhook delivery', () => {
  it('POSTs each alert signed per Standard Webhooks: the library verifies it; webhook-id is the event id', async () => {
    server.setNow(null);
    const r = await receiver();
    const ws = (await createWorkspace(server, `dl-sign-${seq}`)).id;
    const id = await webhook(ws, r.url(), { config: { url: r.url(), headers: { 'X-Team': 'ops-team-header' } } });
    const eventId = await alert(ws);
    expect(await server.deliveries.dispatch()).toMatchObject({ deliveries: 1 });
    expect(await server.deliveries.deliverDue()).toBe(1);
    expect(r.requests).toHaveLength(1);
    const [request] = r.requests;
    expect(request!.method).toBe('POST');
    expect(request!.headers['webhook-id']).toBe(eventId);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-team']).toBe('ops-team-header');
    const verified = new Webhook(await secretOf(id)).verify(request!.body, request!.headers as Record<string, string>) as Record<string, unknown>;
    expect(verified).toMatchObject({ type: 'limit.threshold_crossed', data: { version: 1, percent: 80 } });
    // A rotated secret signs the next events; the old one no longer verifies them.
    const old = await secretOf(id);
    const rotated = (await ok(server, 'destinations.rotateSecret', { id })).secret as string;
    await alert(ws);
    await server.deliveries.dispatch();
    await server.deliveries.deliverDue();
    const second = r.requests[1]!;
    expect(() => new Webhook(rotated).verify(second.body, second.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(old).verify(second.body, second.headers as Record<string, string>)).toThrow();
    expect(await statusOf(id)).toMatchObject({ delivered: 2, pending: 0, failing: 0, dead: 0, last_error: null, enabled: true });
  });

  it('PUT when the config says so; an organization-wide alert goes to the default workspace; dispatch is once per event', async () => {
    server.setNow(null);
    const r = await receiver();
    await webhook(server.workspaceId, r.url(), { config: { url: r.url(), method: 'PUT' } });
    const eventId = await alert(null, 'credits.low');
    await server.deliveries.dispatch();
    await server.deliveries.dispatch();
    await server.deliveries.deliverDue();
    expect(r.requests.map((q) => [q.method, q.headers['webhook-id']])).toEqual([['PUT', eventId]]);
    expect(await server.db.eventDelivery.count({ where: { event_id: eventId } })).toBe(1);
  });

  it('retries on the documented schedule with the same event id, then gives up (dead); 24 h of failures turn the destination off', async () => {
    const t0 = new Date(Date.UTC(2031, 5, 1));
    server.setNow(t0);
    const r = await receiver();
    r.answer = () => 500;
    const ws = (await createWorkspace(server, `dl-retry-${seq}`)).id;
    const id = await webhook(ws, r.url());
    const eventId = await alert(ws);
    await server.deliveries.dispatch();
    let at = t0.getTime();
    expect(await server.deliveries.deliverDue()).toBe(1);
    for (const [i, delay] of RETRY_DELAYS_S.entries()) {
      // Not before its time...
      server.setNow(new Date(at + delay * 1000 - 1000));
      expect(await server.deliveries.deliverDue(), `retry ${i + 1} early`).toBe(0);
      // ...and at its time.
      at += delay * 1000;
      server.setNow(new Date(at));
      expect(await server.deliveries.deliverDue(), `retry ${i + 1}`).toBe(1);
    }
    expect(r.requests).toHaveLength(MAX_ATTEMPTS);
    expect(new Set(r.requests.map((q) => q.headers['webhook-id']))).toEqual(new Set([eventId]));
    // The schedule spans more than a day; its last attempt is past the 24-hour rule, which turns the destination off.
    expect(at - t0.getTime()).toBeGreaterThan(24 * 3_600_000);
    const status = await statusOf(id);
    expect(status).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('24 hours'), last_error: 'HTTP 500', dead: 1, failing: 0 });
    expect(status.failing_since).toBe(t0.toISOString());
    expect(status.last_error_at).toBe(new Date(at).toISOString());
    const record = await rest(server, `/observability/destinations/${id}`);
    expect((record.body as { data: { enabled: boolean } }).data.enabled).toBe(false);
    // Turned off: nothing more is attempted, and new events make no delivery to it.
    server.setNow(new Date(at + 40 * 3_600_000));
    expect(await server.deliveries.deliverDue()).toBe(0);
    await alert(ws);
    expect((await server.deliveries.dispatch())?.deliveries).toBe(0);
    // Turned on again by its owner: the streak starts over; the next event is delivered.
    r.answer = () => 200;
    expect((await rest(server, `/observability/destinations/${id}`, { method: 'PATCH', json: { enabled: true } })).status).toBe(200);
    const next = await alert(ws);
    expect((await server.deliveries.dispatch())?.deliveries).toBe(1);
    expect(await server.deliveries.deliverDue()).toBe(1);
    expect(r.requests.at(-1)!.headers['webhook-id']).toBe(next);
    expect(await statusOf(id)).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null, delivered: 1, dead: 1, failing: 0 });
    server.setNow(null);
  });

  it('24 hours of failures across several events turn a destination off before their retries end', async () => {
    const t0 = new Date(Date.UTC(2031, 8, 1));
    server.setNow(t0);
    const r = await receiver();
    r.answer = () => 500;
    const ws = (await createWorkspace(server, `dl-off-${seq}`)).id;
    const id = await webhook(ws, r.url());
    await alert(ws);
    await server.deliveries.dispatch();
    await server.deliveries.deliverDue();
    // A day later, a new event fails too: the streak is 24 h old.
    server.setNow(new Date(t0.getTime() + 24 * 3_600_000 - 60_000));
    await alert(ws);
    await server.deliveries.dispatch();
    await server.deliveries.deliverDue();
    expect((await statusOf(id)).enabled).toBe(true);
    server.setNow(new Date(t0.getTime() + 24 * 3_600_000));
    await alert(ws);
    await server.deliveries.dispatch();
    await server.deliveries.deliverDue();
    // The 2nd event's retry, due first, fails and turns the destination off: the 3rd event's delivery
    // waits (one attempt at a time per destination), untried.
    expect(await statusOf(id)).toMatchObject({ enabled: false, failing: 2, pending: 1, dead: 0 });
    server.setNow(null);
  });

  it('the last retry failing makes the delivery dead (a destination that succeeds elsewhere stays on)', async () => {
    const t0 = new Date(Date.UTC(2032, 5, 1));
    server.setNow(t0);
    const r = await receiver();
    const ws = (await createWorkspace(server, `dl-dead-${seq}`)).id;
    const id = await webhook(ws, r.url());
    const doomed = await alert(ws);
    r.answer = (q) => (q.headers['webhook-id'] === doomed ? 503 : 204);
    await server.deliveries.dispatch();
    await server.deliveries.deliverDue();
    let at = t0.getTime();
    for (const delay of RETRY_DELAYS_S) {
      at += delay * 1000;
      server.setNow(new Date(at));
      // Another event delivered meanwhile: the destination is not failing as a whole.
      await alert(ws);
      await server.deliveries.dispatch();
      await server.deliveries.deliverDue();
    }
    expect(r.requests.filter((q) => q.headers['webhook-id'] === doomed)).toHaveLength(MAX_ATTEMPTS);
    const status = await statusOf(id);
    expect(status).toMatchObject({ enabled: true, dead: 1, failing: 0, pending: 0, delivered: RETRY_DELAYS_S.length, last_error: 'HTTP 503' });
    expect(status.last_delivered_at).toBe(new Date(at).toISOString());
    server.setNow(new Date(at + 100 * 3_600_000));
    expect(await server.deliveries.deliverDue()).toBe(0);
    server.setNow(null);
  });

  it("another organization's destinations, other workspaces' and undelivered types never receive; routing.refused is not an alert", async () => {
    server.setNow(null);
    const mine = await receiver();
    const theirs = await receiver();
    const elsewhere = await receiver();
    const ws = (await createWorkspace(server, `dl-iso-${seq}`)).id;
    const otherWs = (await createWorkspace(server, `dl-iso2-${seq}`)).id;
    const id = await webhook(ws, mine.url());
    await webhook(otherWs, elsewhere.url());
    const foreign = await webhook(other.workspaceId, theirs.url(), {}, other.managementKey);
    const posthog = await rest(server, '/observability/destinations', {
      method: 'POST',
      json: { type: 'posthog', name: 'ph', workspace_id: ws, config: { apiKey: 'phc_0123456789abcdef' } },
    });
    const s3 = await rest(server, '/observability/destinations', {
      method: 'POST',
      json: { type: 's3', name: 's3', workspace_id: ws, config: { bucketName: 'b', accessKeyId: 'AKIA0123456789', secretAccessKey: 'secret-0123456789' } },
    });
    const eventId = await alert(ws, 'key.expiring');
    await alert(ws, 'routing.refused');
    await server.deliveries.dispatch();
    await server.deliveries.deliverDue();
    expect(mine.requests.map((q) => q.headers['webhook-id'])).toEqual([eventId]);
    expect(theirs.requests).toEqual([]);
    expect(elsewhere.requests).toEqual([]);
    for (const dest of [posthog, s3]) {
      const destId = (dest.body as { data: { id: string } }).data.id;
      expect(await server.db.eventDelivery.count({ where: { destination_id: destId } })).toBe(0);
    }
    expect(await server.db.eventDelivery.count({ where: { destination_id: foreign } })).toBe(0);
    expect((await statusOf((posthog.body as { data: { id: string } }).data.id)).delivery).toBe('not_supported');
    expect((await statusOf(id)).delivered).toBe(1);
  });

  it('a hanging receiver holds one slot until its deadline; the other destinations are delivered meanwhile', async () => {
    server.setNow(null);
    const hanging = await receiver();
    hanging.answer = () => 'hang';
    const fine = await receiver();
    const ws = (await createWorkspace(server, `dl-hang-${seq}`)).id;
    const stuck = await webhook(ws, hanging.url());
    await webhook(ws, fine.url());
    await alert(ws);
    await server.deliveries.dispatch();
    const started = performance.now();
    const all = server.deliveries.deliverDue();
    await until(() => fine.requests.length === 1 && hanging.requests.length === 1, { what: 'both receivers reached' });
    // The fine receiver was answered while the hanging one still held its request.
    let settled = false;
    void all.then(() => {
      settled = true;
    });
    expect(settled).toBe(false);
    await all;
    expect(performance.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(await statusOf(stuck)).toMatchObject({ failing: 1, last_error: expect.stringContaining(`${TIMEOUT_MS} ms`) });
  });

  it('a redirect is a failure, never followed', async () => {
    server.setNow(null);
    const target = await receiver();
    const r = await receiver();
    r.answer = () => 302;
    const ws = (await createWorkspace(server, `dl-redir-${seq}`)).id;
    const id = await webhook(ws, r.url());
    await alert(ws);
    await server.deliveries.dispatch();
    await server.deliveries.deliverDue();
    expect(target.requests).toEqual([]);
    expect(await statusOf(id)).toMatchObject({ failing: 1, last_error: 'HTTP 302: redirects are not followed' });
  });
});

describe('GET /observability/destinations/{id}/status and destinations.status', () => {
  it('answers the same over tRPC; 401 without a key, 403 for regular and platform keys, 404 for another organization and unknown ids', async () => {
    const ws = (await createWorkspace(server, `dl-status-${seq}`)).id;
    const id = await webhook(ws, 'https://hooks.example.com/status');
    const viaRest = await statusOf(id);
    expect(viaRest).toEqual({
      destination_id: id,
      enabled: true,
      delivery: 'supported',
      disabled_reason: null,
      pending: 0,
      failing: 0,
      delivered: 0,
      dead: 0,
      last_error: null,
      last_error_at: null,
      last_delivered_at: null,
      failing_since: null,
    });
    expect((await ok(server, 'destinations.status', { id }, { query: true })).data).toEqual(viaRest);
    const path = `/observability/destinations/${id}/status`;
    expect((await rest(server, path, { key: null })).status).toBe(401);
    const regular = await createRegularKey(server);
    expect((await rest(server, path, { key: regular.key })).status).toBe(403);
    expect((await rest(server, path, { key: server.platformKey })).status).toBe(403);
    const foreign = await rest(server, path, { key: other.managementKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ error: { code: 404, message: expect.any(String) } });
    expect((await rest(server, '/observability/destinations/00000000-0000-4000-8000-000000000000/status')).status).toBe(404);
    expect((await trpc(server, 'destinations.status', { id }, { key: other.managementKey, query: true })).status).toBe(404);
    // Deleted: 404.
    await rest(server, `/observability/destinations/${id}`, { method: 'DELETE' });
    expect((await rest(server, path)).status).toBe(404);
  });
});

describe('metrics', () => {
  it('report the outbox backlog and oldest age, deliveries by result, destinations disabled', async () => {
    server.setNow(null);
    const r = await receiver();
    const ws = (await createWorkspace(server, `dl-metrics-${seq}`)).id;
    await webhook(ws, r.url());
    await alert(ws);
    expect(await outboxState(server.db)).toMatchObject({ undispatched: 1, oldestAt: expect.any(Date) });
    const scrape = async () => (await fetch(server.metricsUrl!)).text();
    let text = await scrape();
    expect(text).toMatch(/switchyard_outbox_backlog\{stage="dispatch"\} [1-9]/);
    expect(text).toMatch(/switchyard_outbox_oldest_age_seconds [0-9.e+-]+/);
    expect(text).toMatch(/switchyard_destinations_disabled_total [1-9]/);
    await server.deliveries.dispatch();
    await server.deliveries.deliverDue();
    text = await scrape();
    expect(text).toMatch(/switchyard_outbox_backlog\{stage="dispatch"\} 0/);
    expect(text).toMatch(/switchyard_event_deliveries_total\{result="delivered"\} [1-9]/);
    expect(text).toMatch(/switchyard_event_deliveries_total\{result="failed"\} [1-9]/);
    expect(text).toMatch(/switchyard_event_deliveries_total\{result="dead"\} [1-9]/);
  });
});
