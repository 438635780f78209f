import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GuardrailKeyAssignmentSchema,
  GuardrailMemberAssignmentSchema,
  GuardrailSchema,
  ListGuardrailKeyAssignmentsOutputSchema,
  ListGuardrailMemberAssignmentsOutputSchema,
  ListGuardrailsOutputSchema,
} from '@switchyard/schema';
import type { TestServer } from '../src/testing.js';
import { createOrganization, testServer, type OrgFixture } from './fixtures.js';
import {
  createMember,
  createRegularKey,
  createWorkspace,
  expectEnvelope,
  expectPaginationEdges,
  ok,
  rest,
  trpc,
} from './fixtures-admin.js';

const ListSchema = ListGuardrailsOutputSchema.extend({ data: GuardrailSchema.strict().array() }).strict();
const KeysSchema = ListGuardrailKeyAssignmentsOutputSchema.extend({ data: GuardrailKeyAssignmentSchema.strict().array() }).strict();
const MembersSchema = ListGuardrailMemberAssignmentsOutputSchema.extend({ data: GuardrailMemberAssignmentSchema.strict().array() }).strict();

let server: TestServer;
let other: OrgFixture;
let ownerId: string;
let defaultId: string;
beforeAll(async () => {
  server = await testServer();
  other = await createOrganization(server.db);
  const me = await server.db.organization.findFirstOrThrow({ where: { id: { not: other.organizationId } } });
  defaultId = me.default_workspace_id!;
  ownerId = (await server.db.organizationMember.findFirstOrThrow({ where: { organization_id: me.id } })).user_id;
});
afterAll(async () => {
  await server?.close();
});

const createGuardrail = (input: Record<string, unknown>, key?: string) => ok(server, 'guardrails.create', { name: 'g', ...input }, { key });

describe('GET /guardrails', () => {
  it('lists the default workspace without workspace_id, a given workspace with it, with every field', async () => {
    const full = await createGuardrail({
      name: 'strict',
      description: 'only approved models',
      allowed_models: ['openai/gpt-4o'],
      ignored_providers: ['cheapo'],
      enforce_zdr: true,
      limit_usd: 12.5,
      reset_interval: 'monthly',
      include_byok_in_budgets: true,
    });
    const plain = await createGuardrail({ name: 'plain' });
    const ws = await createWorkspace(server, 'guarded');
    const elsewhere = await createGuardrail({ name: 'elsewhere', workspace_id: 'guarded' });

    const { status, body } = await rest(server, '/guardrails?limit=50&offset=0');
    expect(status).toBe(200);
    const list = ListSchema.parse(body);
    expect(list.total_count).toBe(2);
    expect(list.data.map((g) => g.id)).toEqual([full.id, plain.id]);
    expect(list.data[0]).toMatchObject({
      workspace_id: defaultId,
      name: 'strict',
      description: 'only approved models',
      allowed_models: ['openai/gpt-4o'],
      ignored_models: null,
      allowed_providers: null,
      ignored_providers: ['cheapo'],
      enforce_zdr: true,
      limit_usd: 12.5,
      reset_interval: 'monthly',
      include_byok_in_budgets: true,
    });
    expect(list.data[1]).toMatchObject({ description: '', limit_usd: 0, reset_interval: null, enforce_zdr: false });

    const there = ListSchema.parse((await rest(server, `/guardrails?workspace_id=${ws.id}`)).body);
    expect(there.data.map((g) => g.id)).toEqual([elsewhere.id]);
    await expectPaginationEdges(server, '/guardrails', 2);
  });

  it('guardrails.update changes fields, lists included, and updated_at', async () => {
    const g = await createGuardrail({ name: 'to change', allowed_models: ['a/b'] });
    await server.db.guardrail.update({ where: { id: g.id }, data: { updated_at: new Date('2020-01-01T00:00:00Z') } });
    const updated = await ok(server, 'guardrails.update', { id: g.id, name: 'changed', allowed_models: null, limit_usd: 3 });
    expect(updated).toMatchObject({ name: 'changed', allowed_models: null, limit_usd: 3 });
    expect(updated.updated_at > '2020-01-01T00:00:00.000Z').toBe(true);
    expect((await trpc(server, 'guardrails.update', { id: g.id, reset_interval: 'yearly' })).status).toBe(400);
  });

  it('400 for a non-UUID workspace_id; an empty page for an unknown or foreign one (404 is not listed); 401 without a key', async () => {
    expectEnvelope(await rest(server, '/guardrails?workspace_id=guarded'), 400);
    const nothing = { status: 200, type: 'application/json', body: { data: [], total_count: 0 } };
    expect(await rest(server, '/guardrails?workspace_id=00000000-0000-4000-8000-000000000000')).toEqual(nothing);
    expect(await rest(server, `/guardrails?workspace_id=${other.workspaceId}`)).toEqual(nothing);
    await createGuardrail({ name: 'theirs' }, other.managementKey);
    expect((await rest(server, '/guardrails', { key: other.managementKey })).body.data.map((g: { name: string }) => g.name)).toEqual(['theirs']);
    expectEnvelope(await rest(server, '/guardrails', { key: null }), 401);
  });

  it('a regular key sees its own workspace only (another workspace is an empty page: 403 is not listed)', async () => {
    const ws = await createWorkspace(server, 'regular-ws');
    const mine = await createGuardrail({ name: 'mine', workspace_id: ws.id });
    const { key } = await createRegularKey(server, ws.id);
    const own = await rest(server, `/guardrails?workspace_id=${ws.id}`, { key });
    expect(own.body.data.map((g: { id: string }) => g.id)).toEqual([mine.id]);
    await createGuardrail({ name: 'in the default workspace' });
    for (const query of ['', `?workspace_id=${defaultId}`]) {
      const page = await rest(server, `/guardrails${query}`, { key });
      expect(page.status).toBe(200);
      expect(page.body).toEqual({ data: [], total_count: 0 });
    }
    expectEnvelope(await rest(server, `/guardrails/${(await createGuardrail({ name: 'default one' })).id}/assignments/keys`, { key }), 404);
    expect((await rest(server, `/guardrails/${mine.id}/assignments/keys`, { key })).status).toBe(200);
    expect((await trpc(server, 'guardrails.create', { name: 'x' }, { key })).status).toBe(403);
  });
});

