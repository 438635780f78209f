// Helpers for the administration tests: REST calls, error-envelope checks, keys, members and
// workspaces made through the API (tRPC calls go through fixtures-trpc.ts).
import { API_PREFIX, ERROR_MESSAGES, ErrorEnvelopeSchema, listOf, type ErrorStatus } from '@switchyard/schema';
import { z } from 'zod';
import { expect } from 'vitest';
import type { TestServer } from '../src/testing/test-server.js';
import { ok } from './fixtures-trpc.js';

/** A REST call's JSON answer (parse `body` with the operation's output schema, or errorOf() for an error). */
export async function rest(server: TestServer, path: string, init: RequestInit & { key?: string | null; json?: unknown } = {}) {
  const { json, ...rest } = init;
  const res = await server.request(
    `/api/v1${path}`,
    json === undefined ? rest : { ...rest, headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) },
  );
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as unknown };
}

/** The REST request trpc-to-openapi maps an input to: path parameters, then query (GET, DELETE) or JSON body. */
export function restRequest(openapi: { method: string; path: string }, input: unknown): { url: string; init: RequestInit } {
  const rest: Record<string, unknown> = { ...((input ?? {}) as Record<string, unknown>) };
  const path = openapi.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    return encodeURIComponent(String(value));
  });
  if (openapi.method === 'GET' || openapi.method === 'DELETE') {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(rest)) for (const v of [value].flat()) query.append(name, String(v));
    return { url: `${API_PREFIX}${path}${query.size ? `?${query}` : ''}`, init: { method: openapi.method } };
  }
  return {
    url: `${API_PREFIX}${path}`,
    init: { method: openapi.method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(rest) },
  };
}

/** The answer is the spec's envelope for this status. */
export function expectEnvelope(answer: { status: number; body: unknown }, status: ErrorStatus) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(errorOf(answer)).toMatchObject({ code: status, message: ERROR_MESSAGES[status] });
}

/** The error of an answer that must be the spec's error envelope. */
export function errorOf(answer: { body: unknown }) {
  return ErrorEnvelopeSchema.parse(answer.body).error;
}

/** A page of any list operation: its records (unparsed) and total_count. */
const PageSchema = listOf(z.unknown());

/** A regular (non-management) key in the workspace given (default: the caller's). */
export async function createRegularKey(server: TestServer, workspaceId?: string, managementKey?: string) {
  const created = await ok(server, 'keys.create', { name: 'regular', ...(workspaceId ? { workspace_id: workspaceId } : {}) }, { key: managementKey });
  return { key: created.key, hash: created.data.hash, label: created.data.label, name: created.data.name };
}

export async function createMember(server: TestServer, email: string, role: 'org:admin' | 'org:member' = 'org:member', key?: string) {
  return ok(server, 'organization.createMember', { email, role }, { key });
}

export async function createWorkspace(server: TestServer, slug: string, key?: string) {
  return (await ok(server, 'workspaces.create', { slug, name: slug }, { key })).data;
}

/** Checks the pagination edges of a list: offset past the end, limit 1, limit 100, limit 101 (400). */
export async function expectPaginationEdges(server: TestServer, path: string, total: number) {
  const join = path.includes('?') ? '&' : '?';
  const past = await rest(server, `${path}${join}offset=${total + 5}&limit=10`);
  expect(past.status).toBe(200);
  expect(past.body).toEqual({ data: [], total_count: total });

  const one = await rest(server, `${path}${join}offset=0&limit=1`);
  expect(one.status).toBe(200);
  expect(PageSchema.parse(one.body).data).toHaveLength(Math.min(1, total));
  expect(PageSchema.parse(one.body).total_count).toBe(total);

  const hundred = await rest(server, `${path}${join}offset=0&limit=100`);
  expect(hundred.status).toBe(200);
  const hundredRecords = PageSchema.parse(hundred.body).data;
  expect(hundredRecords).toHaveLength(Math.min(100, total));

  expectEnvelope(await rest(server, `${path}${join}limit=101`), 400);
  expectEnvelope(await rest(server, `${path}${join}limit=0`), 400);
  expectEnvelope(await rest(server, `${path}${join}offset=-1`), 400);
  expectEnvelope(await rest(server, `${path}${join}limit=abc`), 400);

  // Pages of one record walk the whole list without overlap or gap.
  const ids: unknown[] = [];
  for (let offset = 0; offset < total; offset++) {
    const page = await rest(server, `${path}${join}offset=${offset}&limit=1`);
    ids.push(JSON.stringify(PageSchema.parse(page.body).data[0]));
  }
  const records = ids.filter((id) => id !== 'null');
  expect(new Set(records).size).toBe(records.length);
  expect(ids).toEqual(hundredRecords.slice(0, total).map((r) => JSON.stringify(r)));
}
