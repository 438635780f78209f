import { beforeAll, describe, expect, it } from 'vitest';
import {
  AddWorkspaceMembersOutputSchema,
  ListOrganizationMembersOutputSchema,
  ListWorkspaceMembersOutputSchema,
  WorkspaceMemberSchema,
} from '@switchyard/schema';
import { useServer } from '../fixtures.js';
import { createMember, createRegularKey, createWorkspace, errorOf, expectEnvelope, expectPaginationEdges, rest } from '../fixtures-admin.js';

const ListSchema = ListWorkspaceMembersOutputSchema.extend({ data: WorkspaceMemberSchema.strict().array() }).strict();
const AddSchema = AddWorkspaceMembersOutputSchema.extend({ data: WorkspaceMemberSchema.strict().array() }).strict();

const env = useServer();

let admin: { id: string };
let member: { id: string };
let defaultId: string;
beforeAll(async () => {
  admin = await createMember(env.server, 'admin@example.com', 'org:admin');
  member = await createMember(env.server, 'member@example.com', 'org:member');
  defaultId = (await env.server.db.organization.findFirstOrThrow({ where: { id: { not: env.other.organizationId } } })).default_workspace_id!;
});

const add = (id: string, user_ids: unknown, key?: string | null) =>
  rest(env.server, `/workspaces/${id}/members/add`, { method: 'POST', json: { user_ids }, key });

describe('POST /workspaces/{id}/members/add', () => {
  it('adds members with their organization role, skips existing ones, counts duplicates once', async () => {
    const ws = await createWorkspace(env.server, 'team-a');
    const first = await add('team-a', [member.id, admin.id, member.id]);
    expect(first.status).toBe(200);
    const body = AddSchema.parse(first.body);
    expect(body.added_count).toBe(2);
    expect(body.data.map((m) => [m.user_id, m.role, m.workspace_id])).toEqual([
      [member.id, 'member', ws.id],
      [admin.id, 'admin', ws.id],
    ]);
    expect(body.data[0]!.id).toMatch(/^[0-9a-f-]{36}$/);

    // By UUID this time; both already members: nothing added.
    const again = await add(ws.id, [admin.id, member.id]);
    expect(again.body).toEqual({ added_count: 0, data: [] });
    expect(await env.server.db.workspaceMember.count({ where: { workspace_id: ws.id } })).toBe(2);
  });

  it('400 naming unknown and foreign user ids, and adds nothing', async () => {
    const ws = await createWorkspace(env.server, 'team-b');
    const answer = await add('team-b', [member.id, 'user_nobody', env.other.userId]);
    expectEnvelope(answer, 400);
    expect(errorOf(answer).metadata?.invalid_user_ids).toEqual(['user_nobody', env.other.userId]);
    expect(await env.server.db.workspaceMember.count({ where: { workspace_id: ws.id } })).toBe(0);
  });

  it('400 for 0 or 101 user ids, a missing body or wrong types', async () => {
    await createWorkspace(env.server, 'team-c');
    expectEnvelope(await add('team-c', []), 400);
    expectEnvelope(
      await add(
        'team-c',
        Array.from({ length: 101 }, (_, i) => `u${i}`),
      ),
      400,
    );
    expectEnvelope(await add('team-c', 'x'), 400);
    expectEnvelope(await rest(env.server, '/workspaces/team-c/members/add', { method: 'POST' }), 400);
    // 100 is allowed (then 400 only because the ids are unknown, naming all of them).
    const hundred = await add(
      'team-c',
      Array.from({ length: 100 }, (_, i) => `u${i}`),
    );
    expect(errorOf(hundred).metadata?.invalid_user_ids).toHaveLength(100);
  });

  it('two concurrent adds of the same users never duplicate a membership', async () => {
    const users: string[] = [];
    for (let i = 0; i < 8; i++) users.push((await createMember(env.server, `race${i}@example.com`)).id);
    for (let round = 0; round < 5; round++) {
      const ws = await createWorkspace(env.server, `race-${round}`);
      const answers = await Promise.all([add(ws.id, users), add(ws.slug, [...users].reverse()), add(ws.id, users.slice(2))]);
      for (const a of answers) expect(a.status).toBe(200);
      // Each membership was created by exactly one of the calls.
      expect(answers.reduce((n, a) => n + AddSchema.parse(a.body).added_count, 0)).toBe(users.length);
      const created = answers.flatMap((a) => AddSchema.parse(a.body).data.map((m) => m.user_id));
      expect(created.sort()).toEqual([...users].sort());
      expect(await env.server.db.workspaceMember.count({ where: { workspace_id: ws.id } })).toBe(users.length);
    }
  });

  it('on the default workspace adds nobody: every organization member is already in it', async () => {
    expect((await add('default', [member.id])).body).toEqual({ added_count: 0, data: [] });
    expectEnvelope(await add('default', ['user_nobody']), 400);
  });

  it("404 for an unknown workspace, a UUID-shaped unknown id and another organization's workspace", async () => {
    expectEnvelope(await add('no-such-workspace', [member.id]), 404);
    expectEnvelope(await add('00000000-0000-4000-8000-000000000000', [member.id]), 404);
    expectEnvelope(await add(env.other.workspaceId, [member.id]), 404);
    // The other organization's own user is fine there.
    expect((await add('default', [env.other.userId], env.other.managementKey)).status).toBe(200);
  });

  it('401 without a key, 403 for a regular key', async () => {
    expectEnvelope(await add('default', [member.id], null), 401);
    const { key } = await createRegularKey(env.server);
    expectEnvelope(await add('default', [member.id], key), 403);
  });
});

