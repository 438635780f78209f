import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ListScimGroupMappingsOutputSchema, ScimGroupMappingOutputSchema, ScimGroupMappingSchema } from '@switchyard/schema';
import { testServer, useServer } from '../fixtures.js';
import { createRegularKey, createWorkspace, errorOf, expectEnvelope, expectPaginationEdges, rest } from '../fixtures-admin.js';
import { ok } from '../fixtures-trpc.js';

const OutputSchema = ScimGroupMappingOutputSchema.extend({ data: ScimGroupMappingSchema.strict() }).strict();
const MS_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const env = useServer();

const ListSchema = ListScimGroupMappingsOutputSchema.extend({ data: ScimGroupMappingSchema.strict().array() }).strict();

const patch = (id: string, body: unknown, key?: string | null) => rest(env.server, `/scim/group-mappings/${id}`, { method: 'PATCH', json: body, key });
const post = (body: unknown, key?: string | null) => rest(env.server, '/scim/group-mappings', { method: 'POST', json: body, key });

/** POST /scim/group-mappings: 201 and { data: mapping }. */
async function createMapping(body: Record<string, unknown>, key?: string) {
  const answer = await post({ role: 'member', ...body }, key);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return OutputSchema.parse(answer.body).data;
}

describe('PATCH /scim/group-mappings/{id}', () => {
  it('changes the role and updated_at, and returns the mapping with millisecond timestamps', async () => {
    const ws = await createWorkspace(env.server, 'scim-ws');
    const groupId = randomUUID();
    const created = await createMapping({ workspace_id: 'scim-ws', scim_group_id: groupId });
    expect(created).toMatchObject({ workspace_id: ws.id, scim_group_id: groupId, role: 'member' });
    await env.server.db.scimGroupMapping.update({ where: { id: created.id }, data: { updated_at: new Date('2020-01-01T00:00:00Z') } });

    const { status, body } = await patch(created.id, { role: 'admin' });
    expect(status).toBe(200);
    const { data } = OutputSchema.parse(body);
    expect(data).toMatchObject({ id: created.id, organization_id: expect.stringMatching(/^org_/), workspace_id: ws.id, scim_group_id: groupId, role: 'admin' });
    expect(data.created_at).toBe(created.created_at);
    expect(data.created_at).toMatch(MS_TIMESTAMP);
    expect(data.updated_at).toMatch(MS_TIMESTAMP);
    expect(data.updated_at > '2020-01-01T00:00:00.000Z').toBe(true);
    // Back to member; an upper-case UUID names the same mapping.
    expect(OutputSchema.parse((await patch(created.id.toUpperCase(), { role: 'member' })).body).data.role).toBe('member');
  });

  it('400 for an invalid role or body, or a non-UUID id; 404 for unknown and foreign mappings', async () => {
    const mapping = await createMapping({ workspace_id: 'default', scim_group_id: randomUUID(), role: 'admin' });
    for (const body of [{ role: 'owner' }, { role: 'Admin' }, {}, { role: 1 }, ['admin']]) expectEnvelope(await patch(mapping.id, body), 400);
    expectEnvelope(
      await rest(env.server, `/scim/group-mappings/${mapping.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{' }),
      400,
    );
    expectEnvelope(await patch('not-a-uuid', { role: 'admin' }), 400);
    expectEnvelope(await patch(randomUUID(), { role: 'admin' }), 404);
    const theirs = await createMapping({ workspace_id: 'default', scim_group_id: randomUUID() }, env.other.managementKey);
    expectEnvelope(await patch(theirs.id, { role: 'admin' }), 404);
    expect((await env.server.db.scimGroupMapping.findUniqueOrThrow({ where: { id: theirs.id } })).role).toBe('member');
    expect((await patch(theirs.id, { role: 'admin' }, env.other.managementKey)).status).toBe(200);
  });

  it('401 without a key; 403 for a regular key', async () => {
    const mapping = await createMapping({ workspace_id: 'default', scim_group_id: randomUUID() });
    expectEnvelope(await patch(mapping.id, { role: 'admin' }, null), 401);
    const { key } = await createRegularKey(env.server);
    expectEnvelope(await patch(mapping.id, { role: 'admin' }, key), 403);
  });
});

describe('POST /scim/group-mappings', () => {
  it('201 with the mapping; the same mapping again succeeds; another role is 409', async () => {
    const ws = await createWorkspace(env.server, 'scim-create');
    const groupId = randomUUID();
    const created = await createMapping({ workspace_id: ws.id, scim_group_id: groupId, role: 'admin' });
    expect(created).toMatchObject({ workspace_id: ws.id, scim_group_id: groupId, role: 'admin', organization_id: expect.stringMatching(/^org_/) });
    expect(created.created_at).toMatch(MS_TIMESTAMP);
    // Again, by slug and upper-case group id: the same mapping.
    expect(await createMapping({ workspace_id: 'scim-create', scim_group_id: groupId.toUpperCase(), role: 'admin' })).toEqual(created);
    const conflict = await post({ workspace_id: ws.id, scim_group_id: groupId, role: 'member' });
    expectEnvelope(conflict, 409);
    expect(errorOf(conflict).metadata).toMatchObject({ mapping_id: created.id, role: 'admin' });
    // The same group in another workspace is another mapping.
    expect((await createMapping({ workspace_id: 'default', scim_group_id: groupId })).id).not.toBe(created.id);
    // Concurrent creates of one pair make one mapping.
    const raced = randomUUID();
    const answers = await Promise.all([0, 1, 2].map(() => post({ workspace_id: ws.id, scim_group_id: raced, role: 'member' })));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    expect(new Set(answers.map((a) => OutputSchema.parse(a.body).data.id)).size).toBe(1);
  });

  it('400 for a missing or bad field; 404 for an unknown or foreign workspace; 401; 403 for a regular key', async () => {
    const good = { workspace_id: 'default', scim_group_id: randomUUID(), role: 'member' };
    for (const body of [
      {},
      { ...good, role: undefined },
      { ...good, role: 'owner' },
      { ...good, scim_group_id: 'nope' },
      { ...good, workspace_id: undefined },
    ]) {
      expectEnvelope(await post(body), 400);
    }
    expectEnvelope(await post({ ...good, workspace_id: env.other.workspaceId }), 404);
    expectEnvelope(await post({ ...good, workspace_id: 'no-such-workspace' }), 404);
    expectEnvelope(await post(good, null), 401);
    expectEnvelope(await post(good, (await createRegularKey(env.server)).key), 403);
  });
});

describe('GET /scim/group-mappings and /scim/group-mappings/{id}', () => {
  it("lists the organization's mappings across workspaces, oldest first, paginated", async () => {
    const fresh = await testServer();
    try {
      const ws = await createWorkspace(fresh, 'scim-list');
      const mk = async (workspace_id: string, role: string) =>
        OutputSchema.parse((await rest(fresh, '/scim/group-mappings', { method: 'POST', json: { workspace_id, scim_group_id: randomUUID(), role } })).body)
          .data;
      const first = await mk(ws.id, 'member');
      const second = await mk('default', 'admin');
      const third = await mk(ws.id, 'admin');
      await createMapping({ workspace_id: 'default', scim_group_id: randomUUID() }, env.other.managementKey);
      const { status, body } = await rest(fresh, '/scim/group-mappings?offset=0&limit=50');
      expect(status).toBe(200);
      expect(ListSchema.parse(body)).toEqual({ data: [first, second, third], total_count: 3 });
      await expectPaginationEdges(fresh, '/scim/group-mappings', 3);
      const one = await rest(fresh, `/scim/group-mappings/${second.id}`);
      expect(one.status).toBe(200);
      expect(OutputSchema.parse(one.body)).toEqual({ data: second });
    } finally {
      await fresh.close();
    }
  });

  it('404 for unknown, non-UUID and foreign ids; 401; 403 for a regular key', async () => {
    const theirs = await createMapping({ workspace_id: 'default', scim_group_id: randomUUID() }, env.other.managementKey);
    for (const id of [theirs.id, 'not-a-uuid', randomUUID()]) expectEnvelope(await rest(env.server, `/scim/group-mappings/${id}`), 404);
    const mine = await createMapping({ workspace_id: 'default', scim_group_id: randomUUID() });
    const { key } = await createRegularKey(env.server);
    for (const path of ['/scim/group-mappings', `/scim/group-mappings/${mine.id}`]) {
      expectEnvelope(await rest(env.server, path, { key: null }), 401);
      expectEnvelope(await rest(env.server, path, { key }), 403);
    }
  });
});

describe('DELETE /scim/group-mappings/{id}', () => {
  const del = (id: string, query: string, key?: string | null) => rest(env.server, `/scim/group-mappings/${id}${query}`, { method: 'DELETE', key });

  it('deletes with keep_members=true or false; the workspace keeps its members', async () => {
    const ws = await createWorkspace(env.server, 'scim-delete');
    const member = await ok(env.server, 'organization.createMember', { email: 'scim-kept@example.com' });
    await ok(env.server, 'workspaces.addMembers', { id: ws.id, user_ids: [member.id] });
    for (const keep of ['true', 'false']) {
      const mapping = await createMapping({ workspace_id: ws.id, scim_group_id: randomUUID() });
      const answer = await del(mapping.id, `?keep_members=${keep}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ deleted: true });
      expectEnvelope(await rest(env.server, `/scim/group-mappings/${mapping.id}`), 404);
      expectEnvelope(await del(mapping.id, `?keep_members=${keep}`), 404);
    }
    // No member was granted by a mapping (there is no SCIM provisioning here), so none was removed.
    expect(await env.server.db.workspaceMember.count({ where: { workspace_id: ws.id, user_id: member.id } })).toBe(1);
  });

  it('400 without keep_members or with another value; 404 for foreign ids; 401; 403 for a regular key', async () => {
    const mapping = await createMapping({ workspace_id: 'default', scim_group_id: randomUUID() });
    for (const query of ['', '?keep_members=', '?keep_members=yes', '?keep_members=1']) expectEnvelope(await del(mapping.id, query), 400);
    const theirs = await createMapping({ workspace_id: 'default', scim_group_id: randomUUID() }, env.other.managementKey);
    expectEnvelope(await del(theirs.id, '?keep_members=true'), 404);
    expectEnvelope(await del(mapping.id, '?keep_members=true', null), 401);
    expectEnvelope(await del(mapping.id, '?keep_members=true', (await createRegularKey(env.server)).key), 403);
    expect((await rest(env.server, `/scim/group-mappings/${mapping.id}`)).status).toBe(200);
  });
});

describe('timestamps', () => {
  it('come from the server clock: created_at on POST, updated_at on PATCH', async () => {
    try {
      env.server.setNow(new Date('2026-03-04T05:06:07.089Z'));
      const created = await createMapping({ workspace_id: 'default', scim_group_id: randomUUID() });
      expect(created).toMatchObject({ created_at: '2026-03-04T05:06:07.089Z', updated_at: '2026-03-04T05:06:07.089Z' });
      env.server.setNow(new Date('2026-03-05T00:00:00.000Z'));
      const { status, body } = await patch(created.id, { role: 'admin' });
      expect(status).toBe(200);
      expect(OutputSchema.parse(body).data).toMatchObject({ created_at: '2026-03-04T05:06:07.089Z', updated_at: '2026-03-05T00:00:00.000Z' });
    } finally {
      env.server.setNow(null);
    }
  });
});
