// Request ids and the request log: an incoming X-Request-Id is kept when sane, else one is made;
// it is echoed, written into every log line of its request, and named in error answers.
import { afterAll, beforeAll, describe, expect, it, inject, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { until } from '../fixtures.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), env: { LOG_LEVEL: 'debug' } });
});
afterAll(async () => {
  await server?.close();
});

const linesOf = (requestId: string) => server.logs.filter((entry) => entry.request_id === requestId);

/** The request line is written on 'finish', after the answer may have been read: wait for it. */
async function settled(requestId: string, logs = server.logs) {
  await until(() => logs.some((entry) => entry.request_id === requestId && entry.msg === 'request'), { what: `the request line of ${requestId}` });
}

describe('X-Request-Id', () => {
  it('is made when the request has none, echoed, and written into the request line', async () => {
    const res = await server.request('/api/v1/key');
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    expect(id).toMatch(UUID);
    await settled(id);
    expect(linesOf(id)).toEqual([
      expect.objectContaining({
        msg: 'request',
        level: 30,
        method: 'GET',
        path: '/api/v1/key',
        status: 200,
        key_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
    ]);
    // Each request gets its own.
    expect((await server.request('/api/v1/key')).headers.get('x-request-id')).not.toBe(id);
  });

  it('keeps a sane incoming id, on REST, tRPC and the plain routes alike', async () => {
    for (const [i, path] of ['/api/v1/key', '/trpc/keys.current', '/healthz', '/api/v1/openapi.json'].entries()) {
      const id = `req-${i}_trace:01HZX3/ab+c=@x.y`;
      const res = await server.request(path, { headers: { 'x-request-id': id } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('x-request-id')).toBe(id);
      await settled(id);
      expect(linesOf(id).map((e) => e.path)).toEqual([path]);
    }
  });

  it('makes no child logger for a request that logs nothing but its line', async () => {
    const child = vi.spyOn(server.logger, 'child');
    try {
      for (const [i, path] of ['/api/v1/key', '/trpc/keys.current', '/api/v1/models'].entries()) {
        expect((await server.request(path, { headers: { 'x-request-id': `no-child-${i}` } })).status, path).toBe(200);
      }
      // The platform's procedures too.
      const organizations = `/trpc/organizations.list?input=${encodeURIComponent('{}')}`;
      expect((await server.request(organizations, { key: server.platformKey, headers: { 'x-request-id': 'no-child-3' } })).status).toBe(200);
      for (const i of [0, 1, 2, 3]) await settled(`no-child-${i}`);
      expect(child).not.toHaveBeenCalled();
    } finally {
      child.mockRestore();
    }
  });

  it('replaces an id that is too long, has spaces, quotes or control characters, or is empty', async () => {
    for (const bad of ['x'.repeat(129), 'has space', 'quo"te', 'new\tline', '<script>', '']) {
      const res = await server.request('/api/v1/key', { headers: { 'x-request-id': bad } });
      expect(res.headers.get('x-request-id'), JSON.stringify(bad)).toMatch(UUID);
    }
  });

  it('is error.metadata.request_id of every error answer, beside the metadata the error has', async () => {
    const cases: [string, RequestInit & { key?: string | null }, number][] = [
      ['/api/v1/key', { key: null }, 401],
      ['/api/v1/no-such-route', {}, 404],
      ['/api/v1/generation?id=gen-none', {}, 404],
      ['/api/v1/embeddings/models?limit=0', {}, 400],
      ['/api/v1/videos/none/content', {}, 404],
      ['/api/v1/generation/feedback', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"broken' }, 400],
    ];
    for (const [path, init, status] of cases) {
      const res = await server.request(path, init);
      expect(res.status, path).toBe(status);
      const body = (await res.json()) as { error: { code: number; metadata?: Record<string, unknown> } };
      expect(body.error.metadata?.request_id, path).toBe(res.headers.get('x-request-id'));
    }
    const given = await server.request('/api/v1/embeddings/models?limit=0', { headers: { 'x-request-id': 'mine-1' } });
    const body = (await given.json()) as { error: { metadata: Record<string, unknown> } };
    expect(body.error.metadata).toMatchObject({ request_id: 'mine-1', issues: [expect.objectContaining({ path: 'limit' })] });
  });

  it('is in every line logged while serving the request: an internal error and its request line', async () => {
    const other = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });
    try {
      await other.db.$executeRawUnsafe('DROP TABLE key_usage_daily');
      for (const path of ['/api/v1/key', '/trpc/keys.current']) {
        const res = await other.request(path, { headers: { 'x-request-id': `broken-${path.length}` } });
        expect(res.status).toBe(500);
        await settled(`broken-${path.length}`, other.logs);
        const lines = other.logs.filter((e) => e.request_id === `broken-${path.length}`);
        expect(lines.map((e) => e.msg)).toEqual(['internal error', 'request']);
        expect(lines[0]).toMatchObject({ level: 50, err: expect.objectContaining({ message: expect.stringContaining('key_usage_daily') }) });
        expect(lines[1]).toMatchObject({ path, status: 500 });
      }
    } finally {
      await other.close();
    }
  });
});

describe('the request log', () => {
  it('logs /healthz and /readyz at debug, everything else at info', async () => {
    for (const path of ['/healthz', '/readyz', '/api/v1/key']) {
      const id = `level-${path}`;
      await server.request(path, { key: path === '/api/v1/key' ? server.managementKey : null, headers: { 'x-request-id': id } });
      await settled(id);
      expect(linesOf(id), path).toEqual([expect.objectContaining({ msg: 'request', path, level: path === '/api/v1/key' ? 30 : 20 })]);
    }
  });

  it('never writes the key, and names the caller by its hash', async () => {
    await server.request('/api/v1/key?probe=1', { headers: { 'x-request-id': 'hash-only' } });
    await settled('hash-only');
    expect(linesOf('hash-only')[0]).toMatchObject({ key_hash: expect.stringMatching(/^[0-9a-f]{64}$/), latency_ms: expect.any(Number) });
    expect(JSON.stringify(server.logs)).not.toContain(server.managementKey.slice(9));
  });
});
