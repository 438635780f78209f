// Which upstream URLs GET /videos/{jobId}/content may fetch (SSRF): every hop's resolved
// address is checked before connecting (loopback, private, link-local, CGNAT, ... and this server
// itself are refused), the DNS answer that was checked is the one connected to, operators allow
// hosts with UPSTREAM_ALLOWED_HOSTS, URLs with credentials are refused when the job is created (and
// never sent), and a provider that trickles is cut off. Every listener here is on loopback; nothing
// is sent anywhere else (addresses that are not loopback are only classified, never connected to).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelopeSchema } from '@switchyard/schema';
import { loadConfig } from '../../src/config.js';
import { openUpstream } from '../../src/modules/videos/upstream.js';
import { parseAllowedHosts, refusalOf, serverAddresses } from '../../src/upstream/index.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { bigStream, drain, sha256, testServerWith } from '../fixtures-files.js';
import { trpc } from '../fixtures-trpc.js';

const VIDEO = randomBytes(50_000);
/** The rate window of the server under test: a provider must send 1 KiB/s on average over it. */
const RATE_WINDOW_MS = 500;

/** A loopback listener that counts the connections it accepts (what a refused fetch must not make). */
interface Listener {
  port: number;
  connections: number;
  requests: http.IncomingMessage[];
  close(): Promise<void>;
}

async function listen(host: string, handler?: http.RequestListener, port = 0): Promise<Listener> {
  const sockets = new Set<net.Socket>();
  // Without a handler: accepts connections and never answers (a "silent" port).
  const server = handler ? http.createServer(handler) : net.createServer(() => undefined);
  const listener: Listener = {
    port: 0,
    connections: 0,
    requests: [],
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  server.on('connection', (s: net.Socket) => {
    listener.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  if (handler) server.on('request', (req: http.IncomingMessage) => listener.requests.push(req));
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  listener.port = (server.address() as AddressInfo).port;
  return listener;
}

async function closedPort(): Promise<number> {
  const l = await listen('127.0.0.1');
  await l.close();
  return l.port;
}

let server: TestServer;
/** The one allowed provider (UPSTREAM_ALLOWED_HOSTS=127.0.0.1:<its port>). */
let provider: Listener;
/** Internal services the server must never reach: an answering one on 127.0.0.1 and on ::1, a silent one. */
let inside: Listener;
let inside6: Listener;
let silent: Listener;
let closed: number;
let providerBase: string;
/** Resolves when the provider sees its /trickle or /big connection close. */
const providerClosed: Array<() => void> = [];

function providerHandler(req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://x');
  switch (url.pathname) {
    case '/video.mp4':
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VIDEO.length }).end(VIDEO);
      return;
    case '/to':
      // Redirects wherever the test says: an allowed host sending the proxy elsewhere.
      res.writeHead(302, { location: url.searchParams.get('location')! }).end();
      return;
    case '/loop':
      res.writeHead(302, { location: '/loop' }).end();
      return;
    case '/trickle': {
      // Alive (one byte every 20 ms, far inside the idle timeout) but ~50 bytes/s.
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 1_000_000 });
      const timer = setInterval(() => res.write('x'), 20);
      res.on('close', () => {
        clearInterval(timer);
        providerClosed.shift()?.();
      });
      return;
    }
    case '/big': {
      // Fast, but only as fast as the reader takes it (backpressure).
      const source = bigStream(Number(url.searchParams.get('size')));
      res.writeHead(200, { 'content-type': 'video/mp4' });
      (async () => {
        for await (const chunk of source.chunks) {
          if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
        }
        res.end();
        bigSha = source.sha256();
      })().catch(() => res.destroy());
      return;
    }
    default:
      res.writeHead(404).end();
  }
}
let bigSha = '';

const secret = (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).end('internal secret');
};

beforeAll(async () => {
  provider = await listen('127.0.0.1', providerHandler);
  inside = await listen('127.0.0.1', secret);
  inside6 = await listen('::1', secret);
  silent = await listen('127.0.0.1');
  closed = await closedPort();
  providerBase = `http://127.0.0.1:${provider.port}`;
  server = await testServerWith({
    UPSTREAM_ALLOWED_HOSTS: `127.0.0.1:${provider.port}`,
    UPSTREAM_RATE_WINDOW_MS: String(RATE_WINDOW_MS),
    UPSTREAM_IDLE_TIMEOUT_MS: '60000',
    UPSTREAM_CONNECT_TIMEOUT_MS: '2000',
  });
});
afterAll(async () => {
  await server?.close();
  for (const l of [provider, inside, inside6, silent]) await l?.close();
});

