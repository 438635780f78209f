// Hostile input to /scim/v2, property-based: whatever a SCIM client sends in any field, path
// segment, query parameter or body, the answer is never a 5xx, and every error is the SCIM error
// format with its status. Nothing is half-written: a refused write leaves the directory as it was.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../fixtures.js';
import { createScimGroup, createScimUser, email, GROUP_SCHEMA, patchOp, scim, scimToken, USER_SCHEMA, type ScimAnswer } from '../fixtures-scim.js';

const env = useServer();

const hostile = fc.oneof(
  fc.constantFrom<unknown>(
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udc00y',
    'x'.repeat(100_000),
    '',
    ' ',
    '..',
    '%00',
    'null',
    '1e308',
    '\u202e\ufeff😀',
    "'; DROP TABLE users; --",
    'a@b',
    'True',
    'False',
  ),
  fc.constantFrom<unknown>(1e308, -1, 0, 1.5, Number.MAX_SAFE_INTEGER, true, false, null, {}, [], { a: 1 }, [1, 'two', null], [[[]]]),
  fc.string({ maxLength: 30 }),
);
const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const deepObject = (depth: number) => '{"a":'.repeat(depth) + '0' + '}'.repeat(depth);

function expectSane(answer: ScimAnswer, what: string) {
  expect(answer.status, `${what}: ${JSON.stringify(answer.body)?.slice(0, 300)}`).toBeLessThan(500);
  if (answer.status >= 400) {
    expect(answer.type, what).toMatch(/^application\/scim\+json/);
    expect(answer.body, what).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(answer.status) });
  }
}

describe('/scim/v2 under hostile input', () => {
  let token: string;
  let userId: string;
  let groupId: string;
  let counts: () => Promise<number[]>;
  beforeAll(async () => {
    token = await scimToken(env.server);
    userId = (await createScimUser(env.server, token, email('hostile'))).id;
    groupId = (await createScimGroup(env.server, token, 'Hostile', [userId])).id;
    counts = async () => [await env.server.db.scimUser.count(), await env.server.db.scimGroup.count(), await env.server.db.scimGroupMember.count()];
  });

  it('User and Group bodies with a hostile value in any field: never a 5xx; a refused write writes nothing', async () => {
    const fields = fc.constantFrom('userName', 'externalId', 'displayName', 'active', 'name', 'emails', 'schemas', 'members', 'id');
    await fc.assert(
      fc.asyncProperty(fields, hostile, fc.constantFrom('POST /Users', 'PUT /Users/{id}', 'POST /Groups', 'PUT /Groups/{id}'), async (field, value, route) => {
        const isUser = route.includes('Users');
        const body: Record<string, unknown> = isUser
          ? { schemas: [USER_SCHEMA], userName: email('h'), name: { givenName: 'H' }, active: true }
          : { schemas: [GROUP_SCHEMA], displayName: 'Hostile' };
        body[field] = field === 'name' ? { givenName: value } : field === 'members' ? [{ value }] : value;
        const [method, path] = route.split(' ') as [string, string];
        const before = await counts();
        const answer = await scim(env.server, token, path.replace('{id}', isUser ? userId : groupId), { method, body });
        expectSane(answer, `${route} ${field}=${JSON.stringify(value)?.slice(0, 40)}`);
        if (answer.status >= 400) expect(await counts()).toEqual(before);
      }),
      { numRuns: 60 },
    );
  });

  it('PATCH operations with hostile op, path and value: never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constantFrom('add', 'Replace', 'remove', 'REMOVE'), hostile),
        fc.oneof(
          fc.constantFrom(undefined, 'members', 'active', 'displayName', 'members[value eq "x"]', 'emails[type eq "work"].value', 'name.', '[', 'a.b.c.d'),
          hostile,
        ),
        hostile,
        fc.boolean(),
        async (op, path, value, onUser) => {
          const target = onUser ? `/Users/${userId}` : `/Groups/${groupId}`;
          const answer = await scim(env.server, token, target, { method: 'PATCH', body: patchOp({ op, ...(path === undefined ? {} : { path }), value }) });
          expectSane(answer, `PATCH ${target} ${JSON.stringify({ op, path, value })?.slice(0, 80)}`);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('hostile filters, startIndex, count and ids: never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.constantFrom('userName eq "\u0000"', 'userName eq', '(((', 'a eq "b" and', 'emails[type eq "work"]', 'userName gt 5', 'id eq "x"'),
        ),
        fc.oneof(fc.constantFrom('', '-1', '0', '1e9', 'x', '99999999999'), fc.string({ maxLength: 5 })),
        fc.oneof(fc.constantFrom('%00', '..', '%zz', 'x'.repeat(300), '%E2%80%AE'), fc.string({ maxLength: 10 })),
        async (filter, number, id) => {
          const query = `filter=${encodeURIComponent(filter)}&startIndex=${encodeURIComponent(number)}&count=${encodeURIComponent(number)}`;
          expectSane(await scim(env.server, token, `/Users?${query}`), `GET /Users?${query}`);
          expectSane(await scim(env.server, token, `/Groups?${query}`), `GET /Groups?${query}`);
          expectSane(await scim(env.server, token, `/Users/${id}`), `GET /Users/${id}`);
          expectSane(await scim(env.server, token, `/Groups/${encodeURIComponent(id)}`, { method: 'DELETE' }), `DELETE /Groups/${id}`);
        },
      ),
      { numRuns: 40 },
    );
    // The group and user survived every DELETE of a hostile id.
    expect((await scim(env.server, token, `/Groups/${groupId}`)).status).toBe(200);
  });

  it('malformed, deep, oversized and non-JSON bodies: 400 or 413 in the SCIM format', async () => {
    for (const raw of ['{', '[', 'null', '"x"', '1', deepArray(10_000), deepObject(10_000), deepArray(65)]) {
      for (const path of ['/Users', '/Groups', `/Users/${userId}`, `/Groups/${groupId}`]) {
        const method = path.includes(userId) || path.includes(groupId) ? 'PATCH' : 'POST';
        const answer = await scim(env.server, token, path, { method, raw });
        expectSane(answer, `${method} ${path} ${raw.slice(0, 20)}`);
        expect(answer.status).toBe(400);
      }
    }
    const huge = await scim(env.server, token, '/Users', { method: 'POST', raw: JSON.stringify({ schemas: [USER_SCHEMA], userName: 'x'.repeat(2_000_000) }) });
    expectSane(huge, 'a 2 MB body');
    expect(huge.status).toBe(413);
  });
});
