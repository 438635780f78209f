// Prometheus metrics on METRICS_PORT: requests by route template, recording batches, the database
// pool, the caches and video downloads from providers, each read from the real /metrics endpoint
// after real traffic.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { hashApiKey } from '../../src/access/key-format.js';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { until } from '../fixtures.js';
import { demoCatalog, importDemoCatalog } from '../fixtures-catalog.js';
import { ok, trpc } from '../fixtures-trpc.js';

let server: TestServer;
let provider: http.Server;
let providerUrl: string;

beforeAll(async () => {
  server = await startTestServer({
    adminUrl: inject('pgAdminUrl'),
    template: inject('pgTemplate'),
    // A long cache lifetime, so that a second lookup is a hit however slow the machine is.
    // The test's video providers (the server's own sample, a local listener) are on loopback. No
    // look for queued jobs every second: the pool test counts the connections its own queries hold.
    env: { METRICS_PORT: '0', CACHE_TTL_MS: '60000', USAGE_CACHE_MS: '1000', UPSTREAM_ALLOWED_HOSTS: '127.0.0.1', JOB_POLL_MS: '0', DELIVERY_POLL_MS: '0' },
  });
  // A provider that sends half its video, then cuts the connection.
  provider = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 2000 });
    res.write(Buffer.alloc(1000));
    setTimeout(() => res.destroy(), 20);
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => provider?.close(resolve));
  await server?.close();
});

/** Every sample of the scrape, by its series (`name{labels}`) as Prometheus writes it. */
async function scrape(): Promise<Map<string, number>> {
  const res = await fetch(server.metricsUrl!);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const match = /^([a-z_:]+(?:\{.*\})?) (\S+)$/.exec(line);
    if (match) samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}

const value = (samples: Map<string, number>, series: string) => samples.get(series) ?? 0;
const requests = (method: string, route: string, status: number) =>
  `switchyard_http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}"}`;

/** The platform's steps (recording, video jobs) in one place. */
const platform = {
  record: (id: string, hash: string) => trpc(server, 'generations.record', { id, api_key_hash: hash, model: 'openai/gpt-4o', usage: 0.01 }),
  videoJob: async (url: string) =>
    (
      await trpc(server, 'videos.createJob', {
        workspace_id: server.workspaceId,
        provider: 'fake',
        model: 'fake/v',
        upstream_job_id: url,
        outputs: [{ upstream_url: url }],
      })
    ).data.data.id,
};

describe('the metrics endpoint', () => {
  it('is served on METRICS_PORT only, never on the public port', async () => {
    expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(server.metricsUrl!).port).not.toBe(String(server.port));
    await scrape();
    for (const path of ['/metrics', '/api/v1/metrics']) expect((await server.request(path)).status, path).toBe(404);
    expect((await fetch(server.metricsUrl!.replace(/\/metrics$/, '/other'))).status).toBe(404);
  });

  it("has Node.js's default metrics under the names stock dashboards look for, and the build's info", async () => {
    const samples = await scrape();
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(samples.has(name), name).toBe(true);
    }
    expect([...samples.keys()].filter((series) => /^switchyard_(process|nodejs)_/.test(series))).toEqual([]);
    const version = (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    expect(samples.get(`switchyard_build_info{version="${version}",node_version="${process.version}"}`)).toBe(1);
  });

  it('is off by default, and refused on the public port', () => {
    expect(loadConfig({}).metrics).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow(/METRICS_PORT="8080": must differ from PORT/);
    expect(() => loadConfig({ METRICS_PORT: 'x' })).toThrow(/METRICS_PORT/);
  });
});

