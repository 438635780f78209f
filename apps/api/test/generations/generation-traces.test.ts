// Generation traces to otel-collector and s3 destinations (decision 0035) on the
// real server: a real OTLP/HTTP receiver on loopback (a Node server reading the exporter's JSON), the
// S3 protocol server the tests start, recordings through generations.record. What is emitted (only
// where broadcast is on and a trace destination exists, once per generation), who receives it
// (regions, key filter, sampling, filter rules; never another organization, never a webhook; alerts
// never to trace destinations), what a trace carries (privacy mode, io logging, the
// broadcast_generation_* flags), the same ids on every attempt, and failures shown in status.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaled } from '@switchyard/db/testing';
import { emitEvent } from '../../src/modules/events/emit.js';
import { FilterJudge } from '../../src/modules/destinations/filter-rules.js';
import { sampledIn } from '../../src/modules/events/generation-traces.js';
import { traceObjectKey } from '../../src/modules/events/trace-senders.js';
import { testS3, type TestS3 } from '../../src/testing/s3.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { createOrganization, until, type OrgFixture } from '../fixtures.js';
import { createRegularKey, createWorkspace, rest } from '../fixtures-admin.js';
import { record } from '../fixtures-catalog.js';
import { testServerWith } from '../fixtures-files.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number };
}

/**
 * An OTLP/HTTP receiver: keeps each request, with the spans of those to a /v1/traces path (JSON, as
 * the exporter sends); `status` is what it answers.
 */