/** Records a video job on `target` (the platform's step: one place to change its key). */
async function createJob(target: TestServer, upstreamUrl: string) {
  return trpc(target, 'videos.createJob', {
    workspace_id: target.workspaceId,
    provider: 'fake',
    model: 'fake/video',
    upstream_job_id: 'ssrf',
    outputs: [{ upstream_url: upstreamUrl }],
  });
}

async function jobFor(upstreamUrl: string, target = server): Promise<string> {
  const res = await createJob(target, upstreamUrl);
  expect(res.status, upstreamUrl).toBe(200);
  return res.data.data.id;
}

const content = (jobId: string, target = server) => target.request(`/api/v1/videos/${jobId}/content`);

/** An error answer without what differs between any two requests (the request id). */
async function answerOf(res: Response) {
  const { error } = ErrorEnvelopeSchema.strict().parse(await res.json());
  const { request_id: _, ...metadata } = error.metadata ?? {};
  return { status: res.status, type: res.headers.get('content-type'), error: { ...error, metadata } };
}

/** The one answer every refused upstream gets: 502 with the envelope, nothing about the target. */
async function expectRefused(res: Response, label: string) {
  const answer = await answerOf(res);
  expect(answer, label).toEqual({
    status: 502,
    type: expect.stringMatching(/^application\/json/),
    error: { code: 502, message: 'Provider returned error', metadata: {} },
  });
}

describe('upstream addresses that are refused', () => {
  it("refuses the server's own address: its health, readiness, OpenAPI document and sample", async () => {
    for (const path of ['/healthz', '/readyz', '/api/v1/openapi.json', '/samples/video.mp4']) {
      await expectRefused(await content(await jobFor(`${server.url}${path}`)), path);
    }
  });

  it('refuses loopback in every spelling, without connecting to it', async () => {
    const p = inside.port;
    const spellings = [
      `http://127.0.0.1:${p}/`,
      `http://0x7f000001:${p}/`,
      `http://2130706433:${p}/`,
      `http://127.1:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://127.0.0.1.:${p}/`,
      `http://localhost:${p}/`,
      `http://LOCALHOST:${p}/`,
      `http://0.0.0.0:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://[::1]:${inside6.port}/`,
      `http://localhost:${inside6.port}/`,
      `https://127.0.0.1:${p}/`,
      // The allowed provider's port under another name is another host.
      `http://localhost:${provider.port}/video.mp4`,
    ];
    for (const url of spellings) {
      await expectRefused(await content(await jobFor(url)), url);
    }
    expect(inside.connections).toBe(0);
    expect(inside6.connections).toBe(0);
    expect(provider.requests.filter((r) => r.url === '/video.mp4')).toHaveLength(0);
  });

  it('answers open, closed and silent internal ports alike, before connecting to any of them', async () => {
    const answers = [];
    for (const port of [inside.port, closed, silent.port]) {
      answers.push(await answerOf(await content(await jobFor(`http://127.0.0.1:${port}/video.mp4`))));
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(answers[0]!.status).toBe(502);
    expect(inside.connections).toBe(0);
    expect(silent.connections).toBe(0);
  });

  it('refuses a redirect from an allowed provider to an internal address, and endless redirects', async () => {
    const targets = [
      `http://127.0.0.1:${inside.port}/`,
      `http://[::1]:${inside6.port}/`,
      `http://localhost:${provider.port}/video.mp4`,
      `${server.url}/healthz`,
      `http://user:pass@127.0.0.1:${provider.port}/video.mp4`,
      'file:///etc/passwd',
    ];
    for (const location of targets) {
      const url = `${providerBase}/to?location=${encodeURIComponent(location)}`;
      await expectRefused(await content(await jobFor(url)), location);
    }
    expect(inside.connections).toBe(0);
    expect(inside6.connections).toBe(0);
    expect(provider.requests.filter((r) => r.url === '/video.mp4')).toHaveLength(0);
    await expectRefused(await content(await jobFor(`${providerBase}/loop`)), 'loop');
  });

  it('follows a redirect within the allowed provider', async () => {
    const res = await content(await jobFor(`${providerBase}/to?location=${encodeURIComponent('/video.mp4')}`));
    expect(res.status).toBe(200);
    expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(VIDEO));
  });
});

