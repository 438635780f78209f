// Alerts name the key the way the API names it: `limit.threshold_crossed` for a key, `key.expiring`
// and `routing.refused` carry the key's `hash` (its public id: GET/PATCH/DELETE /keys/{hash}) and,
// for the alerts, its name, beside the fields version 1 had. The alerts are delivered to a real
// webhook receiver on loopback and verified with the Standard Webhooks library; what arrived is
// then looked up through the API.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitKeyExpiryNotices } from '../../src/modules/events/key-expiry.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { until } from '../fixtures.js';
import { createWorkspace, rest } from '../fixtures-admin.js';
import { createKey, importDemoCatalog, record } from '../fixtures-catalog.js';
import { testServerWith } from '../fixtures-files.js';
import { Receiver } from '../fixtures-receiver.js';
import { ok, trpcRaw } from '../fixtures-trpc.js';

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await testServerWith({ UPSTREAM_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_POLL_MS: '0', KEY_EXPIRY_SCAN_INTERVAL_MS: '0' });
  receiver = await new Receiver().start();
  await importDemoCatalog(server);
  await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 1000 });
});
afterAll(async () => {
  await receiver?.close();
  await server?.close();
});

let seq = 0;
/** A workspace with a webhook destination to the receiver, and the destination's signing secret. */
async function hooked(): Promise<{ workspaceId: string; secret: string }> {
  const workspaceId = (await createWorkspace(server, `alert-keys-${++seq}`)).id;
  const res = await rest(server, '/observability/destinations', {
    method: 'POST',
    json: { type: 'webhook', name: `hook-${seq}`, workspace_id: workspaceId, config: { url: receiver.url(`/ws-${seq}`) } },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const id = (res.body as { data: { id: string } }).data.id;
  const { secret } = await ok(server, 'destinations.secret', { id }, { query: true });
  return { workspaceId, secret: secret as string };
}

/** Dispatches and delivers what is due; answers the verified bodies received at `path` of the given type. */
async function delivered(secret: string, path: string, type: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  await server.deliveries.dispatch();
  await server.deliveries.deliverDue();
  return receiver.requests
    .filter((r) => r.path === path)
    .map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; data: Record<string, unknown> })
    .filter((e) => e.type === type);
}

/** What GET /keys/{hash} answers for the hash an alert carried. */
async function keyByHash(hash: string) {
  const res = await rest(server, `/keys/${hash}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as { data: { hash: string; name: string } }).data;
}

describe('alerts name the key as the API names it', () => {
  it("limit.threshold_crossed for a key carries its hash and name, which GET /keys/{hash} answers; v1's fields stay", async () => {
    const { workspaceId, secret } = await hooked();
    const { hash } = await createKey(server, { name: 'spend-watched', limit: 2, workspace_id: workspaceId });
    const row = await server.db.apiKey.findUniqueOrThrow({ where: { hash } });
    await record(server, { api_key_hash: hash, usage: 1.1 });
    const events = await delivered(secret, `/ws-${seq}`, 'limit.threshold_crossed');
    expect(events).toHaveLength(1);
    const data = events[0]!.data;
    expect(data).toMatchObject({ version: 1, kind: 'key', id: row.id, threshold_percent: 50, limit: 2, workspace_id: workspaceId });
    expect(data.api_key).toEqual({ id: row.id, hash, hash_prefix: hash.slice(0, 12), name: 'spend-watched' });
    const named = await keyByHash((data.api_key as { hash: string }).hash);
    expect(named).toMatchObject({ hash, name: 'spend-watched' });
    // The internal id names nothing the API answers.
    expect((await rest(server, `/keys/${row.id}`)).status).toBe(404);
  });

  it("a budget's crossing has api_key null", async () => {
    const { workspaceId, secret } = await hooked();
    await ok(server, 'budgets.set', { workspace_ref: workspaceId, interval: 'lifetime', limit_usd: 2 });
    const { hash } = await createKey(server, { workspace_id: workspaceId });
    await record(server, { api_key_hash: hash, usage: 1.1 });
    const events = await delivered(secret, `/ws-${seq}`, 'limit.threshold_crossed');
    expect(events.map((e) => [e.data.kind, e.data.api_key])).toEqual([['budget', null]]);
  });

  it('key.expiring carries the hash beside hash_prefix and name', async () => {
    const { workspaceId, secret } = await hooked();
    const now = new Date();
    const expiresAt = new Date(now.getTime() + 3 * 86_400_000);
    const { hash } = await createKey(server, { name: 'soon-gone', expires_at: expiresAt.toISOString(), workspace_id: workspaceId });
    const row = await server.db.apiKey.findUniqueOrThrow({ where: { hash } });
    expect(await emitKeyExpiryNotices(server.db, now)).toBeGreaterThanOrEqual(1);
    const events = await delivered(secret, `/ws-${seq}`, 'key.expiring');
    expect(events).toHaveLength(1);
    expect(events[0]!.data.api_key).toEqual({ id: row.id, hash, hash_prefix: hash.slice(0, 12), name: 'soon-gone' });
    expect(await keyByHash(hash)).toMatchObject({ hash, name: 'soon-gone' });
  });

  it("routing.refused's api_key carries the hash", async () => {
    const { hash } = await createKey(server);
    const row = await server.db.apiKey.findUniqueOrThrow({ where: { hash } });
    const { status, data } = await trpcRaw(server, 'routing.authorize', { api_key_hash: hash, model: 'acme/none' });
    expect(status).toBe(200);
    expect((data as { data: unknown }).data).toMatchObject({ allowed: false, code: 'model_not_found' });
    const find = () => server.db.event.findFirst({ where: { cause: { startsWith: `routing.refused:${row.id}:` } } });
    await until(async () => (await find()) !== null, { what: 'the refusal event' });
    const event = (await find())!;
    expect((event.payload as { api_key: unknown }).api_key).toEqual({ id: row.id, hash, hash_prefix: hash.slice(0, 12) });
  });
});