describe('request metrics', () => {
  it('count requests and their latency by route template, method and status', async () => {
    const before = await scrape();
    await server.request('/api/v1/key');
    await server.request('/api/v1/key');
    await server.request('/api/v1/model/nobody/nothing');
    await server.request('/api/v1/model/nobody/else', { key: null });
    await server.request('/trpc/keys.current');
    await server.request('/api/v1/videos/vjob_none/content');
    await server.request('/healthz', { key: null });
    await server.request('/api/v1/no/such/path');
    const after = await scrape();
    const delta = (series: string) => value(after, series) - value(before, series);
    expect(delta(requests('GET', '/api/v1/key', 200))).toBe(2);
    expect(delta(requests('GET', '/api/v1/model/{author}/{slug}', 404))).toBe(1);
    expect(delta(requests('GET', '/api/v1/model/{author}/{slug}', 401))).toBe(1);
    expect(delta(requests('GET', '/trpc/keys.current', 200))).toBe(1);
    expect(delta(requests('GET', '/api/v1/videos/{jobId}/content', 404))).toBe(1);
    expect(delta(requests('GET', '/healthz', 200))).toBe(1);
    expect(delta(requests('GET', 'unmatched', 404))).toBe(1);
    // Raw paths never become labels.
    expect([...after.keys()].some((k) => k.includes('nobody'))).toBe(false);
    // The histogram's buckets: every request is under +Inf.
    const labels = 'method="GET",route="/api/v1/key",status="200"';
    expect(value(after, `switchyard_http_request_duration_seconds_bucket{le="+Inf",${labels}}`)).toBe(value(after, requests('GET', '/api/v1/key', 200)));
    expect(value(after, `switchyard_http_request_duration_seconds_sum{${labels}}`)).toBeGreaterThan(0);
  });
});

describe('recording, pool and cache metrics', () => {
  it('observe the size and commit time of each recording batch', async () => {
    const before = await scrape();
    const keyHash = hashApiKey(server.managementKey);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => platform.record(`gen-metrics-${i}`, keyHash)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const after = await scrape();
    const delta = (series: string) => value(after, series) - value(before, series);
    expect(delta('switchyard_recording_batch_size_sum')).toBe(6);
    const batches = delta('switchyard_recording_batch_size_count');
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(batches).toBeLessThanOrEqual(6);
    expect(delta('switchyard_recording_commit_duration_seconds_count{outcome="committed"}')).toBe(batches);
    expect(delta('switchyard_recording_commit_duration_seconds_sum{outcome="committed"}')).toBeGreaterThan(0);
  });

  it('show the database connections in use and the queries waiting for one', async () => {
    // The test server's pool has 5 connections; 7 slow queries hold all 5 and leave 2 waiting.
    // (then() starts them: Prisma's queries are lazy.) The server's one background write that may
    // join them, the keys' last uses (once per KEY_USES_FLUSH_MS when the tests above used keys),
    // makes it 3 at most.
    const slow = Array.from({ length: 7 }, () => server.db.$queryRawUnsafe('SELECT pg_sleep(1)::text').then(() => undefined));
    let busy = await scrape();
    await until(async () => value((busy = await scrape()), 'switchyard_db_pool_waiting') >= 2, { everyMs: 20, what: 'two queries waiting for a connection' });
    await Promise.all(slow);
    expect(value(busy, 'switchyard_db_pool_connections{state="in_use"}')).toBe(5);
    expect([2, 3]).toContain(value(busy, 'switchyard_db_pool_waiting'));
    let idle = await scrape();
    await until(async () => value((idle = await scrape()), 'switchyard_db_pool_connections{state="in_use"}') === 0, { what: 'every connection given back' });
    expect(value(idle, 'switchyard_db_pool_connections{state="in_use"}')).toBe(0);
    expect(value(idle, 'switchyard_db_pool_connections{state="idle"}')).toBeGreaterThanOrEqual(1);
    expect(value(idle, 'switchyard_db_pool_waiting')).toBe(0);
  });

  it('count cache hits and misses of the key, key usage, catalog, member-order and guardrail caches', async () => {
    const created = await trpc(server, 'keys.create', { name: 'metrics-cache' });
    const key = created.data.key;
    const before = await scrape();
    const delta = (after: Map<string, number>, series: string) => value(after, series) - value(before, series);
    await server.request('/api/v1/key', { key });
    await server.request('/api/v1/key', { key });
    let after = await scrape();
    expect(delta(after, 'switchyard_cache_misses_total{cache="api_keys"}')).toBe(1);
    expect(delta(after, 'switchyard_cache_hits_total{cache="api_keys"}')).toBe(1);
    // Spend figures are kept for at most 1 s (USAGE_CACHE_MS), which a slow machine could outlast.
    const usageMisses = delta(after, 'switchyard_cache_misses_total{cache="key_usage"}');
    expect(usageMisses).toBeGreaterThanOrEqual(1);
    expect(usageMisses + delta(after, 'switchyard_cache_hits_total{cache="key_usage"}')).toBe(2);

    for (let i = 0; i < 2; i++) await server.request('/api/v1/organization/members');
    after = await scrape();
    expect(delta(after, 'switchyard_cache_misses_total{cache="member_order"}')).toBe(1);
    expect(delta(after, 'switchyard_cache_hits_total{cache="member_order"}')).toBe(1);

    for (let i = 0; i < 3; i++) await server.request('/api/v1/embeddings/models');
    after = await scrape();
    const catalog = delta(after, 'switchyard_cache_hits_total{cache="catalog"}') + delta(after, 'switchyard_cache_misses_total{cache="catalog"}');
    expect(catalog).toBe(3);
    expect(delta(after, 'switchyard_cache_hits_total{cache="catalog"}')).toBeGreaterThanOrEqual(2);

    await ok(server, 'models.upsert', { ...demoCatalog.models[0]!, id: 'acme/metered', aliases: [], variants: [], endpoints: [] });
    for (let i = 0; i < 2; i++) expect((await server.request('/api/v1/model/acme/metered', { key })).status).toBe(200);
    after = await scrape();
    expect(delta(after, 'switchyard_cache_misses_total{cache="guardrails"}')).toBe(1);
    expect(delta(after, 'switchyard_cache_hits_total{cache="guardrails"}')).toBe(1);
  });
});

