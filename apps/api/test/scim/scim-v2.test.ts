// The SCIM 2.0 service provider at /scim/v2 on the real server: tokens, the RFC 7643 / 7644 MUSTs,
// the lifecycle through group mappings, isolation between organizations, the management-key
// invariant, concurrent PATCHes, and D14 (GET /api/v1/scim/groups).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ListScimGroupsOutputSchema, ScimGroupSchema } from '@switchyard/schema';
import { SERVER_ACTOR } from '../../src/access/callers.js';
import { applyScimMappings } from '../../src/modules/scim/directory.service.js';
import { createOrganization, useServer } from '../fixtures.js';
import { createRegularKey, createWorkspace, expectEnvelope, rest } from '../fixtures-admin.js';
import { ok, trpc } from '../fixtures-trpc.js';
import {
  createScimGroup,
  createScimUser,
  email,
  expectScimError,
  GROUP_SCHEMA,
  keyOfPerson,
  LIST_SCHEMA,
  patchOp,
  scim,
  scimToken,
  USER_SCHEMA,
} from '../fixtures-scim.js';

const env = useServer();
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function personOf(userName: string) {
  return env.server.db.user.findUniqueOrThrow({ where: { email: userName.toLowerCase() } });
}
async function workspaceRoles(userId: string) {
  const rows = await env.server.db.workspaceMember.findMany({ where: { user_id: userId }, select: { workspace_id: true, role: true, scim_granted: true } });
  return Object.fromEntries(rows.map((r) => [r.workspace_id, r.role]));
}

describe('SCIM tokens (tRPC)', () => {
  it('are made by management keys, shown once, listed by label, and revoked', async () => {
    const made = await ok(env.server, 'scim.createToken', undefined);
    expect(made.token).toMatch(/^sy-scim-v1-[0-9a-f]{64}$/);
    expect(made.data).toMatchObject({ id: expect.any(String), label: expect.stringMatching(/^sy-scim-v1-.{3}\.\.\..{3}$/), last_used_at: null });
    const stored = await env.server.db.scimToken.findUniqueOrThrow({ where: { id: made.data.id } });
    expect(JSON.stringify(stored)).not.toContain(made.token);

    expect((await scim(env.server, made.token, '/Users')).status).toBe(200);
    const listed = await ok(env.server, 'scim.listTokens', undefined, { query: true });
    const mine = listed.data.find((t) => t.id === made.data.id);
    expect(mine?.last_used_at).toMatch(ISO_MS);
    expect(JSON.stringify(listed)).not.toContain(made.token);

    // Another organization's management key neither sees nor revokes it.
    expect((await ok(env.server, 'scim.listTokens', undefined, { key: env.other.managementKey, query: true })).data.map((t) => t.id)).not.toContain(
      made.data.id,
    );
    expect((await trpc(env.server, 'scim.revokeToken', { id: made.data.id }, { key: env.other.managementKey })).status).toBe(404);
    expect((await trpc(env.server, 'scim.revokeToken', { id: 'not-a-uuid' })).status).toBe(404);

    expect(await ok(env.server, 'scim.revokeToken', { id: made.data.id })).toEqual({ deleted: true });
    expectScimError(await scim(env.server, made.token, '/Users'), 401);
    expect((await trpc(env.server, 'scim.revokeToken', { id: made.data.id })).status).toBe(404);
  });

  it('401 without a key, 403 for a regular key', async () => {
    const regular = await createRegularKey(env.server);
    for (const path of ['scim.createToken', 'scim.listTokens'] as const) {
      const query = path === 'scim.listTokens';
      expect((await trpc(env.server, path, undefined, { key: null, query })).status).toBe(401);
      expect((await trpc(env.server, path, undefined, { key: regular.key, query })).status).toBe(403);
    }
    expect((await trpc(env.server, 'scim.revokeToken', { id: randomUUID() }, { key: regular.key })).status).toBe(403);
  });
});

