import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScimGroupMappingOutputSchema, ScimGroupMappingSchema } from '@switchyard/schema';
import type { TestServer } from '../src/testing.js';
import { createOrganization, testServer, type OrgFixture } from './fixtures.js';
import { createRegularKey, createWorkspace, expectEnvelope, ok, rest, trpc } from './fixtures-admin.js';

const OutputSchema = ScimGroupMappingOutputSchema.extend({ data: ScimGroupMappingSchema.strict() }).strict();
const MS_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let server: TestServer;
let other: OrgFixture;
beforeAll(async () => {
  server = await testServer();
  other = await createOrganization(server.db);
});
afterAll(async () => {
  await server?.close();
});

const patch = (id: string, body: unknown, key?: string | null) => rest(server, `/scim/group-mappings/${id}`, { method: 'PATCH', json: body, key });

describe('PATCH /scim/group-mappings/{id}', () => {
  it('changes the role and updated_at, and returns the mapping with millisecond timestamps', async () => {
    const ws = await createWorkspace(server, 'scim-ws');
    const groupId = randomUUID();
    const created = (await ok(server, 'scim.createGroupMapping', { workspace_id: 'scim-ws', scim_group_id: groupId })).data;
    expect(created).toMatchObject({ workspace_id: ws.id, scim_group_id: groupId, role: 'member' });
    await server.db.scimGroupMapping.update({ where: { id: created.id }, data: { updated_at: new Date('2020-01-01T00:00:00Z') } });

    const { status, body } = await patch(created.id, { role: 'admin' });
    expect(status).toBe(200);
    const { data } = OutputSchema.parse(body);
    expect(data).toMatchObject({ id: created.id, organization_id: expect.stringMatching(/^org_/), workspace_id: ws.id, scim_group_id: groupId, role: 'admin' });
    expect(data.created_at).toBe(created.created_at);
    expect(data.created_at).toMatch(MS_TIMESTAMP);
    expect(data.updated_at).toMatch(MS_TIMESTAMP);
    expect(data.updated_at > '2020-01-01T00:00:00.000Z').toBe(true);
    // Back to member; an upper-case UUID names the same mapping.
    expect((await patch(created.id.toUpperCase(), { role: 'member' })).body.data.role).toBe('member');
  });

  it('400 for an invalid role or body, or a non-UUID id; 404 for unknown and foreign mappings', async () => {
    const mapping = (await ok(server, 'scim.createGroupMapping', { workspace_id: 'default', scim_group_id: randomUUID(), role: 'admin' })).data;
    for (const body of [{ role: 'owner' }, { role: 'Admin' }, {}, { role: 1 }, ['admin']]) expectEnvelope(await patch(mapping.id, body), 400);
    expectEnvelope(await rest(server, `/scim/group-mappings/${mapping.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{' }), 400);
    expectEnvelope(await patch('not-a-uuid', { role: 'admin' }), 400);
    expectEnvelope(await patch(randomUUID(), { role: 'admin' }), 404);
    const theirs = (await ok(server, 'scim.createGroupMapping', { workspace_id: 'default', scim_group_id: randomUUID() }, { key: other.managementKey })).data;
    expectEnvelope(await patch(theirs.id, { role: 'admin' }), 404);
    expect((await server.db.scimGroupMapping.findUniqueOrThrow({ where: { id: theirs.id } })).role).toBe('member');
    expect((await patch(theirs.id, { role: 'admin' }, other.managementKey)).status).toBe(200);
  });

  it('401 without a key; 403 for a regular key', async () => {
    const mapping = (await ok(server, 'scim.createGroupMapping', { workspace_id: 'default', scim_group_id: randomUUID() })).data;
    expectEnvelope(await patch(mapping.id, { role: 'admin' }, null), 401);
    const { key } = await createRegularKey(server);
    expectEnvelope(await patch(mapping.id, { role: 'admin' }, key), 403);
  });

  it('scim.createGroupMapping: one mapping per group and workspace; foreign workspaces are 404', async () => {
    const groupId = randomUUID();
    await ok(server, 'scim.createGroupMapping', { workspace_id: 'default', scim_group_id: groupId });
    expect((await trpc(server, 'scim.createGroupMapping', { workspace_id: 'default', scim_group_id: groupId })).status).toBe(400);
    expect((await trpc(server, 'scim.createGroupMapping', { workspace_id: other.workspaceId, scim_group_id: randomUUID() })).status).toBe(404);
    expect((await trpc(server, 'scim.createGroupMapping', { workspace_id: 'default', scim_group_id: 'nope' })).status).toBe(400);
  });
});
