// A destination's `headers` may not set what the sender owns: hop-by-hop and framing headers
// (Connection, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade, Content-Length,
// Expect), Host, and the headers the senders write (Standard Webhooks' webhook-id, -timestamp,
// -signature; Content-Type, Content-Encoding, User-Agent). A write that names one is a 400 naming it
// in error.metadata.reason, over REST and tRPC, create and update. A row written before the rule
// (inserted here straight into the database) still holds them: the webhook and OTLP senders drop
// them, which real receivers on loopback show by what arrived.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSecretKey, SecretBox, SECRET_KEY_FILE } from '../../src/lib/secret-box.js';
import { maskSecret, signingAd } from '../../src/modules/destinations/destinations-secrets.js';
import { emitEvent } from '../../src/modules/events/emit.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { createRegularKey, createWorkspace, errorOf, expectEnvelope, rest } from '../fixtures-admin.js';
import { record } from '../fixtures-catalog.js';
import { testServerWith } from '../fixtures-files.js';
import { headerNames, Receiver } from '../fixtures-receiver.js';
import { trpc } from '../fixtures-trpc.js';

const PATH = '/observability/destinations';
/** Every header a write may not set, as a caller might spell it. */
const RESERVED = [
  'Connection',
  'Keep-Alive',
  'Proxy-Authorization',
  'proxy-connection',
  'TE',
  'Trailer',
  'Transfer-Encoding',
  'Upgrade',
  'Content-Length',
  'Expect',
  'Host',
  'webhook-id',
  'Webhook-Timestamp',
  'WEBHOOK-SIGNATURE',
  'Content-Type',
  'Content-Encoding',
  'User-Agent',
];
/** What an old row holds: framing and hop-by-hop headers, a Host, a forged signature, and one header of its own. */
const OLD_HEADERS = {
  'Transfer-Encoding': 'chunked',
  'Content-Length': '5',
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  Expect: '100-continue',
  Host: 'evil.example.net',
  'Proxy-Authorization': 'Basic Zm9vOmJhcg==',
  'webhook-signature': 'v1,forged',
  'X-Team': 'kept-header-value',
};

let server: TestServer;
let box: SecretBox;
const receivers: Receiver[] = [];
const receiver = async () => {
  const made = await new Receiver().start();
  receivers.push(made);
  return made;
};

beforeAll(async () => {
  server = await testServerWith({ UPSTREAM_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_POLL_MS: '0', KEY_EXPIRY_SCAN_INTERVAL_MS: '0' });
  box = new SecretBox([parseSecretKey(await fs.readFile(path.join(server.dataDir, SECRET_KEY_FILE), 'utf8'))]);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await server?.close();
});

let seq = 0;
const freshWorkspace = async () => (await createWorkspace(server, `hdr-${++seq}-${randomUUID().slice(0, 6)}`)).id as string;

function expectReservedHeader(answer: { status: number; body: unknown }, name: string) {
  expectEnvelope(answer, 400);
  const metadata = errorOf(answer).metadata as { reason: string; parameter: string };
  expect(metadata.parameter).toBe(`config.headers.${name}`);
  expect(metadata.reason).toContain(`header ${name} may not be set`);
}

/** A destination row as a server before the rule could write it: its headers sealed as delivery opens them. */
async function oldRow(workspaceId: string, type: 'webhook' | 'otel-collector', config: Record<string, string>) {
  const id = randomUUID();
  const signing = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  await server.db.observabilityDestination.create({
    data: {
      id,
      organization_id: server.organizationId,
      workspace_id: workspaceId,
      type,
      name: `old-${++seq}`,
      config: { ...config, headers: Object.fromEntries(Object.entries(OLD_HEADERS).map(([k, v]) => [k, maskSecret(v)])) },
      secrets_ciphertext: box.seal(JSON.stringify({ headers: OLD_HEADERS }), id),
      signing_secret_ciphertext: type === 'webhook' ? box.seal(signing, signingAd(id)) : null,
      regions: ['global'],
    },
  });
  return { id, signing };
}