class Collector {
  readonly requests: { path: string; headers: http.IncomingHttpHeaders; spans: OtlpSpan[] }[] = [];
  /** An HTTP status, or 'hang': read the request and answer only at close (400: the exporter does not retry it). */
  status: number | 'hang' = 200;
  readonly #held: http.ServerResponse[] = [];
  readonly #server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const spans: OtlpSpan[] = [];
      if (this.status === 200 && req.url!.endsWith('/v1/traces')) {
        expect(req.headers['content-type']).toBe('application/json');
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
        for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      }
      this.requests.push({ path: req.url!, headers: req.headers, spans });
      if (this.status === 'hang') this.#held.push(res);
      else res.writeHead(this.status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  get spans(): OtlpSpan[] {
    return this.requests.flatMap((r) => r.spans);
  }
  get paths(): string[] {
    return this.requests.map((r) => r.path);
  }
  async start(): Promise<this> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    return this;
  }
  get endpoint(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }
  close(): Promise<void> {
    for (const res of this.#held.splice(0)) res.writeHead(400).end();
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** An OTLP attribute's value, plain. */
function plain(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return value.arrayValue.values.map(plain);
  return undefined;
}
const attributesOf = (span: OtlpSpan) => Object.fromEntries(span.attributes.map((a) => [a.key, plain(a.value)]));

let server: TestServer;
let s3: TestS3;
let other: OrgFixture;
const collectors: Collector[] = [];
const collector = async () => {
  const made = await new Collector().start();
  collectors.push(made);
  return made;
};

beforeAll(async () => {
  server = await testServerWith({
    UPSTREAM_ALLOWED_HOSTS: '127.0.0.1',
    DELIVERY_POLL_MS: '0',
    // A delivery's whole attempt (the exporter's first load included) must fit in it on a busy
    // machine too; the hanging collectors' attempts end with it.
    DELIVERY_TIMEOUT_MS: String(scaled(2_000)),
    KEY_EXPIRY_SCAN_INTERVAL_MS: '0',
  });
  s3 = await testS3();
  other = await createOrganization(server.db);
});
afterAll(async () => {
  await Promise.all(collectors.map((c) => c.close()));
  await server?.close();
});

let seq = 0;

/** A workspace with broadcast (and io logging) as given, and a regular key in it. */
async function workspace(flags: { broadcast?: boolean; io?: boolean } = {}) {
  const ws = (await createWorkspace(server, `tr-${++seq}-${Date.now().toString(36)}`)).id as string;
  const patched = await rest(server, `/workspaces/${ws}`, {
    method: 'PATCH',
    json: { is_observability_broadcast_enabled: flags.broadcast ?? true, is_observability_io_logging_enabled: flags.io ?? true },
  });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  const key = await createRegularKey(server, ws);
  return { ws, key };
}

async function destination(
  ws: string,
  type: 'otel-collector' | 's3' | 'webhook',
  config: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  key = server.managementKey,
) {
  const res = await rest(server, '/observability/destinations', {
    method: 'POST',
    key,
    json: { type, name: `${type}-${++seq}`, workspace_id: ws, config, ...extra },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return (res.body as { data: { id: string; delivery: string } }).data;
}

const content = { input: { messages: [{ role: 'user' as const, content: 'What is the capital of France?' }] }, output: { completion: 'Paris.' } };

async function deliver() {
  await server.deliveries.dispatch();
  return server.deliveries.deliverDue();
}

const eventOf = async (generationId: string) => server.db.event.findUnique({ where: { cause: `generation.recorded:${generationId}` } });

describe('otel-collector destinations', () => {
  it('receive each recorded generation as an OTLP span with GenAI attributes; the trace id is the event id', async () => {
    const c = await collector();
    const { ws, key } = await workspace();
    const dest = await destination(ws, 'otel-collector', { endpoint: c.endpoint, headers: { 'X-Scope': 'tenant-a-scope' } });
    expect(dest.delivery).toBe('supported');
    const id = await record(server, {
      api_key_hash: key.hash,
      model: 'openai/gpt-4o',
      provider_name: 'OpenAI',
      tokens_prompt: 12,
      tokens_completion: 3,
      latency: 850,
      finish_reason: 'stop',
      session_id: 'sess-1',
      total_cost: 0.002,
      content,
    });
    const event = await eventOf(id);
    expect(event).toMatchObject({ type: 'generation.recorded', workspace_id: ws, payload: { version: 1, generation_id: id } });
    expect(await deliver()).toBe(1);
    expect(c.paths).toEqual(['/v1/traces']);
    expect(c.requests[0]!.headers['x-scope']).toBe('tenant-a-scope');
    const [span] = c.spans;
    expect(span!.traceId).toBe(event!.id.replaceAll('-', ''));
    expect(span!.name).toBe('chat openai/gpt-4o');
    expect(BigInt(span!.endTimeUnixNano) - BigInt(span!.startTimeUnixNano)).toBe(850_000_000n);
    const attributes = attributesOf(span!);
    expect(attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'OpenAI',
      'gen_ai.request.model': 'openai/gpt-4o',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.conversation.id': 'sess-1',
      'switchyard.generation.id': id,
    });
    expect(JSON.parse(attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'What is the capital of France?' }] },
    ]);
    expect(JSON.parse(attributes['gen_ai.output.messages'] as string)[0].parts[0].content).toBe('Paris.');
    // Without the broadcast_generation_* flags: no cost, identity or request context.
    expect(attributes['switchyard.cost.total_usd']).toBeUndefined();
    expect(attributes['switchyard.api_key.name']).toBeUndefined();
    const status = await rest(server, `/observability/destinations/${dest.id}/status`);
    expect(status.body).toMatchObject({ data: { delivery: 'supported', delivered: 1, pending: 0, last_error: null } });
  });

  it('privacy_mode and the workspace io logging leave bodies out; the broadcast_generation_* flags add their attributes', async () => {
    const c = await collector();
    const { ws, key } = await workspace();
    const flags = { broadcast_generation_cost: true, broadcast_generation_identity: true, broadcast_generation_request_context: true };
    await destination(ws, 'otel-collector', { endpoint: `${c.endpoint}/private` }, { privacy_mode: true, ...flags });
    await destination(ws, 'otel-collector', { endpoint: `${c.endpoint}/open/v1/traces` });
    const id = await record(server, {
      api_key_hash: key.hash,
      external_user: 'end-user-7',
      user_agent: 'curl/8',
      total_cost: 0.5,
      usage: 0.5,
      content,
    });
    expect(await deliver()).toBe(2);
    const byPath = new Map(c.requests.map((r) => [r.path, attributesOf(r.spans[0]!)]));
    const hidden = byPath.get('/private/v1/traces')!;
    expect(hidden['gen_ai.input.messages']).toBeUndefined();
    expect(hidden['gen_ai.output.messages']).toBeUndefined();
    expect(hidden).toMatchObject({
      'switchyard.generation.id': id,
      'switchyard.cost.total_usd': 0.5,
      'user.id': 'end-user-7',
      'switchyard.api_key.name': key.name,
      'user_agent.original': 'curl/8',
    });
    expect(byPath.get('/open/v1/traces')!['gen_ai.input.messages']).toBeDefined();
    // The same trace and span ids at both destinations (one event).
    expect(new Set(c.spans.map((s) => `${s.traceId}/${s.spanId}`)).size).toBe(1);

    // The workspace's io logging off: no bodies, whatever the destination says.
    await rest(server, `/workspaces/${ws}`, { method: 'PATCH', json: { is_observability_io_logging_enabled: false } });
    await record(server, { api_key_hash: key.hash, content });
    expect(await deliver()).toBe(2);
    for (const span of c.spans.slice(2)) expect(attributesOf(span)['gen_ai.input.messages']).toBeUndefined();
  });

  it("a generation's many traces go in one export (up to TRACE_BATCH spans a request)", async () => {
    const c = await collector();
    const { ws, key } = await workspace();
    await destination(ws, 'otel-collector', { endpoint: c.endpoint });
    await Promise.all(Array.from({ length: 30 }, () => record(server, { api_key_hash: key.hash })));
    expect(await deliver()).toBe(30);
    expect(c.requests).toHaveLength(1);
    expect(new Set(c.spans.map((s) => s.traceId)).size).toBe(30);
  });

  it('a hanging collector holds one delivery slot with all its due traces; other destinations are delivered meanwhile', async () => {
    const hanging = await collector();
    hanging.status = 'hang';
    const fine = await collector();
    const mine = await workspace();
    const stuck = await destination(mine.ws, 'otel-collector', { endpoint: hanging.endpoint });
    const theirs = await workspace();
    await destination(theirs.ws, 'otel-collector', { endpoint: fine.endpoint });
    for (let i = 0; i < 5; i++) await record(server, { api_key_hash: mine.key.hash });
    await record(server, { api_key_hash: theirs.key.hash });
    await server.deliveries.dispatch();
    const all = server.deliveries.deliverDue();
    await until(() => fine.spans.length === 1 && hanging.requests.length === 1, { what: 'both collectors reached' });
    let settled = false;
    void all.then(() => {
      settled = true;
    });
    // The fine collector was answered while the hanging one held one request with the 5 traces.
    expect(settled).toBe(false);
    expect(await all).toBe(6);
    expect(hanging.requests).toHaveLength(1);
    expect((await rest(server, `/observability/destinations/${stuck.id}/status`)).body).toMatchObject({ data: { failing: 5, delivered: 0 } });
    // Deleted: its retries do not hang the later tests' rounds.
    expect((await rest(server, `/observability/destinations/${stuck.id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('a failing collector shows in status and is retried with the same trace id; a private address is refused', async () => {
    const c = await collector();
    c.status = 500;
    const { ws, key } = await workspace();
    const dest = await destination(ws, 'otel-collector', { endpoint: c.endpoint });
    const refused = await destination(ws, 'otel-collector', { endpoint: 'https://10.1.2.3:4318' });
    const start = new Date(Date.now() + 60_000);
    server.setNow(start);
    try {
      const id = await record(server, { api_key_hash: key.hash });
      expect(await deliver()).toBe(2);
      const failing = await rest(server, `/observability/destinations/${dest.id}/status`);
      expect(failing.body).toMatchObject({ data: { failing: 1, delivered: 0, last_error: 'HTTP 500' } });
      const denied = await rest(server, `/observability/destinations/${refused.id}/status`);
      expect((denied.body as { data: { last_error: string } }).data.last_error).toMatch(/^the address is refused/);
      c.status = 200;
      server.setNow(new Date(start.getTime() + 6_000));
      expect(await server.deliveries.deliverDue()).toBe(2);
      expect(c.spans).toHaveLength(1);
      expect(c.spans[0]!.traceId).toBe((await eventOf(id))!.id.replaceAll('-', ''));
      expect((await rest(server, `/observability/destinations/${dest.id}/status`)).body).toMatchObject({ data: { delivered: 1, failing: 0 } });
    } finally {
      server.setNow(null);
    }
  });
});

describe('delivery slots between tenants', () => {
  it("one organization's hanging collectors hold at most half of a server's attempts: another organization's traces go meanwhile", async () => {
    // Two slots, delivery in the background; attempts that hang outlive the wait below.
    const busy = await testServerWith({
      UPSTREAM_ALLOWED_HOSTS: '127.0.0.1',
      DELIVERY_POLL_MS: '20',
      DELIVERY_CONCURRENCY: '2',
      DELIVERY_TIMEOUT_MS: '60000',
      KEY_EXPIRY_SCAN_INTERVAL_MS: '0',
    });
    const hanging = await new Collector().start();
    hanging.status = 'hang';
    const fine = await new Collector().start();
    try {
      const setUp = async (org: { workspaceId: string; managementKey: string }, endpoints: string[]) => {
        const patched = await rest(busy, `/workspaces/${org.workspaceId}`, {
          method: 'PATCH',
          key: org.managementKey,
          json: { is_observability_broadcast_enabled: true },
        });
        expect(patched.status).toBe(200);
        for (const endpoint of endpoints) {
          const made = await rest(busy, '/observability/destinations', {
            method: 'POST',
            key: org.managementKey,
            json: { type: 'otel-collector', name: endpoint, workspace_id: org.workspaceId, config: { endpoint } },
          });
          expect(made.status, JSON.stringify(made.body)).toBe(201);
        }
        return (await createRegularKey(busy, org.workspaceId, org.managementKey)).hash;
      };
      const hostile = await setUp(busy, [`${hanging.endpoint}/a`, `${hanging.endpoint}/b`]);
      const victim = await setUp(await createOrganization(busy.db), [fine.endpoint]);
      await record(busy, { api_key_hash: hostile });
      await until(() => hanging.requests.length >= 1, { what: 'the hostile collectors reached' });
      await record(busy, { api_key_hash: victim });
      await until(() => fine.spans.length === 1, { what: "the other organization's trace delivered while the hostile ones hang" });
      // Its second destination waits: the organization's share (1 of 2) is taken.
      expect(hanging.requests).toHaveLength(1);
    } finally {
      // The hanging attempts end with their answers (400); then the server stops without waiting for them.
      await Promise.all([hanging.close(), fine.close()]);
      await busy.close();
    }
  });
});

describe('s3 destinations', () => {
  it('receive each trace as a JSON object under prefix and pathTemplate, named <traceId>-<timestamp>.json', async () => {
    const bucket = await s3.createBucket();
    const { ws, key } = await workspace();
    const dest = await destination(ws, 's3', {
      bucketName: bucket,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      endpoint: s3.endpoint,
      region: 'us-east-1',
      prefix: 'traces',
      pathTemplate: '{prefix}/{year}/{month}/{day}/{apiKeyName}',
    });
    const at = new Date('2026-11-20T10:00:00.000Z');
    const id = await record(server, { api_key_hash: key.hash, created_at: at.toISOString(), model: 'anthropic/claude-3.5-sonnet', content });
    expect(await deliver()).toBe(1);
    const event = (await eventOf(id))!;
    const traceId = event.id.replaceAll('-', '');
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual([`traces/2026/11/20/${key.name}/${traceId}-${at.getTime()}.json`]);
    const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: listed.Contents![0]!.Key }));
    const body = JSON.parse(await object.Body!.transformToString()) as {
      id: string;
      type: string;
      data: { trace_id: string; attributes: Record<string, unknown> };
    };
    expect(body).toMatchObject({
      id: event.id,
      type: 'generation.recorded',
      data: { trace_id: traceId, attributes: { 'gen_ai.request.model': 'anthropic/claude-3.5-sonnet' } },
    });
    expect((await rest(server, `/observability/destinations/${dest.id}/status`)).body).toMatchObject({ data: { delivered: 1 } });
    client.destroy();
  });

  it('a store that refuses the object fails the attempt with its status, never a credential', async () => {
    const { ws, key } = await workspace();
    const dest = await destination(ws, 's3', {
      bucketName: 'no-such-bucket-here',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER-secret-value',
      endpoint: s3.endpoint,
    });
    await record(server, { api_key_hash: key.hash });
    expect(await deliver()).toBe(1);
    const status = (await rest(server, `/observability/destinations/${dest.id}/status`)).body as { data: { failing: number; last_error: string } };
    expect(status.data.failing).toBe(1);
    expect(status.data.last_error).toBe('HTTP 404 (NoSuchBucket)');
    expect(status.data.last_error).not.toContain('S3RVER');
  });

  it('the default object key is switchyard-traces/<date>/<traceId>-<ms>.json; template variables fill in, dot segments drop', () => {
    const trace = {
      traceId: 'ab'.repeat(16),
      spanId: 'cd'.repeat(8),
      name: 'chat m',
      startTime: new Date(0),
      endTime: new Date('2026-01-02T03:04:05.678Z'),
      status: 'unset' as const,
      attributes: {},
    };
    expect(traceObjectKey({}, trace, 'k')).toBe(`switchyard-traces/2026-01-02/${trace.traceId}-${trace.endTime.getTime()}.json`);
    expect(traceObjectKey({ prefix: 'p', pathTemplate: '{prefix}/../{apiKeyName}/{unknown}' }, trace, 'a/b')).toBe(
      `p/a_b/{unknown}/${trace.traceId}-${trace.endTime.getTime()}.json`,
    );
  });
});

describe('who receives a trace', () => {
  it('nothing is emitted without broadcast or without a trace destination; a generation recorded twice is one event', async () => {
    const c = await collector();
    const off = await workspace({ broadcast: false });
    await destination(off.ws, 'otel-collector', { endpoint: c.endpoint });
    const offId = await record(server, { api_key_hash: off.key.hash });
    expect(await eventOf(offId)).toBeNull();
    const bare = await workspace();
    await destination(bare.ws, 'webhook', { url: `${c.endpoint}/hook` });
    expect(await eventOf(await record(server, { api_key_hash: bare.key.hash }))).toBeNull();
    const on = await workspace();
    await destination(on.ws, 'otel-collector', { endpoint: c.endpoint });
    const id = await record(server, { api_key_hash: on.key.hash });
    await record(server, { api_key_hash: on.key.hash, id });
    expect(await server.db.event.count({ where: { cause: `generation.recorded:${id}` } })).toBe(1);
    expect(await deliver()).toBe(1);
    // A second dispatch makes nothing more.
    expect(await deliver()).toBe(0);
    expect(c.spans).toHaveLength(1);
  });

  it('regions, the key filter and filter rules decide per destination; webhooks and other organizations get no trace; alerts go to no trace destination', async () => {
    const c = await collector();
    const { ws, key } = await workspace();
    const second = await createRegularKey(server, ws);
    const to = (path: string, extra: Record<string, unknown> = {}) => destination(ws, 'otel-collector', { endpoint: `${c.endpoint}/${path}` }, extra);
    await to('global');
    await to('europe', { regions: ['eu'] });
    await to('second-key', { api_key_hashes: [second.hash] });
    await to('claude-or-long', {
      filter_rules: {
        groups: [
          {
            logic: 'or',
            rules: [
              { field: 'model', operator: 'regex', value: '^anthropic/' },
              { field: 'total_tokens', operator: 'gte', value: 1000 },
            ],
          },
        ],
      },
    });
    await to('disabled-filter', { filter_rules: { enabled: false, groups: [{ rules: [{ field: 'model', operator: 'equals', value: 'nothing' }] }] } });
    const turnedOff = await destination(
      ws,
      's3',
      { bucketName: 'bucket-off', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', endpoint: s3.endpoint },
      { enabled: false },
    );
    const hook = await destination(ws, 'webhook', { url: `${c.endpoint}/hook` });
    // Another organization's workspace with broadcast, and a collector of its own.
    const theirs = await collector();
    await rest(server, `/workspaces/${other.workspaceId}`, { method: 'PATCH', key: other.managementKey, json: { is_observability_broadcast_enabled: true } });
    await destination(other.workspaceId, 'otel-collector', { endpoint: theirs.endpoint }, {}, other.managementKey);

    await record(server, { api_key_hash: key.hash, model: 'openai/gpt-4o', tokens_prompt: 10 });
    await record(server, { api_key_hash: key.hash, model: 'anthropic/claude-3.5-sonnet', data_region: 'eu' });
    await record(server, { api_key_hash: second.hash, model: 'openai/gpt-4o', tokens_prompt: 900, tokens_completion: 100 });
    await emitEvent(server.db, {
      type: 'limit.threshold_crossed',
      cause: `test:tr:${++seq}`,
      organizationId: server.organizationId,
      workspaceId: ws,
      payload: { version: 1 },
    });
    await deliver();
    const got = (path: string) =>
      c.requests
        .filter((r) => r.path === `/${path}/v1/traces`)
        .flatMap((r) => r.spans.map(attributesOf))
        .map((a) => `${a['gen_ai.request.model']}:${a['gen_ai.usage.input_tokens']}`)
        .sort();
    expect(got('global')).toEqual(['openai/gpt-4o:10', 'openai/gpt-4o:900']);
    expect(got('europe')).toEqual(['anthropic/claude-3.5-sonnet:0']);
    expect(got('second-key')).toEqual(['openai/gpt-4o:900']);
    expect(got('claude-or-long')).toEqual(['openai/gpt-4o:900']);
    expect(got('disabled-filter')).toEqual(['openai/gpt-4o:10', 'openai/gpt-4o:900']);
    expect(await server.db.eventDelivery.count({ where: { destination_id: turnedOff.id } })).toBe(0);
    // The webhook got the alert only; no collector got it.
    expect(c.paths.filter((p) => p === '/hook')).toHaveLength(1);
    expect(await server.db.eventDelivery.count({ where: { destination_id: hook.id } })).toBe(1);
    expect(theirs.spans).toEqual([]);
  });

  it('sampling keeps the share its rate says, deterministically per event and destination', async () => {
    const c = await collector();
    const { ws, key } = await workspace();
    const dest = await destination(ws, 'otel-collector', { endpoint: c.endpoint }, { sampling_rate: 0.5 });
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push(await record(server, { api_key_hash: key.hash }));
    await deliver();
    const events = await Promise.all(ids.map(eventOf));
    const expected = events.filter((e) => sampledIn(e!.id, dest.id, 0.5)).map((e) => e!.id.replaceAll('-', ''));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(20);
    expect(c.spans.map((s) => s.traceId).sort()).toEqual(expected.sort());
  });

  it('a trace whose generation is gone is dead at once, not retried', async () => {
    const c = await collector();
    const { ws, key } = await workspace();
    const dest = await destination(ws, 'otel-collector', { endpoint: c.endpoint });
    const id = await record(server, { api_key_hash: key.hash });
    await server.deliveries.dispatch();
    await server.db.generation.delete({ where: { id } });
    expect(await server.deliveries.deliverDue()).toBe(1);
    expect((await rest(server, `/observability/destinations/${dest.id}/status`)).body).toMatchObject({
      data: { dead: 1, failing: 0, last_error: 'the generation no longer exists', failing_since: null },
    });
    expect(c.spans).toEqual([]);
  });
});

describe('filter rules', () => {
  const judge = new FilterJudge();
  const fields = { model: 'openai/gpt-4o', provider: 'OpenAI', total_cost: 0.25, prompt_tokens: 10, input: 'hello world', session_id: null };
  const one = (field: string, operator: string, value?: string | number) => judge.passes({ groups: [{ rules: [{ field, operator, value }] }] }, fields);

  it('judge each operator on strings and numbers; absent fields; unknown operators match nothing', () => {
    expect(one('model', 'equals', 'openai/gpt-4o')).toBe(true);
    expect(one('model', 'not_equals', 'openai/gpt-4o')).toBe(false);
    expect(one('total_cost', 'equals', '0.25')).toBe(true);
    expect(one('model', 'contains', 'gpt')).toBe(true);
    expect(one('model', 'not_contains', 'claude')).toBe(true);
    expect(one('model', 'starts_with', 'openai/')).toBe(true);
    expect(one('model', 'ends_with', '4o')).toBe(true);
    expect(one('input', 'regex', 'w.rld$')).toBe(true);
    expect(one('input', 'regex', '^world')).toBe(false);
    expect(one('total_cost', 'gt', 0.2)).toBe(true);
    expect(one('total_cost', 'lt', '0.2')).toBe(false);
    expect(one('prompt_tokens', 'gte', 10)).toBe(true);
    expect(one('prompt_tokens', 'lte', 9)).toBe(false);
    expect(one('model', 'gt', 1)).toBe(false);
    expect(one('session_id', 'exists')).toBe(false);
    expect(one('session_id', 'not_exists')).toBe(true);
    expect(one('user_id', 'not_equals', 'x')).toBe(true);
    expect(one('model', 'sounds_like', 'gpt')).toBe(false);
  });

  it('and / or groups; every group must match; a disabled filter or none sends everything', () => {
    const rule = (value: string) => ({ field: 'provider', operator: 'equals', value });
    expect(judge.passes({ groups: [{ logic: 'or', rules: [rule('Anthropic'), rule('OpenAI')] }] }, fields)).toBe(true);
    expect(judge.passes({ groups: [{ rules: [rule('Anthropic'), rule('OpenAI')] }] }, fields)).toBe(false);
    expect(judge.passes({ groups: [{ rules: [rule('OpenAI')] }, { rules: [rule('Anthropic')] }] }, fields)).toBe(false);
    expect(judge.passes({ enabled: false, groups: [{ rules: [rule('Anthropic')] }] }, fields)).toBe(true);
    expect(judge.passes(null, fields)).toBe(true);
  });

  it('a pattern with catastrophic backtracking in other engines is judged in linear time', () => {
    // A backtracking engine would not return from this within the test's timeout.
    expect(judge.passes({ groups: [{ rules: [{ field: 'input', operator: 'regex', value: '^(a+)+$' }] }] }, { input: `${'a'.repeat(50_000)}!` })).toBe(false);
  });

  it('a pattern outside RE2 syntax is 400 at create, naming the rule', async () => {
    const { ws } = await workspace();
    const res = await rest(server, '/observability/destinations', {
      method: 'POST',
      json: {
        type: 'otel-collector',
        name: 'lookbehind',
        workspace_id: ws,
        config: { endpoint: 'https://collector.example.com' },
        filter_rules: { groups: [{ rules: [{ field: 'model', operator: 'regex', value: '(?<=a)b' }] }] },
      },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('filter_rules.groups.0.rules.0.value');
  });
});
