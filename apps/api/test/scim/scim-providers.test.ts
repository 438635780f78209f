// What the big identity providers really send to /scim/v2, written from their documented request
// examples: Okta's "SCIM 2.0 protocol reference" (developer.okta.com) and Microsoft Entra ID's
// "Develop and plan provisioning for a SCIM endpoint" (learn.microsoft.com), in their order.
// Values are theirs where they are literals; ids are the ones this server gave.
import { describe, expect, it } from 'vitest';
import { useServer } from '../fixtures.js';
import { createWorkspace } from '../fixtures-admin.js';
import { ok } from '../fixtures-trpc.js';
import { expectScimError, GROUP_SCHEMA, LIST_SCHEMA, PATCH_SCHEMA, scim, scimToken, USER_SCHEMA } from '../fixtures-scim.js';

const env = useServer();

async function rolesOf(email: string) {
  const user = await env.server.db.user.findUnique({ where: { email: email.toLowerCase() } });
  if (!user) return {};
  const rows = await env.server.db.workspaceMember.findMany({ where: { user_id: user.id } });
  return Object.fromEntries(rows.map((r) => [r.workspace_id, r.role]));
}

describe('Okta', () => {
  it('provisions, updates, deactivates a user and pushes a group', async () => {
    const token = await scimToken(env.server);
    const ws = await createWorkspace(env.server, 'okta-ws');

    // Okta first checks that the user does not exist.
    const lookup = await scim(env.server, token, `/Users?filter=${encodeURIComponent('userName eq "test.user@okta.local"')}&startIndex=1&count=100`);
    expect(lookup.status).toBe(200);
    expect(lookup.body).toEqual({ schemas: [LIST_SCHEMA], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });

    const created = await scim(env.server, token, '/Users', {
      method: 'POST',
      body: {
        schemas: [USER_SCHEMA],
        userName: 'test.user@okta.local',
        name: { givenName: 'Test', familyName: 'User' },
        emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
        displayName: 'Test User',
        locale: 'en-US',
        externalId: '00ujl29u0le5T6Aj10h7',
        groups: [],
        password: '1mz050nq',
        active: true,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const user = created.body;
    expect(user).toMatchObject({ userName: 'test.user@okta.local', externalId: '00ujl29u0le5T6Aj10h7', active: true, displayName: 'Test User' });
    expect(JSON.stringify(user)).not.toContain('1mz050nq');

    const read = await scim(env.server, token, `/Users/${user.id}`);
    expect(read.body).toMatchObject({ id: user.id, userName: 'test.user@okta.local' });

    // Profile update: PUT of the whole user, id and meta included.
    const put = await scim(env.server, token, `/Users/${user.id}`, {
      method: 'PUT',
      body: {
        schemas: [USER_SCHEMA],
        id: user.id,
        userName: 'test.user@okta.local',
        name: { givenName: 'Another', familyName: 'User' },
        emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
        displayName: 'Another User',
        locale: 'en-US',
        externalId: '00ujl29u0le5T6Aj10h7',
        groups: [],
        active: true,
        meta: { resourceType: 'User' },
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ name: { givenName: 'Another', familyName: 'User' }, displayName: 'Another User' });

    // Group push.
    const groupCreated = await scim(env.server, token, '/Groups', {
      method: 'POST',
      body: { schemas: [GROUP_SCHEMA], displayName: 'Test SCIMv2', members: [] },
    });
    expect(groupCreated.status, JSON.stringify(groupCreated.body)).toBe(201);
    const group = groupCreated.body;
    await ok(env.server, 'scim.createGroupMapping', { scim_group_id: group.id, workspace_id: ws.id, role: 'member' });

    const renamed = await scim(env.server, token, `/Groups/${group.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value: { id: group.id, displayName: 'Test SCIMv2 Updated' } }] },
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.displayName).toBe('Test SCIMv2 Updated');

    const added = await scim(env.server, token, `/Groups/${group.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'add', path: 'members', value: [{ value: user.id, display: 'test.user@okta.local' }] }] },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(await rolesOf('test.user@okta.local')).toEqual({ [ws.id]: 'member' });

    const found = await scim(env.server, token, `/Groups?filter=${encodeURIComponent('displayName eq "Test SCIMv2 Updated"')}&startIndex=1&count=100`);
    expect(found.body).toMatchObject({ totalResults: 1, Resources: [{ id: group.id, members: [{ value: user.id }] }] });

    const removed = await scim(env.server, token, `/Groups/${group.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'remove', path: `members[value eq "${user.id}"]` }] },
    });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.members ?? []).toEqual([]);
    expect(await rolesOf('test.user@okta.local')).toEqual({});

    // Group membership replaced by PUT.
    const replaced = await scim(env.server, token, `/Groups/${group.id}`, {
      method: 'PUT',
      body: { schemas: [GROUP_SCHEMA], id: group.id, displayName: 'Test SCIMv2 Updated', members: [{ value: user.id, display: 'test.user@okta.local' }] },
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(await rolesOf('test.user@okta.local')).toEqual({ [ws.id]: 'member' });

    // Deactivation.
    const deactivated = await scim(env.server, token, `/Users/${user.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value: { active: false } }] },
    });
    expect(deactivated.status, JSON.stringify(deactivated.body)).toBe(200);
    expect(deactivated.body.active).toBe(false);
    expect(await rolesOf('test.user@okta.local')).toEqual({});

    expect((await scim(env.server, token, `/Groups/${group.id}`, { method: 'DELETE' })).status).toBe(204);
    expectScimError(await scim(env.server, token, `/Groups/${group.id}`), 404);
  });
});

