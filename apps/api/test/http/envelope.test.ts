// Every non-2xx answer, from every path, is the spec's envelope with the exact message text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelopeSchema } from '@switchyard/schema';
import type { TestServer } from '../../src/testing/test-server.js';
import { VERSION } from '../../src/lib/version.js';
import { testServer } from '../fixtures.js';
import { ok } from '../fixtures-trpc.js';

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});
afterAll(async () => {
  await server?.close();
});

async function expectEnvelope(res: Response, status: number, message: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = await res.json();
  expect(ErrorEnvelopeSchema.strict().parse(body)).toMatchObject({ error: { code: status, message } });
  return body as { error: { code: number; message: string; metadata?: Record<string, unknown> } };
}

describe('error envelope', () => {
  it('404 for unknown paths under /api/v1 and elsewhere, with or without a key', async () => {
    await expectEnvelope(await server.request('/api/v1/no-such-thing'), 404, 'Resource not found');
    await expectEnvelope(await server.request('/api/v1/no-such-thing', { key: null }), 404, 'Resource not found');
    await expectEnvelope(await server.request('/nowhere', { key: null }), 404, 'Resource not found');
    await expectEnvelope(await server.request('/api/v1/key', { method: 'DELETE' }), 404, 'Resource not found');
  });

  it('400 for malformed JSON', async () => {
    const res = await server.request('/api/v1/generation/feedback', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"user_ids": [',
    });
    await expectEnvelope(res, 400, 'Invalid request parameters');
  });

  it('the caller comes before the body on REST: no key is a 401, a regular key a 403, whatever the body', async () => {
    // A caller without the operation's key costs no body parsing: it is answered before the body is read.
    const malformed = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name": [' };
    await expectEnvelope(await server.request('/api/v1/keys', { ...malformed, key: null }), 401, 'Missing Authentication header');
    const { key } = await ok(server, 'keys.create', { name: 'regular, before the body' });
    await expectEnvelope(await server.request('/api/v1/keys', { ...malformed, key }), 403, 'Only management keys can perform this operation');
    const notJson = { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(1024) };
    await expectEnvelope(await server.request('/api/v1/keys', { ...notJson, key: null }), 401, 'Missing Authentication header');
  });

  it('400 for wrong types, naming the offending fields (tRPC input validation)', async () => {
    const res = await server.request('/trpc/keys.create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 42, limit: 'abc' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; data: { httpStatus: number; metadata: { issues: { path: string }[] } } } };
    expect(body.error.message).toBe('Invalid request parameters');
    expect(body.error.data.httpStatus).toBe(400);
    expect(body.error.data.metadata.issues.map((i) => i.path).sort()).toEqual(['limit', 'name']);
  });

  it('413 for an oversized body (on an operation that lists 413)', async () => {
    const res = await server.request('/api/v1/containers/sess_x/files/cfile_eA/promote', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ padding: 'x'.repeat(2 * 1024 * 1024) }),
    });
    await expectEnvelope(res, 413, 'Request payload too large');
  });

  it('403 with the management-only message for a regular key on a management operation', async () => {
    const { key } = await ok(server, 'keys.create', { name: 'regular' });
    const res = await server.request('/trpc/keys.create', {
      key,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'not allowed' }),
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { message: string; data: { httpStatus: number } } };
    expect(body.error).toMatchObject({ message: 'Only management keys can perform this operation', data: { httpStatus: 403 } });
  });

  it('500 for an internal error: cause logged, spec text sent, no stack', async () => {
    const other = await testServer();
    try {
      // Break the database under the running server: a real failure, not a mock.
      await other.db.$executeRawUnsafe('DROP TABLE key_usage_daily');
      const body = await expectEnvelope(await other.request('/api/v1/key'), 500, 'Internal Server Error');
      expect(JSON.stringify(body)).not.toMatch(/key_usage_daily|stack|at /);
      const logged = other.logs.find((entry) => entry.msg === 'internal error');
      expect(logged).toBeDefined();
      expect(JSON.stringify(logged)).toMatch(/key_usage_daily/);
    } finally {
      await other.close();
    }
  });
});

describe('operational endpoints', () => {
  it('GET /healthz and /readyz answer without a key', async () => {
    expect(await (await server.request('/healthz', { key: null })).json()).toEqual({ status: 'ok', version: VERSION });
    expect(await (await server.request('/readyz', { key: null })).json()).toEqual({ status: 'ok' });
  });

  it('GET /api/v1/openapi.json documents the operations', async () => {
    const res = await server.request('/api/v1/openapi.json', { key: null });
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.paths['/key']?.get).toBeDefined();
  });

  it('the OpenAPI document describes the administration operations, with 201 for the creates', async () => {
    const doc = (await (await server.request('/api/v1/openapi.json', { key: null })).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const success = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {}).filter((s) => s.startsWith('2'));
    for (const [path, method, status] of [
      ['/keys', 'post', '201'],
      ['/keys', 'get', '200'],
      ['/keys/{hash}', 'get', '200'],
      ['/keys/{hash}', 'patch', '200'],
      ['/keys/{hash}', 'delete', '200'],
      ['/workspaces', 'post', '201'],
      ['/workspaces', 'get', '200'],
      ['/workspaces/{id}', 'get', '200'],
      ['/workspaces/{id}', 'patch', '200'],
      ['/workspaces/{id}', 'delete', '200'],
      ['/workspaces/{id}/members/remove', 'post', '200'],
      // PUT and DELETE's {workspace_ref} is GET's {id}: one path (openapi.ts mergeIdenticalPaths).
      ['/workspaces/{id}/budgets/{interval}', 'put', '200'],
      ['/workspaces/{id}/budgets/{interval}', 'delete', '200'],
      ['/byok', 'post', '201'],
      ['/byok', 'get', '200'],
      ['/byok/{id}', 'patch', '200'],
      ['/byok/{id}', 'delete', '200'],
    ] as const) {
      expect(success(path, method), `${method} ${path}`).toEqual([status]);
    }
  });

  it('logs each request with method, path, status, latency and key hash, never the key', async () => {
    await server.request('/api/v1/key?probe=1');
    const entry = server.logs.filter((e) => e.msg === 'request' && e.path === '/api/v1/key').at(-1);
    expect(entry).toMatchObject({ method: 'GET', status: 200, key_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(typeof entry?.latency_ms).toBe('number');
    expect(JSON.stringify(server.logs)).not.toContain(server.managementKey.slice(9));
  });
});
