// CORS_ORIGINS: browsers on the listed origins may call the API (preflights included); other
// origins, and every origin when it is unset, get no CORS headers.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';

const CONSOLE = 'https://console.example.com';
const DEV = 'http://localhost:5173';

let server: TestServer;
let closed: TestServer;
beforeAll(async () => {
  const options = { adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') };
  [server, closed] = await Promise.all([startTestServer({ ...options, env: { CORS_ORIGINS: ` ${CONSOLE}, ${DEV} ` } }), startTestServer(options)]);
});
afterAll(async () => {
  await Promise.all([server?.close(), closed?.close()]);
});

const preflight = (on: TestServer, path: string, origin: string, method = 'GET') =>
  on.request(path, {
    method: 'OPTIONS',
    key: null,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type,x-request-id' },
  });

describe('CORS for the listed origins', () => {
  it('answers preflights for REST and tRPC paths with the methods and requested headers allowed', async () => {
    for (const [path, method] of [
      ['/api/v1/key', 'GET'],
      ['/api/v1/generation/feedback', 'POST'],
      ['/trpc/keys.current', 'GET'],
      ['/api/v1/workspaces/x/members/add', 'POST'],
    ] as const) {
      for (const origin of [CONSOLE, DEV]) {
        const res = await preflight(server, path, origin, method);
        expect(res.status, `${path} ${origin}`).toBe(204);
        expect(res.headers.get('access-control-allow-origin')).toBe(origin);
        expect(res.headers.get('access-control-allow-methods')?.split(',')).toContain(method);
        expect(res.headers.get('access-control-allow-headers')).toBe('authorization,content-type,x-request-id');
        expect(res.headers.get('access-control-max-age')).toBe('600');
        expect(res.headers.get('access-control-allow-credentials')).toBeNull();
        expect(res.headers.get('vary')).toMatch(/Origin/);
      }
    }
  });

  it('lets the answer, errors included, be read, and exposes X-Request-Id', async () => {
    for (const [key, status] of [
      [server.managementKey, 200],
      [null, 401],
    ] as const) {
      const res = await server.request('/api/v1/key', { key, headers: { origin: CONSOLE } });
      expect(res.status).toBe(status);
      expect(res.headers.get('access-control-allow-origin')).toBe(CONSOLE);
      expect(res.headers.get('access-control-expose-headers')?.split(',')).toEqual(
        expect.arrayContaining(['X-Request-Id', 'Content-Disposition', 'Content-Range']),
      );
    }
  });

  it('gives another origin no CORS headers, so its browser refuses the answer', async () => {
    const res = await server.request('/api/v1/key', { headers: { origin: 'https://evil.example.net' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await preflight(server, '/api/v1/key', 'https://console.example.com.evil.net');
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS off (the default)', () => {
  it('sends no CORS headers and answers no preflight', async () => {
    const pre = await preflight(closed, '/api/v1/key', CONSOLE);
    expect(pre.status).toBe(404);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const res = await closed.request('/api/v1/key', { headers: { origin: CONSOLE } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('takes origins, or *, and refuses what is not an origin', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: `${CONSOLE},${DEV}` }).corsOrigins).toEqual([CONSOLE, DEV]);
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    for (const bad of ['https://console.example.com/', 'console.example.com', 'ftp://x.example', 'https://x.example/path']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(/CORS_ORIGINS=.*is not an origin/);
    }
  });
});
