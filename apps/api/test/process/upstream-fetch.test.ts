// The shared upstream policy's small-request entry point (apps/api/src/upstream/fetch.ts), used by
// webhook deliveries and JWKS fetches, and the rule for URLs stored for later fetching. Every
// listener is on loopback; addresses that are not loopback are only classified, never connected to.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { scaled } from '@switchyard/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upstream } from '../../src/lib/errors.js';
import { parseAllowedHosts, RefusedUpstream, storedUrlProblem, upstreamFetch, upstreamPolicyOf } from '../../src/upstream/index.js';

let server: http.Server;
let port: number;
let requests = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests++;
    if (req.url === '/redirect') {
      res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      return;
    }
    if (req.url === '/big') {
      res.end(Buffer.alloc(10_000, 'x'));
      return;
    }
    if (req.url === '/hang') return; // never answers
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, body: Buffer.concat(chunks).toString() })),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const allowedPolicy = () => upstreamPolicyOf({ upstreamAllowedHosts: parseAllowedHosts(`127.0.0.1:${port}`), listenHost: '127.0.0.1' });

describe('upstreamFetch', () => {
  it('refuses loopback unless UPSTREAM_ALLOWED_HOSTS allows it, before connecting', async () => {
    const before = requests;
    const policy = upstreamPolicyOf({ upstreamAllowedHosts: [], listenHost: '127.0.0.1' });
    await expect(upstreamFetch(policy, `http://127.0.0.1:${port}/`)).rejects.toBeInstanceOf(RefusedUpstream);
    await expect(upstreamFetch(policy, `http://localhost:${port}/`, { method: 'POST', body: '{}' })).rejects.toBeInstanceOf(RefusedUpstream);
    await expect(upstreamFetch(policy, 'http://169.254.169.254/latest/meta-data/')).rejects.toBeInstanceOf(RefusedUpstream);
    expect(requests).toBe(before);
  });

  it('sends the request to an allowed host and reads the answer', async () => {
    const res = await upstreamFetch(allowedPolicy(), `http://127.0.0.1:${port}/hook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ method: 'POST', body: '{"a":1}' });
    expect(res.truncated).toBe(false);
  });

  it('follows no redirect, bounds the body and has a deadline', async () => {
    const redirected = await upstreamFetch(allowedPolicy(), `http://127.0.0.1:${port}/redirect`);
    expect(redirected.status).toBe(302);
    const big = await upstreamFetch(allowedPolicy(), `http://127.0.0.1:${port}/big`, { maxBodyBytes: 100 });
    expect(big.body.length).toBe(100);
    expect(big.truncated).toBe(true);
    const started = Date.now();
    await expect(upstreamFetch(allowedPolicy(), `http://127.0.0.1:${port}/hang`, { timeoutMs: 200 })).rejects.toBeInstanceOf(Upstream);
    expect(Date.now() - started).toBeLessThan(scaled(5_000));
  });
});

describe('storedUrlProblem', () => {
  const allowed = parseAllowedHosts('127.0.0.1:8080,localhost');
  it('accepts https, and http only to an allowed loopback host', () => {
    expect(storedUrlProblem('https://hooks.example.com/x', [])).toBeNull();
    expect(storedUrlProblem('http://127.0.0.1:8080/x', allowed)).toBeNull();
    expect(storedUrlProblem('http://localhost:3000/x', allowed)).toBeNull();
    expect(storedUrlProblem('http://127.0.0.1:8081/x', allowed)).toMatch(/loopback/);
    expect(storedUrlProblem('http://127.0.0.1:8080/x', [])).toMatch(/loopback/);
    expect(storedUrlProblem('http://hooks.example.com/x', parseAllowedHosts('hooks.example.com'))).toMatch(/https/);
    expect(storedUrlProblem('ftp://example.com/x', [])).toMatch(/scheme/);
    expect(storedUrlProblem('/relative', [])).toMatch(/absolute/);
    expect(storedUrlProblem('https://user:pw@example.com/', [])).toMatch(/credentials/);
  });
});