describe('Microsoft Entra ID', () => {
  const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

  it('creates, finds, updates (multi- and single-valued), disables and deletes a user', async () => {
    const token = await scimToken(env.server);
    const created = await scim(env.server, token, '/Users', {
      method: 'POST',
      body: {
        schemas: [USER_SCHEMA, ENTERPRISE],
        externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
        userName: 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1',
        active: true,
        emails: [{ primary: true, type: 'work', value: 'Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com' }],
        meta: { resourceType: 'User' },
        name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
        roles: [],
        [ENTERPRISE]: { employeeNumber: '701984', department: 'Tour Operations', manager: { value: 'some-manager-id' } },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const user = created.body;
    // userName is not an e-mail here: the person is the primary work e-mail.
    expect(user).toMatchObject({
      userName: 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1',
      emails: [{ value: 'test_user_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com' }],
    });

    const found = await scim(env.server, token, `/Users?filter=${encodeURIComponent('userName eq "Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1"')}`);
    expect(found.body).toMatchObject({ totalResults: 1, Resources: [{ id: user.id }] });
    const none = await scim(env.server, token, `/Users?filter=${encodeURIComponent('userName eq "non-existent user"')}`);
    expect(none.body).toEqual({ schemas: [LIST_SCHEMA], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });

    // Update [multi-valued properties]: the work e-mail and the family name.
    const multi = await scim(env.server, token, `/Users/${user.id}`, {
      method: 'PATCH',
      body: {
        schemas: [PATCH_SCHEMA],
        Operations: [
          { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
          { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
        ],
      },
    });
    expect(multi.status, JSON.stringify(multi.body)).toBe(200);
    expect(multi.body).toMatchObject({ name: { familyName: 'updatedFamilyName' }, emails: [{ value: 'updatedemail@microsoft.com' }] });

    // Update [single-valued properties]: the userName.
    const single = await scim(env.server, token, `/Users/${user.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'Replace', path: 'userName', value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com' }] },
    });
    expect(single.status, JSON.stringify(single.body)).toBe(200);
    expect(single.body.userName).toBe('5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com');
    expect(single.body.emails).toEqual([expect.objectContaining({ value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com' })]);

    // The manager through the enterprise extension: accepted, not stored.
    const manager = await scim(env.server, token, `/Users/${user.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'Add', path: `${ENTERPRISE}:manager`, value: 'some-manager-id' }] },
    });
    expect(manager.status, JSON.stringify(manager.body)).toBe(200);

    // Disable user: the boolean as Entra sends it, a string.
    const disabled = await scim(env.server, token, `/Users/${user.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] },
    });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    expect(disabled.body.active).toBe(false);
    const enabled = await scim(env.server, token, `/Users/${user.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'Replace', value: { active: 'True' } }] },
    });
    expect(enabled.body.active).toBe(true);

    expect((await scim(env.server, token, `/Users/${user.id}`, { method: 'DELETE' })).status).toBe(204);
    expectScimError(await scim(env.server, token, `/Users/${user.id}`), 404);
  });

  it('creates a group, finds it without members, renames it, adds and removes members, deletes it', async () => {
    const token = await scimToken(env.server);
    const ws = await createWorkspace(env.server, 'entra-ws');
    const member = (
      await scim(env.server, token, '/Users', {
        method: 'POST',
        body: {
          schemas: [USER_SCHEMA],
          userName: 'entra.member@testuser.com',
          active: true,
          emails: [{ primary: true, type: 'work', value: 'entra.member@testuser.com' }],
        },
      })
    ).body;

    const created = await scim(env.server, token, '/Groups', {
      method: 'POST',
      body: {
        schemas: [GROUP_SCHEMA, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'],
        externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
        displayName: 'displayName',
        meta: { resourceType: 'Group' },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const group = created.body;
    expect(group).toMatchObject({ externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159', displayName: 'displayName', members: [] });
    await ok(env.server, 'scim.createGroupMapping', { scim_group_id: group.id, workspace_id: ws.id, role: 'admin' });

    const byId = await scim(env.server, token, `/Groups/${group.id}?excludedAttributes=members`);
    expect(byId.body).toMatchObject({ id: group.id, displayName: 'displayName' });
    expect(byId.body.members).toBeUndefined();
    const byName = await scim(env.server, token, `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "displayName"')}`);
    expect(byName.body).toMatchObject({ totalResults: 1, Resources: [{ id: group.id }] });

    const renamed = await scim(env.server, token, `/Groups/${group.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'Replace', path: 'displayName', value: '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName' }] },
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.displayName).toBe('1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName');

    const added = await scim(env.server, token, `/Groups/${group.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: member.id }] }] },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(await rolesOf('entra.member@testuser.com')).toEqual({ [ws.id]: 'admin' });

    const removed = await scim(env.server, token, `/Groups/${group.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: member.id }] }] },
    });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.members ?? []).toEqual([]);
    expect(await rolesOf('entra.member@testuser.com')).toEqual({});

    expect((await scim(env.server, token, `/Groups/${group.id}`, { method: 'DELETE' })).status).toBe(204);
  });
});
