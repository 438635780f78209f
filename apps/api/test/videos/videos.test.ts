// GET /videos/{jobId}/content against fake providers on loopback: normal, ranged, redirected, slow,
// failing, stalling, cut mid-body, unreachable, and a client that walks away.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelopeSchema, VideoJobSchema } from '@switchyard/schema';
import type { TestServer } from '../../src/testing/test-server.js';
import { createOrganization, type OrgFixture } from '../fixtures.js';
import { sha256, testServerWith } from '../fixtures-files.js';
import { trpc, trpcRaw } from '../fixtures-trpc.js';

const IDLE_MS = 400;
const VIDEO = randomBytes(300_001);
const WEBM = randomBytes(70_000);

let server: TestServer;
let other: OrgFixture;
let provider: http.Server;
let base: string;
/**
 * What the provider saw: the Range header of each request; waiters for /endless and /hold requests
 * (a closed connection reports whether the provider had sent its answer's headers).
 */
const seen = {
  ranges: [] as Array<string | undefined>,
  arrived: [] as Array<() => void>,
  closed: [] as Array<(answered: boolean) => void>,
};
const sockets = new Set<import('node:net').Socket>();
let closedPort: number;

function fakeProvider(req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://x');
  seen.ranges.push(req.headers.range);
  switch (url.pathname) {
    case '/video.mp4': {
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      if (range) {
        const start = Number(range[1]);
        const end = range[2] ? Number(range[2]) : VIDEO.length - 1;
        if (start >= VIDEO.length) {
          res.writeHead(416, { 'content-range': `bytes */${VIDEO.length}` }).end();
          return;
        }
        res.writeHead(206, {
          'content-type': 'video/mp4',
          'content-length': end - start + 1,
          'content-range': `bytes ${start}-${end}/${VIDEO.length}`,
          'accept-ranges': 'bytes',
        });
        res.end(VIDEO.subarray(start, end + 1));
        return;
      }
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VIDEO.length, 'accept-ranges': 'bytes' });
      res.end(VIDEO);
      return;
    }
    case '/chunked.webm':
      res.writeHead(200, { 'content-type': 'video/webm' });
      res.write(WEBM.subarray(0, 1000));
      res.end(WEBM.subarray(1000));
      return;
    case '/untyped':
      res.removeHeader('content-type');
      res.writeHead(200, { 'content-length': 3 });
      res.end('abc');
      return;
    case '/redirect':
      res.writeHead(302, { location: '/video.mp4' }).end();
      return;
    case '/fail':
      res.writeHead(500, { 'content-type': 'text/plain' }).end('provider exploded');
      return;
    case '/gone':
      res.writeHead(404).end();
      return;
    case '/slow': {
      // Slow but alive: every gap is shorter than the idle timeout.
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VIDEO.length });
      let offset = 0;
      const step = () => {
        const next = Math.min(VIDEO.length, offset + 50_000);
        res.write(VIDEO.subarray(offset, next));
        offset = next;
        if (offset < VIDEO.length) setTimeout(step, IDLE_MS / 4);
        else res.end();
      };
      step();
      return;
    }
    case '/silent':
      // Never answers: the idle timeout must give up.
      return;
    case '/stall':
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VIDEO.length });
      res.write(VIDEO.subarray(0, 10_000));
      return;
    case '/cut':
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VIDEO.length });
      res.write(VIDEO.subarray(0, 100_000), () => res.destroy());
      return;
    case '/cut-chunked':
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.write(VIDEO.subarray(0, 100_000), () => res.destroy());
      return;
    case '/endless': {
      // Streams until the proxy goes away; tells the test when that happens.
      res.writeHead(200, { 'content-type': 'video/mp4' });
      const timer = setInterval(() => res.write(randomBytes(16_384)), 10);
      res.on('close', () => {
        clearInterval(timer);
        seen.closed.shift()?.(res.headersSent);
      });
      return;
    }
    case '/hold':
      // Holds the headers back until the proxy goes away.
      seen.arrived.shift()?.();
      res.on('close', () => seen.closed.shift()?.(res.headersSent));
      return;
    default:
      res.writeHead(404).end();
  }
}

/**
 * The fake provider and the closed port are on loopback, which upstream fetches refuse unless the
 * operator allows them (see video-upstream-rules.test.ts): these servers allow exactly those two.
 */
const allowProviders = () => ({ UPSTREAM_ALLOWED_HOSTS: `${new URL(base).host},127.0.0.1:${closedPort}` });

beforeAll(async () => {
  provider = http.createServer(fakeProvider);
  provider.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  server = await testServerWith({ UPSTREAM_IDLE_TIMEOUT_MS: String(IDLE_MS), UPSTREAM_CONNECT_TIMEOUT_MS: '2000', ...allowProviders() });
  other = await createOrganization(server.db);
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => provider?.close(resolve));
  await server?.close();
});