describe('UPSTREAM_ALLOWED_HOSTS', () => {
  it('admits exactly the named host:port', async () => {
    const res = await content(await jobFor(`${providerBase}/video.mp4`));
    expect(res.status).toBe(200);
    expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(VIDEO));
    // Same host, another port: refused.
    await expectRefused(await content(await jobFor(`http://127.0.0.1:${inside.port}/`)), 'other port');
    expect(inside.connections).toBe(0);
  });

  it('admits a named host (any port without one), matched as the URL spells it after normalising', async () => {
    const local = await listen('127.0.0.1', secret);
    const named = await testServerWith({ UPSTREAM_ALLOWED_HOSTS: ` localhost:${local.port} , 127.1 ` });
    try {
      const res = await content(await jobFor(`http://LocalHost:${local.port}/`, named), named);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('internal secret');
      // "127.1" names 127.0.0.1, every port.
      const any = await content(await jobFor(`${providerBase}/video.mp4`, named), named);
      expect(any.status).toBe(200);
      await any.arrayBuffer();
      // [::1] is not named.
      await expectRefused(await content(await jobFor(`http://[::1]:${inside6.port}/`, named), named), '[::1]');
      expect(inside6.connections).toBe(0);
    } finally {
      await named.close();
      await local.close();
    }
  });

  it('is read and checked at start: host[:port] entries, comma-separated', () => {
    expect(loadConfig({}).media.upstreamAllowedHosts).toEqual([]);
    expect(loadConfig({ UPSTREAM_ALLOWED_HOSTS: 'Videos.Example.com, [::1]:8443,10.0.0.7:80,,' }).media.upstreamAllowedHosts).toEqual([
      { host: 'videos.example.com', port: null },
      { host: '[::1]', port: 8443 },
      { host: '10.0.0.7', port: 80 },
    ]);
    for (const bad of ['http://x.example', 'x.example/path', 'user@x.example', 'x.example:0', 'x.example:70000', '[::1', 'x.example:']) {
      expect(() => loadConfig({ UPSTREAM_ALLOWED_HOSTS: bad }), bad).toThrow(/UPSTREAM_ALLOWED_HOSTS/);
    }
  });
});

describe('credentials in an upstream URL', () => {
  it('are refused when the job is created (400)', async () => {
    for (const url of [
      `http://user:pass@127.0.0.1:${provider.port}/video.mp4`,
      `http://user@127.0.0.1:${provider.port}/video.mp4`,
      `http://:pass@127.0.0.1:${provider.port}/video.mp4`,
      `https://a%40b:c@videos.example.com/v.mp4`,
    ]) {
      const res = await createJob(server, url);
      expect(res.status, url).toBe(400);
      expect(res.error, url).toMatchObject({ message: 'Invalid request parameters', data: { httpStatus: 400 } });
    }
  });

  it('are never sent, even from a job recorded before the rule', async () => {
    const jobId = await jobFor(`${providerBase}/video.mp4`);
    await server.db.videoOutput.updateMany({ where: { video_job_id: jobId }, data: { upstream_url: `http://user:pass@127.0.0.1:${provider.port}/video.mp4` } });
    const before = provider.requests.length;
    await expectRefused(await content(jobId), 'stored credentials');
    expect(provider.requests.length).toBe(before);
  });
});

describe('a provider that sends too slowly', () => {
  it('is cut off once it averages under 1 KiB/s over the window', async () => {
    const upstreamClosed = new Promise<void>((resolve) => providerClosed.push(resolve));
    const res = await content(await jobFor(`${providerBase}/trickle`));
    expect(res.status).toBe(200);
    // The download ends broken (never as a complete file), and the provider's connection closes.
    await expect(res.arrayBuffer()).rejects.toThrow();
    await upstreamClosed;
  });

  it('is judged by settings read at start: UPSTREAM_MIN_BYTES_PER_SECOND (0: never) over UPSTREAM_RATE_WINDOW_MS', () => {
    expect(loadConfig({}).media).toMatchObject({ upstreamMinBytesPerSecond: 1024, upstreamRateWindowMs: 30_000 });
    expect(loadConfig({ UPSTREAM_MIN_BYTES_PER_SECOND: '0', UPSTREAM_RATE_WINDOW_MS: '100' }).media).toMatchObject({
      upstreamMinBytesPerSecond: 0,
      upstreamRateWindowMs: 100,
    });
    expect(() => loadConfig({ UPSTREAM_RATE_WINDOW_MS: '99' })).toThrow(/UPSTREAM_RATE_WINDOW_MS/);
    expect(() => loadConfig({ UPSTREAM_MIN_BYTES_PER_SECOND: '-1' })).toThrow(/UPSTREAM_MIN_BYTES_PER_SECOND/);
  });

  it('is not blamed for time the client spends not reading', async () => {
    const size = 64 * 1024 * 1024;
    const res = await content(await jobFor(`${providerBase}/big?size=${size}`));
    expect(res.status).toBe(200);
    // Read nothing for several windows: the provider is held back by backpressure, not slow.
    await new Promise((resolve) => setTimeout(resolve, RATE_WINDOW_MS * 4));
    const body = await drain(res);
    expect(body.size).toBe(size);
    expect(body.sha256).toBe(bigSha);
  });
});