describe('guardrail assignments', () => {
  it('assign keys in bulk: hash, name and masked label, assigned_by; skips existing; never the secret', async () => {
    const g = await createGuardrail({ name: 'keys' });
    const k1 = await createRegularKey(server);
    const k2 = await createRegularKey(server);
    const assigned = await ok(server, 'guardrails.assignKeys', { id: g.id, key_hashes: [k1.hash, k2.hash, k1.hash] });
    expect(assigned.assigned_count).toBe(2);
    expect(assigned.data.map((a: { key_hash: string }) => a.key_hash)).toEqual([k1.hash, k2.hash]);
    expect((await ok(server, 'guardrails.assignKeys', { id: g.id, key_hashes: [k2.hash] })).assigned_count).toBe(0);

    const { status, body } = await rest(server, `/guardrails/${g.id}/assignments/keys`);
    expect(status).toBe(200);
    const list = KeysSchema.parse(body);
    expect(list.total_count).toBe(2);
    // One call's assignments share a created_at; the list orders them by id, stably.
    expect(list.data.map((a) => a.key_hash).sort()).toEqual([k1.hash, k2.hash].sort());
    expect(list.data.find((a) => a.key_hash === k1.hash)).toEqual({
      id: expect.any(String),
      guardrail_id: g.id,
      key_hash: k1.hash,
      key_label: k1.label,
      key_name: k1.name,
      assigned_by: ownerId,
      created_at: expect.any(String),
    });
    expect(JSON.stringify(body)).not.toContain(k1.key);
    await expectPaginationEdges(server, `/guardrails/${g.id}/assignments/keys`, 2);

    expect(await ok(server, 'guardrails.unassignKeys', { id: g.id, key_hashes: [k1.hash, 'f'.repeat(64)] })).toEqual({ unassigned_count: 1 });
    expect((await rest(server, `/guardrails/${g.id}/assignments/keys`)).body.data.map((a: { key_hash: string }) => a.key_hash)).toEqual([k2.hash]);
    // A later call's assignment lists after the earlier ones.
    const k3 = await createRegularKey(server);
    await ok(server, 'guardrails.assignKeys', { id: g.id, key_hashes: [k3.hash] });
    expect((await rest(server, `/guardrails/${g.id}/assignments/keys`)).body.data.map((a: { key_hash: string }) => a.key_hash)).toEqual([k2.hash, k3.hash]);
  });

  it('assign members in bulk with organization_id and assigned_by; skips existing', async () => {
    const g = await createGuardrail({ name: 'members' });
    const a = await createMember(server, 'ga@example.com');
    const b = await createMember(server, 'gb@example.com');
    const assigned = await ok(server, 'guardrails.assignMembers', { id: g.id, user_ids: [b.id, a.id] });
    expect(assigned.assigned_count).toBe(2);
    expect((await ok(server, 'guardrails.assignMembers', { id: g.id, user_ids: [a.id] })).assigned_count).toBe(0);
    const list = MembersSchema.parse((await rest(server, `/guardrails/${g.id}/assignments/members`)).body);
    expect(list.data.map((m) => m.user_id).sort()).toEqual([a.id, b.id].sort());
    expect(list.data[0]).toMatchObject({ guardrail_id: g.id, assigned_by: ownerId });
    expect(list.data[0]!.organization_id).toMatch(/^org_/);
    await expectPaginationEdges(server, `/guardrails/${g.id}/assignments/members`, 2);
    expect(await ok(server, 'guardrails.unassignMembers', { id: g.id, user_ids: [a.id, b.id] })).toEqual({ unassigned_count: 2 });
    expect((await rest(server, `/guardrails/${g.id}/assignments/members`)).body).toEqual({ data: [], total_count: 0 });
  });

  it('400 naming unknown or foreign keys and members, assigning nothing', async () => {
    const g = await createGuardrail({ name: 'strictly mine' });
    const k = await createRegularKey(server);
    const theirKey = await createRegularKey(server, undefined, other.managementKey);
    const keys = await trpc(server, 'guardrails.assignKeys', { id: g.id, key_hashes: [k.hash, theirKey.hash, 'nope'] });
    expect(keys.status).toBe(400);
    expect(keys.error?.data.metadata?.invalid_key_hashes).toEqual([theirKey.hash, 'nope']);
    const members = await trpc(server, 'guardrails.assignMembers', { id: g.id, user_ids: [ownerId, other.userId] });
    expect(members.error?.data.metadata?.invalid_user_ids).toEqual([other.userId]);
    expect((await rest(server, `/guardrails/${g.id}/assignments/keys`)).body.total_count).toBe(0);
    expect((await rest(server, `/guardrails/${g.id}/assignments/members`)).body.total_count).toBe(0);
    expect((await trpc(server, 'guardrails.assignKeys', { id: g.id, key_hashes: [] })).status).toBe(400);
    expect((await trpc(server, 'guardrails.assignMembers', { id: g.id, user_ids: Array(101).fill('u') })).status).toBe(400);
  });

  it('concurrent assigns of the same keys never duplicate', async () => {
    const g = await createGuardrail({ name: 'race' });
    const hashes: string[] = [];
    for (let i = 0; i < 5; i++) hashes.push((await createRegularKey(server)).hash);
    const answers = await Promise.all([0, 1, 2].map(() => trpc(server, 'guardrails.assignKeys', { id: g.id, key_hashes: hashes })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.reduce((n, a) => n + a.data.assigned_count, 0)).toBe(5);
    expect(await server.db.guardrailKeyAssignment.count({ where: { guardrail_id: g.id } })).toBe(5);
  });

  it("404 for non-UUID, unknown and foreign guardrails (reads and writes); 401 without a key", async () => {
    const theirs = await createGuardrail({ name: 'foreign' }, other.managementKey);
    for (const id of [theirs.id, 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      expectEnvelope(await rest(server, `/guardrails/${id}/assignments/keys`), 404);
      expectEnvelope(await rest(server, `/guardrails/${id}/assignments/members`), 404);
    }
    expect((await trpc(server, 'guardrails.update', { id: theirs.id, name: 'mine' })).status).toBe(404);
    expect((await trpc(server, 'guardrails.assignMembers', { id: theirs.id, user_ids: [ownerId] })).status).toBe(404);
    expect((await trpc(server, 'guardrails.unassignMembers', { id: theirs.id, user_ids: [other.userId] })).status).toBe(404);
    expectEnvelope(await rest(server, `/guardrails/${theirs.id}/assignments/keys`, { key: null }), 401);
    expectEnvelope(await rest(server, `/guardrails/${theirs.id}/assignments/members`, { key: null }), 401);
  });
});