describe('GET /workspaces/{id}/members', () => {
  it('lists the default workspace as every organization member, with their organization role', async () => {
    const { status, body } = await rest(env.server, '/workspaces/default/members?limit=100&offset=0');
    expect(status).toBe(200);
    const list = ListSchema.parse(body);
    const orgMembers = ListOrganizationMembersOutputSchema.parse((await rest(env.server, '/organization/members?limit=100')).body);
    expect(list.total_count).toBe(orgMembers.total_count);
    expect(list.data.map((m) => m.user_id)).toEqual(orgMembers.data.map((m) => m.id));
    expect(list.data.every((m) => m.workspace_id === defaultId)).toBe(true);
    expect(list.data.find((m) => m.user_id === admin.id)!.role).toBe('admin');
    expect(list.data.find((m) => m.user_id === member.id)!.role).toBe('member');
    // A new organization member is in it at once; by UUID as by slug.
    const late = await createMember(env.server, 'late@example.com');
    const byId = ListSchema.parse((await rest(env.server, `/workspaces/${defaultId}/members?limit=100`)).body);
    expect(byId.total_count).toBe(list.total_count + 1);
    expect(byId.data.at(-1)!.user_id).toBe(late.id);
  });

  it('lists another workspace in the order members were added, and pages it at the edges', async () => {
    const ws = await createWorkspace(env.server, 'listed');
    await add('listed', [admin.id]);
    await add('listed', [member.id]);
    const { body } = await rest(env.server, `/workspaces/listed/members`);
    expect(ListSchema.parse(body).data.map((m) => m.user_id)).toEqual([admin.id, member.id]);
    expect(ListSchema.parse(body).data[0]!.workspace_id).toBe(ws.id);
    await expectPaginationEdges(env.server, '/workspaces/listed/members', 2);
    await expectPaginationEdges(
      env.server,
      '/workspaces/default/members',
      ListOrganizationMembersOutputSchema.parse((await rest(env.server, '/organization/members')).body).total_count,
    );
  });

  it('a regular key sees its own workspace only: 403 for another one', async () => {
    const ws = await createWorkspace(env.server, 'own');
    await add('own', [member.id]);
    const { key } = await createRegularKey(env.server, ws.id);
    const own = await rest(env.server, '/workspaces/own/members', { key });
    expect(own.status).toBe(200);
    expect(ListSchema.parse(own.body).data.map((m) => m.user_id)).toEqual([member.id]);
    expectEnvelope(await rest(env.server, '/workspaces/default/members', { key }), 403);
    expectEnvelope(await rest(env.server, '/workspaces/listed/members', { key }), 403);
    const { key: defaultKey } = await createRegularKey(env.server);
    expect((await rest(env.server, '/workspaces/default/members', { key: defaultKey })).status).toBe(200);
    expectEnvelope(await rest(env.server, '/workspaces/own/members', { key: defaultKey }), 403);
  });

  it("404 for unknown ids (UUID-shaped or not) and another organization's workspace; 401 without a key", async () => {
    expectEnvelope(await rest(env.server, '/workspaces/nope/members'), 404);
    expectEnvelope(await rest(env.server, '/workspaces/00000000-0000-4000-8000-000000000000/members'), 404);
    expectEnvelope(await rest(env.server, `/workspaces/${env.other.workspaceId}/members`), 404);
    expectEnvelope(await rest(env.server, '/workspaces/default%2Fx/members'), 404);
    // The other organization's "default" slug is its own workspace, never ours.
    const theirs = await rest(env.server, '/workspaces/default/members', { key: env.other.managementKey });
    expect(ListSchema.parse(theirs.body).data.map((m) => m.user_id)).toEqual([env.other.userId]);
    expectEnvelope(await rest(env.server, '/workspaces/default/members', { key: null }), 401);
  });
});