describe('/scim/v2 authentication', () => {
  it('a missing, unknown or API key is 401 in the SCIM error format; a SCIM token is 401 on /api/v1 and /trpc', async () => {
    const token = await scimToken(env.server);
    const regular = await createRegularKey(env.server);
    for (const key of [null, 'nonsense', env.server.managementKey, regular.key, env.server.platformKey]) {
      const answer = await scim(env.server, key, '/Users');
      expectScimError(answer, 401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expectEnvelope(await rest(env.server, '/key', { key: token }), 401);
    expectEnvelope(await rest(env.server, '/scim/groups', { key: token }), 401);
    expect((await trpc(env.server, 'scim.listTokens', undefined, { key: token, query: true })).status).toBe(401);
  });

  it("a disabled organization's SCIM tokens are refused", async () => {
    const org = await createOrganization(env.server.db, 'Disabled');
    const token = await scimToken(env.server, org.managementKey);
    expect((await scim(env.server, token, '/Users')).status).toBe(200);
    await ok(env.server, 'organizations.disable', { organization_id: org.organizationId });
    expectScimError(await scim(env.server, token, '/Users'), 401);
  });

  it('NUL or a lone surrogate in any value is 400 invalidValue, before any write', async () => {
    const token = await scimToken(env.server);
    for (const userName of ['a\u0000b@example.com', 'x\ud800@example.com']) {
      expectScimError(await scim(env.server, token, '/Users', { method: 'POST', body: { schemas: [USER_SCHEMA], userName } }), 400, 'invalidValue');
    }
  });
});

describe('RFC 7643 / 7644 MUSTs', () => {
  it('discovery: ServiceProviderConfig, ResourceTypes and Schemas', async () => {
    const token = await scimToken(env.server);
    const config = await scim(env.server, token, '/ServiceProviderConfig');
    expect(config.status).toBe(200);
    expect(config.type).toMatch(/^application\/scim\+json/);
    expect(config.body).toMatchObject({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
      patch: { supported: true },
      filter: { supported: true, maxResults: 100 },
      bulk: { supported: false },
      sort: { supported: false },
      etag: { supported: false },
      changePassword: { supported: false },
      authenticationSchemes: [expect.objectContaining({ type: 'oauthbearertoken' })],
    });
    const types = await scim(env.server, token, '/ResourceTypes');
    expect(types.body.schemas).toEqual([LIST_SCHEMA]);
    expect(types.body.Resources.map((r: { endpoint: string }) => r.endpoint).sort()).toEqual(['/Groups', '/Users']);
    expect((await scim(env.server, token, '/ResourceTypes/User')).body).toMatchObject({ id: 'User', schema: USER_SCHEMA });
    const schemas = await scim(env.server, token, '/Schemas');
    expect(schemas.body.Resources.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([USER_SCHEMA, GROUP_SCHEMA]));
    expect((await scim(env.server, token, `/Schemas/${GROUP_SCHEMA}`)).body).toMatchObject({ id: GROUP_SCHEMA, name: 'Group' });
    expectScimError(await scim(env.server, token, '/Nothing'), 404);
  });

  it('Users: create (201, Location, meta), read, replace, delete (204, then 404)', async () => {
    const token = await scimToken(env.server);
    const userName = email('rfc');
    const created = await scim(env.server, token, '/Users', {
      method: 'POST',
      body: { schemas: [USER_SCHEMA], userName, externalId: 'ext-1', name: { givenName: 'Ada', familyName: 'Lovelace' }, active: true },
    });
    expect(created.status).toBe(201);
    expect(created.type).toMatch(/^application\/scim\+json/);
    const user = created.body;
    expect(user).toMatchObject({
      schemas: [USER_SCHEMA],
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      userName,
      externalId: 'ext-1',
      active: true,
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      emails: [{ value: userName, primary: true, type: 'work' }],
      groups: [],
      meta: { resourceType: 'User', created: expect.stringMatching(ISO_MS), lastModified: expect.stringMatching(ISO_MS) },
    });
    expect(created.headers.get('location')).toBe(user.meta.location);
    expect(user.meta.location).toMatch(new RegExp(`/scim/v2/Users/${user.id}$`));

    // The person is an organization member with the member role, in no workspace.
    const person = await personOf(userName);
    const member = await env.server.db.organizationMember.findFirstOrThrow({ where: { user_id: person.id, organization_id: env.server.organizationId } });
    expect(member).toMatchObject({ role: 'member', first_name: 'Ada', last_name: 'Lovelace' });
    expect(await workspaceRoles(person.id)).toEqual({});

    expect((await scim(env.server, token, `/Users/${user.id}`)).body).toEqual(user);
    const replaced = await scim(env.server, token, `/Users/${user.id}`, {
      method: 'PUT',
      body: { schemas: [USER_SCHEMA], userName, displayName: 'Ada L.', active: true },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: user.id, displayName: 'Ada L.' });
    expect(replaced.body.externalId).toBeUndefined();
    expect(replaced.body.name).toBeUndefined();

    const deleted = await scim(env.server, token, `/Users/${user.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expectScimError(await scim(env.server, token, `/Users/${user.id}`), 404);
    expectScimError(await scim(env.server, token, `/Users/${user.id}`, { method: 'DELETE' }), 404);
    // The person stays an organization member.
    expect(await env.server.db.organizationMember.count({ where: { user_id: person.id } })).toBe(1);
  });

  it('errors: missing userName 400, a taken userName 409 uniqueness, malformed JSON 400 invalidSyntax, unknown ids 404', async () => {
    const token = await scimToken(env.server);
    expectScimError(await scim(env.server, token, '/Users', { method: 'POST', body: { schemas: [USER_SCHEMA] } }), 400, 'invalidValue');
    expectScimError(
      await scim(env.server, token, '/Users', { method: 'POST', body: { schemas: [USER_SCHEMA], userName: 'no-email-here' } }),
      400,
      'invalidValue',
    );
    expectScimError(await scim(env.server, token, '/Users', { method: 'POST', body: ['x'] }), 400);
    expectScimError(await scim(env.server, token, '/Users', { method: 'POST', raw: '{' }), 400, 'invalidSyntax');
    const userName = email('dup');
    await createScimUser(env.server, token, userName);
    expectScimError(
      await scim(env.server, token, '/Users', { method: 'POST', body: { schemas: [USER_SCHEMA], userName: userName.toUpperCase() } }),
      409,
      'uniqueness',
    );
    for (const id of [randomUUID(), 'not-a-uuid']) {
      expectScimError(await scim(env.server, token, `/Users/${id}`), 404);
      expectScimError(await scim(env.server, token, `/Groups/${id}`), 404);
      expectScimError(await scim(env.server, token, `/Groups/${id}`, { method: 'PATCH', body: patchOp({ op: 'add', path: 'members', value: [] }) }), 404);
    }
    expectScimError(await scim(env.server, token, '/Groups', { method: 'POST', body: { schemas: [GROUP_SCHEMA] } }), 400, 'invalidValue');
    expectScimError(
      await scim(env.server, token, '/Groups', { method: 'POST', body: { schemas: [GROUP_SCHEMA], displayName: 'x', members: [{ value: randomUUID() }] } }),
      400,
      'invalidValue',
    );
    const group = await createScimGroup(env.server, token, 'errs');
    expectScimError(await scim(env.server, token, `/Groups/${group.id}`, { method: 'PATCH', body: { Operations: 'x' } }), 400);
    expectScimError(
      await scim(env.server, token, `/Groups/${group.id}`, { method: 'PATCH', body: patchOp({ op: 'jump', path: 'displayName', value: 'x' }) }),
      400,
    );
  });

  it('filter (userName, externalId, displayName eq), startIndex and count in a ListResponse', async () => {
    const org = await createOrganization(env.server.db, 'Filters');
    const token = await scimToken(env.server, org.managementKey);
    const names = [email('f1'), email('f2'), email('f3')];
    const users = [];
    for (const [i, name] of names.entries()) users.push(await createScimUser(env.server, token, name, { externalId: `ext-${i}` }));

    const all = await scim(env.server, token, '/Users');
    expect(all.body).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 3, startIndex: 1, itemsPerPage: 3 });
    expect(all.body.Resources.map((u: { id: string }) => u.id)).toEqual(users.map((u) => u.id));

    const page = await scim(env.server, token, '/Users?startIndex=2&count=1');
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
    expect(page.body.Resources[0].id).toBe(users[1]!.id);
    expect((await scim(env.server, token, '/Users?count=0')).body).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] });
    expect((await scim(env.server, token, '/Users?startIndex=0&count=1')).body.startIndex).toBe(1);

    const byName = await scim(env.server, token, `/Users?filter=${encodeURIComponent(`userName eq "${names[2]!.toUpperCase()}"`)}`);
    expect(byName.body).toMatchObject({ totalResults: 1, Resources: [{ id: users[2]!.id }] });
    const byExternal = await scim(env.server, token, `/Users?filter=${encodeURIComponent('externalId eq "ext-1"')}`);
    expect(byExternal.body).toMatchObject({ totalResults: 1, Resources: [{ id: users[1]!.id }] });
    // externalId is case-exact.
    expect((await scim(env.server, token, `/Users?filter=${encodeURIComponent('externalId eq "EXT-1"')}`)).body.totalResults).toBe(0);
    const either = await scim(env.server, token, `/Users?filter=${encodeURIComponent('externalId eq "ext-0" or externalId eq "ext-2"')}&count=1&startIndex=2`);
    expect(either.body).toMatchObject({ totalResults: 2, itemsPerPage: 1, Resources: [{ id: users[2]!.id }] });
    expect((await scim(env.server, token, `/Users?filter=${encodeURIComponent('userName eq "nobody@example.com"')}`)).body).toMatchObject({
      totalResults: 0,
      Resources: [],
    });

    await createScimGroup(env.server, token, 'Engineering', [users[0]!.id]);
    await createScimGroup(env.server, token, 'Sales');
    const group = await scim(env.server, token, `/Groups?filter=${encodeURIComponent('displayName eq "engineering"')}`);
    expect(group.body).toMatchObject({ totalResults: 1, Resources: [{ displayName: 'Engineering', members: [{ value: users[0]!.id }] }] });
    const lean = await scim(env.server, token, `/Groups?filter=${encodeURIComponent('displayName eq "Engineering"')}&excludedAttributes=members`);
    expect(lean.body.Resources[0].members).toBeUndefined();

    expectScimError(await scim(env.server, token, `/Users?filter=${encodeURIComponent('userName eq')}`), 400, 'invalidFilter');
    expectScimError(await scim(env.server, token, `/Users?filter=${encodeURIComponent('nickName eq "x"')}`), 400, 'invalidFilter');
    expectScimError(await scim(env.server, token, '/Users?count=abc'), 400, 'invalidValue');
  });
});

describe('the lifecycle through group mappings', () => {
  it('create a user, add them to a group: the mapping grants the role; deactivate them: memberships go, keys are disabled', async () => {
    const token = await scimToken(env.server);
    const ws = await createWorkspace(env.server, `eng-${randomUUID().slice(0, 6)}`);
    const group = await createScimGroup(env.server, token, 'Eng lifecycle');
    await ok(env.server, 'scim.createGroupMapping', { scim_group_id: group.id, workspace_id: ws.id, role: 'admin' });

    const userName = email('life');
    const user = await createScimUser(env.server, token, userName);
    const person = await personOf(userName);
    expect(await workspaceRoles(person.id)).toEqual({});

    const added = await scim(env.server, token, `/Groups/${group.id}`, {
      method: 'PATCH',
      body: patchOp({ op: 'add', path: 'members', value: [{ value: user.id }] }),
    });
    expect(added.status).toBe(200);
    expect(added.body.members).toEqual([expect.objectContaining({ value: user.id })]);
    expect(await workspaceRoles(person.id)).toEqual({ [ws.id]: 'admin' });
    expect((await scim(env.server, token, `/Users/${user.id}`)).body.groups).toEqual([expect.objectContaining({ value: group.id, display: 'Eng lifecycle' })]);

    // The person's key works, until they are deactivated.
    const key = await keyOfPerson(env.server, env.server.organizationId, ws.id, person.id);
    expect((await rest(env.server, '/key', { key })).status).toBe(200);
    const off = await scim(env.server, token, `/Users/${user.id}`, { method: 'PATCH', body: patchOp({ op: 'replace', path: 'active', value: false }) });
    expect(off.status).toBe(200);
    expect(off.body.active).toBe(false);
    expect(await workspaceRoles(person.id)).toEqual({});
    expectEnvelope(await rest(env.server, '/key', { key }), 401);
    const row = await env.server.db.apiKey.findUniqueOrThrow({
      where: { hash: (await env.server.db.apiKey.findFirstOrThrow({ where: { creator_user_id: person.id } })).hash },
    });
    expect(row).toMatchObject({ disabled: true, deleted_at: null });

    // Active again: the group grants the role again (the keys stay disabled until an admin enables them).
    await scim(env.server, token, `/Users/${user.id}`, { method: 'PATCH', body: patchOp({ op: 'replace', path: 'active', value: true }) });
    expect(await workspaceRoles(person.id)).toEqual({ [ws.id]: 'admin' });
  });

  it('a mapping added or changed later applies to the current members; A31 keep_members=false removes only what mappings granted', async () => {
    const token = await scimToken(env.server);
    const ws = await createWorkspace(env.server, `later-${randomUUID().slice(0, 6)}`);
    const [a, b] = [await createScimUser(env.server, token, email('la')), await createScimUser(env.server, token, email('lb'))];
    const [pa, pb] = [await personOf(a.userName), await personOf(b.userName)];
    const group = await createScimGroup(env.server, token, 'Later', [a.id, b.id]);
    // b was added to the workspace by hand before any mapping.
    await ok(env.server, 'workspaces.addMembers', { id: ws.id, user_ids: [pb.id] });
    expect(await workspaceRoles(pa.id)).toEqual({});

    const mapping = await ok(env.server, 'scim.createGroupMapping', { scim_group_id: group.id, workspace_id: ws.id, role: 'member' });
    expect(await workspaceRoles(pa.id)).toEqual({ [ws.id]: 'member' });
    await ok(env.server, 'scim.updateGroupMapping', { id: mapping.data.id, role: 'admin' });
    expect(await workspaceRoles(pa.id)).toEqual({ [ws.id]: 'admin' });
    // The manual membership is not the mapping's: its role stays.
    expect(await workspaceRoles(pb.id)).toEqual({ [ws.id]: 'member' });

    const gone = await rest(env.server, `/scim/group-mappings/${mapping.data.id}?keep_members=false`, { method: 'DELETE' });
    expect(gone.status).toBe(200);
    expect(await workspaceRoles(pa.id)).toEqual({});
    expect(await workspaceRoles(pb.id)).toEqual({ [ws.id]: 'member' });

    // keep_members=true: the granted membership stays, as one made by hand, even when the group changes.
    const again = await ok(env.server, 'scim.createGroupMapping', { scim_group_id: group.id, workspace_id: ws.id, role: 'member' });
    expect(await workspaceRoles(pa.id)).toEqual({ [ws.id]: 'member' });
    expect((await rest(env.server, `/scim/group-mappings/${again.data.id}?keep_members=true`, { method: 'DELETE' })).status).toBe(200);
    await scim(env.server, token, `/Groups/${group.id}`, { method: 'PATCH', body: patchOp({ op: 'remove', path: `members[value eq "${a.id}"]` }) });
    expect(await workspaceRoles(pa.id)).toEqual({ [ws.id]: 'member' });
  });

  it('removing a member from a group, or deleting the group, removes the grant and disables their keys there', async () => {
    const token = await scimToken(env.server);
    const ws = await createWorkspace(env.server, `rm-${randomUUID().slice(0, 6)}`);
    const user = await createScimUser(env.server, token, email('rm'));
    const person = await personOf(user.userName);
    const group = await createScimGroup(env.server, token, 'Removal', [user.id]);
    await ok(env.server, 'scim.createGroupMapping', { scim_group_id: group.id, workspace_id: ws.id, role: 'member' });
    expect(await workspaceRoles(person.id)).toEqual({ [ws.id]: 'member' });
    const key = await keyOfPerson(env.server, env.server.organizationId, ws.id, person.id);
    const elsewhere = await keyOfPerson(env.server, env.server.organizationId, env.server.workspaceId, person.id);

    expect((await scim(env.server, token, `/Groups/${group.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await workspaceRoles(person.id)).toEqual({});
    expectEnvelope(await rest(env.server, '/key', { key }), 401);
    // A key in a workspace they keep (the default one) stays enabled.
    expect((await rest(env.server, '/key', { key: elsewhere })).status).toBe(200);
  });
});

describe('applyScimMappings (what a sync job will call)', () => {
  it('re-applies every mapping of the organization and counts the groups synced and those that no longer exist', async () => {
    const org = await createOrganization(env.server.db, 'Sync');
    const token = await scimToken(env.server, org.managementKey);
    const ws = await createWorkspace(env.server, 'sync-ws', org.managementKey);
    const user = await createScimUser(env.server, token, email('sync'));
    const person = await personOf(user.userName);
    const group = await createScimGroup(env.server, token, 'Sync', [user.id]);
    const gone = await createScimGroup(env.server, token, 'Gone', [user.id]);
    for (const id of [group.id, gone.id, randomUUID()]) {
      await ok(env.server, 'scim.createGroupMapping', { scim_group_id: id, workspace_id: ws.id, role: 'member' }, { key: org.managementKey });
    }
    expect((await scim(env.server, token, `/Groups/${gone.id}`, { method: 'DELETE' })).status).toBe(204);
    // A grant lost outside the directory's writes (e.g. removed by hand) comes back.
    await env.server.db.workspaceMember.deleteMany({ where: { user_id: person.id, workspace_id: ws.id } });
    const result = await applyScimMappings({ db: env.server.db, now: () => new Date() }, SERVER_ACTOR, { organizationId: org.organizationId });
    expect(result).toEqual({ synced_groups: 1, deleted_groups: 2, disabledKeyHashes: [] });
    expect(await workspaceRoles(person.id)).toEqual({ [ws.id]: 'member' });
  });
});

describe('isolation between organizations', () => {
  it("one organization's SCIM token never sees or touches another's users and groups", async () => {
    const mine = await scimToken(env.server);
    const theirs = await scimToken(env.server, env.other.managementKey);
    const user = await createScimUser(env.server, mine, email('iso'));
    const group = await createScimGroup(env.server, mine, 'Iso', [user.id]);

    expectScimError(await scim(env.server, theirs, `/Users/${user.id}`), 404);
    expectScimError(await scim(env.server, theirs, `/Groups/${group.id}`), 404);
    expectScimError(
      await scim(env.server, theirs, `/Users/${user.id}`, { method: 'PATCH', body: patchOp({ op: 'replace', path: 'active', value: false }) }),
      404,
    );
    expectScimError(await scim(env.server, theirs, `/Users/${user.id}`, { method: 'PUT', body: { schemas: [USER_SCHEMA], userName: user.userName } }), 404);
    expectScimError(await scim(env.server, theirs, `/Users/${user.id}`, { method: 'DELETE' }), 404);
    expectScimError(await scim(env.server, theirs, `/Groups/${group.id}`, { method: 'PATCH', body: patchOp({ op: 'remove', path: 'members' }) }), 404);
    expectScimError(await scim(env.server, theirs, `/Groups/${group.id}`, { method: 'DELETE' }), 404);
    const list = await scim(env.server, theirs, `/Users?filter=${encodeURIComponent(`userName eq "${user.userName}"`)}`);
    expect(list.body.totalResults).toBe(0);
    expect(JSON.stringify((await scim(env.server, theirs, '/Groups')).body)).not.toContain(group.id);
    // Their group cannot take my user as a member.
    expectScimError(
      await scim(env.server, theirs, '/Groups', { method: 'POST', body: { schemas: [GROUP_SCHEMA], displayName: 'x', members: [{ value: user.id }] } }),
      400,
      'invalidValue',
    );
    // The same person provisioned by both organizations: two Users, each its organization's.
    const twin = await createScimUser(env.server, theirs, user.userName);
    expect(twin.id).not.toBe(user.id);
    expect((await scim(env.server, mine, `/Users/${user.id}`)).body.active).toBe(true);
    expect((await scim(env.server, mine, `/Groups/${group.id}`)).body.members).toHaveLength(1);
  });
});

describe('the management-key invariant', () => {
  it('deactivating or deleting the holder of the last enabled management key is refused, and changes nothing', async () => {
    const org = await createOrganization(env.server.db, 'Invariant');
    const token = await scimToken(env.server, org.managementKey);
    const owner = await env.server.db.user.findUniqueOrThrow({ where: { id: org.userId } });
    const user = await createScimUser(env.server, token, owner.email);

    const refused = await scim(env.server, token, `/Users/${user.id}`, { method: 'PATCH', body: patchOp({ op: 'replace', value: { active: false } }) });
    expectScimError(refused, 400, 'mutability');
    expect(refused.body.detail).toMatch(/management key/);
    expectScimError(await scim(env.server, token, `/Users/${user.id}`, { method: 'DELETE' }), 400, 'mutability');
    expect((await scim(env.server, token, `/Users/${user.id}`)).body.active).toBe(true);
    expect((await rest(env.server, '/key', { key: org.managementKey })).status).toBe(200);

    // With a second management key held by someone else, the deactivation goes through.
    const admin = await createScimUser(env.server, token, email('admin2'));
    await keyOfPerson(env.server, org.organizationId, org.workspaceId, (await personOf(admin.userName)).id, true);
    const done = await scim(env.server, token, `/Users/${user.id}`, { method: 'PATCH', body: patchOp({ op: 'replace', value: { active: false } }) });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expectEnvelope(await rest(env.server, '/key', { key: org.managementKey }), 401);
  });
});

describe('concurrency', () => {
  it('two PATCHes of one group at once lose neither change', async () => {
    const token = await scimToken(env.server);
    const users = await Promise.all(Array.from({ length: 6 }, (_, i) => createScimUser(env.server, token, email(`c${i}`))));
    for (let round = 0; round < 3; round++) {
      const group = await createScimGroup(env.server, token, `Concurrent ${round}`);
      const [one, two] = [users[round * 2]!, users[round * 2 + 1]!];
      const answers = await Promise.all([
        scim(env.server, token, `/Groups/${group.id}`, { method: 'PATCH', body: patchOp({ op: 'add', path: 'members', value: [{ value: one.id }] }) }),
        scim(env.server, token, `/Groups/${group.id}`, { method: 'PATCH', body: patchOp({ op: 'add', path: 'members', value: [{ value: two.id }] }) }),
      ]);
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const members = (await scim(env.server, token, `/Groups/${group.id}`)).body.members.map((m: { value: string }) => m.value);
      expect(members.sort()).toEqual([one.id, two.id].sort());
    }
  });
});

describe('D14 GET /api/v1/scim/groups', () => {
  const Strict = ListScimGroupsOutputSchema.extend({ data: ScimGroupSchema.strict().array() }).strict();

  it('lists the groups, oldest first, with offset and limit; 404 without a SCIM directory', async () => {
    const org = await createOrganization(env.server.db, 'D14');
    expectEnvelope(await rest(env.server, '/scim/groups', { key: org.managementKey }), 404);
    const token = await scimToken(env.server, org.managementKey);
    const groups = [];
    for (const name of ['A', 'B', 'C']) groups.push(await createScimGroup(env.server, token, name));
    await scim(env.server, token, `/Groups/${groups[1]!.id}`, { method: 'PATCH', body: patchOp({ op: 'replace', path: 'externalId', value: 'idp-b' }) });

    const all = await rest(env.server, '/scim/groups', { key: org.managementKey });
    expect(all.status).toBe(200);
    const body = Strict.parse(all.body);
    expect(body.total_count).toBe(3);
    expect(body.data.map((g) => g.id)).toEqual(groups.map((g) => g.id));
    expect(body.data[1]).toMatchObject({ organization_id: org.organizationId, display_name: 'B', external_id: 'idp-b' });
    expect(body.data[0]!.external_id).toBeNull();
    expect(body.data[0]!.created_at).toMatch(ISO_MS);

    const page = Strict.parse((await rest(env.server, '/scim/groups?offset=1&limit=1', { key: org.managementKey })).body);
    expect(page).toMatchObject({ total_count: 3, data: [{ id: groups[1]!.id }] });
    expect(Strict.parse((await rest(env.server, '/scim/groups?offset=3&limit=50', { key: org.managementKey })).body)).toEqual({ data: [], total_count: 3 });
    // Only mappings: a directory with no groups yet.
    const mapped = await createOrganization(env.server.db, 'D14 mapped');
    await ok(
      env.server,
      'scim.createGroupMapping',
      { scim_group_id: randomUUID(), workspace_id: mapped.workspaceId, role: 'member' },
      { key: mapped.managementKey },
    );
    expect(Strict.parse((await rest(env.server, '/scim/groups', { key: mapped.managementKey })).body)).toEqual({ data: [], total_count: 0 });
    // Over tRPC, the same.
    expect((await ok(env.server, 'scim.listGroups', { limit: 2 }, { key: org.managementKey, query: true })).data).toHaveLength(2);
  });

  it('400 for a limit outside 1..100 or a bad offset; 401 without a key; 403 for a regular key', async () => {
    await ok(env.server, 'scim.createGroupMapping', { scim_group_id: randomUUID(), workspace_id: env.server.workspaceId, role: 'member' });
    for (const query of ['limit=0', 'limit=101', 'offset=-1', 'limit=x']) expectEnvelope(await rest(env.server, `/scim/groups?${query}`), 400);
    expectEnvelope(await rest(env.server, '/scim/groups', { key: null }), 401);
    expectEnvelope(await rest(env.server, '/scim/groups', { key: (await createRegularKey(env.server)).key }), 403);
    // Another organization's management key sees its own directory (none here): 404, nothing of this one.
    expectEnvelope(await rest(env.server, '/scim/groups', { key: env.other.managementKey }), 404);
  });
});