describe('writes that set a header the sender owns', () => {
  it('POST: 400 naming the header, for each of them, however it is spelled; nothing is made', async () => {
    const ws = await freshWorkspace();
    for (const name of RESERVED) {
      const res = await rest(server, PATH, {
        method: 'POST',
        json: {
          type: 'webhook',
          name: `h-${name}`,
          workspace_id: ws,
          config: { url: 'https://hooks.example.com/in', headers: { 'X-Ok': 'fine', [name]: 'x' } },
        },
      });
      expectReservedHeader(res, name);
    }
    // An OTLP destination likewise (its Host, its framing).
    const otlp = await rest(server, PATH, {
      method: 'POST',
      json: { type: 'otel-collector', name: 'o', workspace_id: ws, config: { endpoint: 'https://otel.example.com', headers: { Host: 'evil.example.net' } } },
    });
    expectReservedHeader(otlp, 'Host');
    expect(await server.db.observabilityDestination.count({ where: { workspace_id: ws } })).toBe(0);
  });

  it('PATCH and tRPC: 400 naming the header; the stored headers stay; other headers are taken', async () => {
    const ws = await freshWorkspace();
    const created = await rest(server, PATH, {
      method: 'POST',
      json: { type: 'webhook', name: 'patched', workspace_id: ws, config: { url: 'https://hooks.example.com/in', headers: { 'X-Team': 'team-a-value' } } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = (created.body as { data: { id: string } }).data.id;
    for (const name of ['Transfer-Encoding', 'Upgrade', 'Expect', 'Host', 'webhook-id']) {
      expectReservedHeader(await rest(server, `${PATH}/${id}`, { method: 'PATCH', json: { config: { headers: { [name]: 'x' } } } }), name);
    }
    const viaTrpc = await trpc(server, 'destinations.update', { id, config: { headers: { Connection: 'Upgrade' } } });
    expect(viaTrpc.status).toBe(400);
    expect(viaTrpc.error?.data.metadata).toMatchObject({ parameter: 'config.headers.Connection' });
    expect(String(viaTrpc.error?.data.metadata?.reason)).toContain('header Connection may not be set');
    const createdViaTrpc = await trpc(server, 'destinations.create', {
      type: 'webhook',
      name: 'via-trpc',
      workspace_id: ws,
      config: { url: 'https://hooks.example.com/in', headers: { 'Keep-Alive': 'timeout=5' } },
    });
    expect(createdViaTrpc.status).toBe(400);
    expect(String(createdViaTrpc.error?.data.metadata?.reason)).toContain('header Keep-Alive may not be set');
    const fine = await rest(server, `${PATH}/${id}`, { method: 'PATCH', json: { config: { headers: { 'X-Other': 'other-value-1' } } } });
    expect(fine.status, JSON.stringify(fine.body)).toBe(200);
    expect((fine.body as { data: { config: { headers: unknown } } }).data.config.headers).toEqual({ 'X-Other': 'oth...ue-1' });
  });

  it('401 without a key', async () => {
    const res = await rest(server, PATH, {
      method: 'POST',
      key: null,
      json: { type: 'webhook', name: 'anon', config: { url: 'https://hooks.example.com/in', headers: { Host: 'x' } } },
    });
    expectEnvelope(res, 401);
  });
});

describe('a row written before the rule', () => {
  it('the webhook sender drops its reserved headers: one Content-Length, no Transfer-Encoding, Upgrade, Expect or Proxy-*, the real Host, a signature that verifies', async () => {
    const r = await receiver();
    const ws = await freshWorkspace();
    const { signing } = await oldRow(ws, 'webhook', { url: r.url(), method: 'POST' });
    const { id: eventId } = await emitEvent(server.db, {
      type: 'limit.threshold_crossed',
      cause: `test:old-row:${randomUUID()}`,
      organizationId: server.organizationId,
      workspaceId: ws,
      payload: { version: 1, n: 1 },
    });
    await server.deliveries.dispatch();
    expect(await server.deliveries.deliverDue()).toBe(1);
    expect(r.requests).toHaveLength(1);
    const [arrived] = r.requests;
    const names = headerNames(arrived!);
    expect(names.filter((n) => n === 'content-length')).toHaveLength(1);
    expect(arrived!.headers['content-length']).toBe(String(Buffer.byteLength(arrived!.body)));
    for (const gone of ['transfer-encoding', 'upgrade', 'expect', 'proxy-authorization']) expect(names).not.toContain(gone);
    expect(arrived!.headers.connection).not.toMatch(/upgrade/i);
    expect(arrived!.headers.host).toBe(`127.0.0.1:${r.port}`);
    expect(names.filter((n) => n === 'webhook-signature')).toHaveLength(1);
    expect(arrived!.headers['webhook-id']).toBe(eventId);
    expect(arrived!.headers['x-team']).toBe('kept-header-value');
    expect(() => new Webhook(signing).verify(arrived!.body, arrived!.headers as Record<string, string>)).not.toThrow();
  });

  it('the OTLP sender drops them too: the collector sees its own Host, no framing headers of the row, the row’s own header', async () => {
    const r = await receiver();
    r.answer = () => 200;
    const ws = await freshWorkspace();
    const patched = await rest(server, `/workspaces/${ws}`, { method: 'PATCH', json: { is_observability_broadcast_enabled: true } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await oldRow(ws, 'otel-collector', { endpoint: `http://127.0.0.1:${r.port}` });
    const key = await createRegularKey(server, ws);
    await record(server, { api_key_hash: key.hash, model: 'openai/gpt-4o', total_cost: 0 });
    await server.deliveries.dispatch();
    expect(await server.deliveries.deliverDue()).toBe(1);
    const traces = r.requests.filter((q) => q.path === '/v1/traces');
    expect(traces).toHaveLength(1);
    const [arrived] = traces;
    const names = headerNames(arrived!);
    expect(arrived!.headers.host).toBe(`127.0.0.1:${r.port}`);
    for (const gone of ['upgrade', 'expect', 'proxy-authorization', 'webhook-signature']) expect(names).not.toContain(gone);
    // The exporter's own framing, one way only: never a Content-Length beside a Transfer-Encoding, never either twice.
    const framing = names.filter((n) => n === 'content-length' || n === 'transfer-encoding');
    expect(framing).toHaveLength(1);
    if (arrived!.headers['content-length']) expect(arrived!.headers['content-length']).toBe(String(Buffer.byteLength(arrived!.body)));
    expect(arrived!.headers.connection ?? '').not.toMatch(/upgrade/i);
    expect(arrived!.headers['x-team']).toBe('kept-header-value');
    expect(JSON.parse(arrived!.body)).toHaveProperty('resourceSpans');
  });
});