/** The video service (the platform) registers a job in the server's default workspace. */
async function createJob(outputs: Array<{ upstream_url: string; media_type?: string }>, key = server.platformKey) {
  const res = await trpc(
    server,
    'videos.createJob',
    { workspace_id: server.workspaceId, provider: 'fake', model: 'fake/video-1', upstream_job_id: 'up-1', outputs },
    { key },
  );
  expect(res.status).toBe(200);
  return VideoJobSchema.strict().parse(res.data.data);
}

const video = (jobId: string, query = '', init?: Parameters<TestServer['request']>[1]) => server.request(`/api/v1/videos/${jobId}/content${query}`, init);

async function expectError(res: Response, status: number, message: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(ErrorEnvelopeSchema.parse(await res.json()).error).toMatchObject({ code: status, message });
}

/** Reads a body to its end; resolves with the bytes or rejects when the connection broke. */
async function readBody(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

describe('videos.createJob (internal)', () => {
  it('records a job with its outputs in order', async () => {
    const job = await createJob([{ upstream_url: `${base}/video.mp4` }, { upstream_url: `${base}/chunked.webm`, media_type: 'video/webm' }]);
    expect(job.id).toMatch(/^video_[0-9a-f]{24}$/);
    expect(job.status).toBe('completed');
    expect(job.outputs).toEqual([
      { index: 0, upstream_url: `${base}/video.mp4`, media_type: 'video/mp4', size_bytes: null },
      { index: 1, upstream_url: `${base}/chunked.webm`, media_type: 'video/webm', size_bytes: null },
    ]);
  });

  it('refuses non-http URLs, empty output lists, a missing workspace, and every tenant key', async () => {
    const job = { workspace_id: server.workspaceId, provider: 'p', model: 'm', upstream_job_id: 'u' };
    for (const outputs of [[{ upstream_url: 'file:///etc/passwd' }], [{ upstream_url: 'not a url' }], []]) {
      const res = await trpc(server, 'videos.createJob', { ...job, outputs });
      expect(res.status).toBe(400);
    }
    const { workspace_id: _, ...unnamed } = job;
    expect((await trpcRaw(server, 'videos.createJob', { ...unnamed, outputs: [{ upstream_url: `${base}/x` }] })).status).toBe(400);
    const { data } = await trpc(server, 'keys.create', { name: 'regular' });
    for (const key of [data.key, server.managementKey]) {
      const res = await trpc(server, 'videos.createJob', { ...job, outputs: [{ upstream_url: `${base}/x` }] }, { key });
      expect(res.status).toBe(403);
      expect(res.error?.message).toBe('Only platform keys can perform this operation');
    }
  });
});

describe('GET /videos/{jobId}/content', () => {
  let jobId: string;
  beforeAll(async () => {
    const job = await createJob([
      { upstream_url: `${base}/video.mp4` },
      { upstream_url: `${base}/chunked.webm`, media_type: 'video/webm' },
      { upstream_url: `${base}/untyped`, media_type: 'video/quicktime' },
    ]);
    jobId = job.id;
  });

  it("streams output 0 by default with the provider's Content-Type and Content-Length", async () => {
    const res = await video(jobId);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(res.headers.get('content-length')).toBe(String(VIDEO.length));
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(sha256(await readBody(res))).toBe(sha256(VIDEO));
    expect(seen.ranges.at(-1)).toBeUndefined();
  });

  it('picks the output by index, streams a body without length, and falls back to the stored media type', async () => {
    const webm = await video(jobId, '?index=1');
    expect(webm.status).toBe(200);
    expect(webm.headers.get('content-type')).toBe('video/webm');
    expect(webm.headers.get('content-length')).toBeNull();
    expect(sha256(await readBody(webm))).toBe(sha256(WEBM));
    const untyped = await video(jobId, '?index=2');
    expect(untyped.headers.get('content-type')).toBe('video/quicktime');
    expect((await readBody(untyped)).toString()).toBe('abc');
  });

  it('forwards Range so players can seek', async () => {
    const res = await video(jobId, '?index=0', { headers: { range: 'bytes=1000-1999' } });
    expect(res.status).toBe(206);
    expect(seen.ranges.at(-1)).toBe('bytes=1000-1999');
    expect(res.headers.get('content-range')).toBe(`bytes 1000-1999/${VIDEO.length}`);
    expect(res.headers.get('content-length')).toBe('1000');
    expect((await readBody(res)).equals(VIDEO.subarray(1000, 2000))).toBe(true);
    // A range the provider cannot satisfy is a bad parameter.
    await expectError(await video(jobId, '', { headers: { range: `bytes=${VIDEO.length}-` } }), 400, 'Invalid request parameters');
  });

  it('follows a provider redirect', async () => {
    const job = await createJob([{ upstream_url: `${base}/redirect` }]);
    const res = await video(job.id);
    expect(res.status).toBe(200);
    expect(sha256(await readBody(res))).toBe(sha256(VIDEO));
  });

  it('answers 400 for an index that is not an integer >= 0, 404 past the last output or for an unknown job', async () => {
    for (const query of ['?index=-1', '?index=abc', '?index=1.5', '?index=', '?index=%201', '?index=1e2', '?index=0&index=1']) {
      await expectError(await video(jobId, query), 400, 'Invalid request parameters');
    }
    await expectError(await video(jobId, '?index=3'), 404, 'Resource not found');
    await expectError(await video(jobId, '?index=999999999'), 404, 'Resource not found');
    await expectError(await video('video_unknown'), 404, 'Resource not found');
  });

  it('answers 401 without a key and 404 for another organization or another workspace', async () => {
    await expectError(await video(jobId, '', { key: null }), 401, 'Missing Authentication header');
    await expectError(await video(jobId, '', { key: other.managementKey }), 404, 'Resource not found');
    const { data } = await trpc(server, 'keys.create', { name: 'regular' });
    expect((await video(jobId, '', { key: data.key })).status).toBe(200);
    const ws = await server.db.workspace.create({
      data: { organization_id: (await server.db.videoJob.findFirstOrThrow({ where: { id: jobId } })).organization_id, slug: 'videos-side', name: 'Side' },
    });
    const res = await trpc(server, 'videos.createJob', {
      workspace_id: ws.id,
      provider: 'fake',
      model: 'm',
      upstream_job_id: 'u',
      outputs: [{ upstream_url: `${base}/video.mp4` }],
    });
    await expectError(await video(res.data.data.id, '', { key: data.key }), 404, 'Resource not found');
  });

  it('streams a slow provider through to the end', async () => {
    const job = await createJob([{ upstream_url: `${base}/slow` }]);
    const res = await video(job.id);
    expect(res.status).toBe(200);
    expect(sha256(await readBody(res))).toBe(sha256(VIDEO));
  });

  it('answers 502 with the envelope when the provider fails, is unreachable or stays silent before its headers', async () => {
    for (const url of [`${base}/fail`, `${base}/gone`, `http://127.0.0.1:${closedPort}/video.mp4`, `${base}/silent`]) {
      const job = await createJob([{ upstream_url: url }]);
      await expectError(await video(job.id), 502, 'Provider returned error');
    }
  });

  it('ends the connection without a false success when the provider breaks or stalls after its headers', async () => {
    for (const path of ['/cut', '/cut-chunked', '/stall']) {
      const job = await createJob([{ upstream_url: `${base}${path}` }]);
      const res = await video(job.id);
      expect(res.status).toBe(200);
      await expect(readBody(res), path).rejects.toThrow();
    }
  });

  describe('when the client disconnects', () => {
    // A server whose idle timeout cannot fire during the test: only the client leaving can end
    // the upstream request here.
    let patient: TestServer;
    beforeAll(async () => {
      patient = await testServerWith({ UPSTREAM_IDLE_TIMEOUT_MS: '600000', ...allowProviders() });
    });
    afterAll(async () => {
      await patient?.close();
    });

    async function patientJob(path: string): Promise<string> {
      const res = await trpc(patient, 'videos.createJob', {
        workspace_id: patient.workspaceId,
        provider: 'fake',
        model: 'm',
        upstream_job_id: 'u',
        outputs: [{ upstream_url: `${base}${path}` }],
      });
      return res.data.data.id;
    }

    function get(jobId: string): http.ClientRequest {
      const url = new URL(`/api/v1/videos/${jobId}/content`, patient.url);
      return http.get(url, { headers: { authorization: `Bearer ${patient.managementKey}` } }).on('error', () => undefined);
    }

    // Each wait below resolves only when the provider sees its connection close; it would hang
    // (and the test time out) if the upstream request were left running.
    it('aborts the upstream request mid-body', async () => {
      const jobId = await patientJob('/endless');
      const upstreamClosed = new Promise<boolean>((resolve) => seen.closed.push(resolve));
      const req = get(jobId);
      const res = await new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
      expect(res.statusCode).toBe(200);
      await new Promise((resolve) => res.once('data', resolve));
      req.destroy();
      expect(await upstreamClosed).toBe(true);
    });

    it('aborts the upstream request before the provider has answered', async () => {
      const jobId = await patientJob('/hold');
      const arrived = new Promise<void>((resolve) => seen.arrived.push(resolve));
      const upstreamClosed = new Promise<boolean>((resolve) => seen.closed.push(resolve));
      const req = get(jobId);
      let answered = false;
      req.once('response', () => (answered = true));
      await arrived;
      req.destroy();
      // The provider's connection closes while it still holds its answer back: the server gave up
      // the upstream request because the client left, not because anyone answered.
      expect(await upstreamClosed).toBe(false);
      expect(answered).toBe(false);
      expect(patient.logs.filter((entry) => entry.msg === 'internal error')).toEqual([]);
    });
  });
});
