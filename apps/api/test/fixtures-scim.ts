// Helpers of the SCIM 2.0 tests: requests to /scim/v2 with a SCIM token, and people with keys.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { generateApiKey, hashApiKey, maskApiKey } from '../src/access/key-format.js';
import type { TestServer } from '../src/testing/test-server.js';
import { ok } from './fixtures-trpc.js';

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export interface ScimAnswer {
  status: number;
  type: string | null;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: SCIM documents are read field by field in the tests.
  body: any;
}

/** A request to /scim/v2 with `token` (null: none); a body is sent as application/scim+json. */
export async function scim(
  server: TestServer,
  token: string | null,
  path: string,
  init: { method?: string; body?: unknown; raw?: string; contentType?: string } = {},
): Promise<ScimAnswer> {
  const headers: Record<string, string> = {};
  if (init.body !== undefined || init.raw !== undefined) headers['content-type'] = init.contentType ?? 'application/scim+json';
  const res = await server.request(`/scim/v2${path}`, {
    key: token,
    method: init.method ?? 'GET',
    headers,
    body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** The answer is a SCIM error (RFC 7644 §3.12) with this status (and scimType when given). */
export function expectScimError(answer: ScimAnswer, status: number, scimType?: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.type).toMatch(/^application\/scim\+json/);
  expect(answer.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: String(status), detail: expect.any(String) });
  if (scimType) expect(answer.body.scimType).toBe(scimType);
}

/** A new SCIM token of the organization of `managementKey`. */
export async function scimToken(server: TestServer, managementKey?: string): Promise<string> {
  return (await ok(server, 'scim.createToken', undefined, { key: managementKey })).token;
}

export const email = (prefix = 'p') => `${prefix}-${randomUUID().slice(0, 8)}@example.com`;

/** POST /Users: 201; answers the User. */
export async function createScimUser(server: TestServer, token: string, userName: string, extra: Record<string, unknown> = {}) {
  const answer = await scim(server, token, '/Users', { method: 'POST', body: { schemas: [USER_SCHEMA], userName, active: true, ...extra } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body as { id: string; userName: string; active: boolean; emails: { value: string }[] };
}

/** POST /Groups: 201; answers the Group. */
export async function createScimGroup(server: TestServer, token: string, displayName: string, members: string[] = []) {
  const answer = await scim(server, token, '/Groups', {
    method: 'POST',
    body: { schemas: [GROUP_SCHEMA], displayName, members: members.map((value) => ({ value })) },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body as { id: string; displayName: string; members: { value: string }[] };
}

/** A regular key made by the person `userId` in `workspaceId` (as an app would hold it). */
export async function keyOfPerson(server: TestServer, organizationId: string, workspaceId: string, userId: string, management = false): Promise<string> {
  const key = generateApiKey();
  await server.db.apiKey.create({
    data: {
      organization_id: organizationId,
      workspace_id: workspaceId,
      creator_user_id: userId,
      hash: hashApiKey(key),
      label: maskApiKey(key),
      name: `key of ${userId}`,
      is_management_key: management,
    },
  });
  return key;
}

export const patchOp = (...Operations: unknown[]) => ({ schemas: [PATCH_SCHEMA], Operations });