describe('address rules (classification only: nothing here is connected to)', () => {
  const none = new Set<string>();

  it('refuses every non-public IPv4 range', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.255.254',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.127.255.254',
      '0.0.0.0',
      '0.1.2.3',
      '255.255.255.255',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '192.0.0.8',
      '192.0.2.1',
      '198.18.0.1',
      '198.51.100.1',
      '203.0.113.1',
    ]) {
      expect(refusalOf(address, none), address).not.toBeNull();
    }
  });

  it('refuses IPv6 loopback, unspecified, ULA, link-local, multicast and the forms that embed a refused IPv4', () => {
    for (const address of [
      '::1',
      '::',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'fec0::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '::127.0.0.1',
      '::7f00:1',
      '::a00:1',
      '64:ff9b::7f00:1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::a00:1',
      '2002:7f00:1::1',
      '2001::1',
      '2001:db8::1',
      '100::1',
      '::ffff:0:7f00:1',
    ]) {
      expect(refusalOf(address, none), address).not.toBeNull();
    }
  });

  it('admits public unicast addresses, also through IPv4-mapped and NAT64 forms', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      expect(refusalOf(address, none), address).toBeNull();
    }
  });

  it("refuses the server's own addresses, in any spelling", () => {
    const own = new Set(['8.8.8.8', '2606:4700:4700::1111']);
    for (const address of ['8.8.8.8', '::ffff:8.8.8.8', '64:ff9b::808:808', '2606:4700:4700:0:0:0:0:1111']) {
      expect(refusalOf(address, own), address).not.toBeNull();
    }
    expect(refusalOf('1.1.1.1', own)).toBeNull();
  });

  it('knows which addresses are its own: the listening one, or every interface when listening on all', () => {
    const interfaces = Object.values(os.networkInterfaces()).flatMap((list) => list ?? []);
    for (const wildcard of ['0.0.0.0', '::']) {
      const own = serverAddresses(wildcard);
      for (const { address } of interfaces) expect(refusalOf(address, new Set()) ?? refusalOf(address, own), address).not.toBeNull();
      expect(own.has('127.0.0.1')).toBe(true);
    }
    expect(serverAddresses('8.8.8.8')).toEqual(new Set(['8.8.8.8']));
    expect(serverAddresses('2606:4700:4700:0::1111')).toEqual(new Set(['2606:4700:4700::1111']));
  });
});

describe('the checked DNS answer is the address connected to', () => {
  const base = {
    signal: new AbortController().signal,
    connectTimeoutMs: 2000,
    idleTimeoutMs: 5000,
    minBytesPerSecond: 0,
    rateWindowMs: 30_000,
    ownAddresses: new Set<string>(),
  };

  it('refuses a name whose answer is internal, before connecting', async () => {
    let lookups = 0;
    const resolve = async () => {
      lookups++;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    await expect(openUpstream(`http://videos.example:${inside.port}/`, { ...base, allowedHosts: [], resolve })).rejects.toMatchObject({ status: 502 });
    expect(lookups).toBe(1);
    expect(inside.connections).toBe(0);
  });

  it('refuses a name when any address of its answer is internal', async () => {
    const resolve = async () => [
      { address: '8.8.8.8', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    await expect(openUpstream(`http://videos.example:${inside.port}/`, { ...base, allowedHosts: [], resolve })).rejects.toMatchObject({ status: 502 });
    expect(inside.connections).toBe(0);
  });

  it('connects to the address it resolved once, whatever the name resolves to later (no rebinding)', async () => {
    // Two loopback listeners on the same port: 127.0.0.2 is what the name first resolves to.
    const first = await listen('127.0.0.2', secret);
    const later = await listen('127.0.0.3', secret, first.port);
    try {
      let lookups = 0;
      const resolve = async () => [{ address: lookups++ === 0 ? '127.0.0.2' : '127.0.0.3', family: 4 }];
      const res = await openUpstream(`http://rebind.example:${first.port}/`, {
        ...base,
        allowedHosts: parseAllowedHosts(`rebind.example:${first.port}`),
        resolve,
      });
      expect(res.statusCode).toBe(200);
      res.resume();
      expect(lookups).toBe(1);
      expect(first.connections).toBe(1);
      expect(first.requests[0]!.headers.host).toBe(`rebind.example:${first.port}`);
      expect(later.connections).toBe(0);
    } finally {
      await first.close();
      await later.close();
    }
  });
});