describe('routing metrics', () => {
  it('show the open reservations and the USD they hold, from the database, until released', async () => {
    await importDemoCatalog(server);
    await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 10 });
    const created = await trpc(server, 'keys.create', { name: 'metrics-routing', limit: 5, limit_reset: 'monthly' });
    const hash = hashApiKey(created.data.key);
    const held = [];
    for (const cost of [0.25, 0.5]) {
      const decision = await ok(server, 'routing.authorize', { api_key_hash: hash, model: 'openai/gpt-4o', estimated_cost: cost });
      if (!decision.data.allowed) throw new Error(JSON.stringify(decision.data));
      held.push(decision.data.reservation_id!);
    }
    let samples = await scrape();
    expect([value(samples, 'switchyard_reservations_open'), value(samples, 'switchyard_reservations_open_usd')]).toEqual([2, 0.75]);
    expect(value(samples, 'switchyard_routing_decisions_total{outcome="allowed",code="ok"}')).toBeGreaterThanOrEqual(2);
    await ok(server, 'routing.release', { reservation_id: held[0]! });
    samples = await scrape();
    expect([value(samples, 'switchyard_reservations_open'), value(samples, 'switchyard_reservations_open_usd')]).toEqual([1, 0.5]);
  });
});

describe('upstream video metrics', () => {
  it('count the bytes received from providers, and failures before the answer and mid-stream', async () => {
    const sample = await platform.videoJob(`${server.url}/samples/video.mp4`);
    const unreachable = await platform.videoJob('http://127.0.0.1:1/gone.mp4');
    const cut = await platform.videoJob(`${providerUrl}/cut.mp4`);
    const before = await scrape();
    const delta = (after: Map<string, number>, series: string) => value(after, series) - value(before, series);

    const ok = await server.request(`/api/v1/videos/${sample}/content`);
    const bytes = (await ok.arrayBuffer()).byteLength;
    expect(ok.status).toBe(200);
    let after = await scrape();
    expect(delta(after, 'switchyard_upstream_video_bytes_total')).toBe(bytes);

    expect((await server.request(`/api/v1/videos/${unreachable}/content`)).status).toBe(502);
    const broken = await server.request(`/api/v1/videos/${cut}/content`);
    expect(broken.status).toBe(200);
    await expect(broken.arrayBuffer()).rejects.toThrow();
    // The failure is counted when the server sees the provider's connection end, not before.
    await until(async () => delta((after = await scrape()), 'switchyard_upstream_video_failures_total{stage="mid_stream"}') === 1, {
      what: 'the mid-stream failure to be counted',
    });
    expect(delta(after, 'switchyard_upstream_video_failures_total{stage="before_answer"}')).toBe(1);
    expect(delta(after, 'switchyard_upstream_video_failures_total{stage="mid_stream"}')).toBe(1);
    expect(delta(after, 'switchyard_upstream_video_bytes_total')).toBe(bytes + 1000);
  });
});
