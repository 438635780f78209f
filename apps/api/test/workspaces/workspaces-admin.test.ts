// Workspace administration over REST (admin-api.md A6–A11): POST /workspaces, GET /workspaces, GET,
// PATCH and DELETE /workspaces/{id} (UUID or slug), POST /workspaces/{id}/members/remove.
import {
  DeletedOutputSchema,
  ListWorkspaceMembersOutputSchema,
  ListWorkspacesOutputSchema,
  RemoveWorkspaceMembersOutputSchema,
  WorkspaceSchema,
} from '@switchyard/schema';
import { describe, expect, it } from 'vitest';
import { defaultGuardrailId } from '../../src/modules/guardrails/default-guardrail.js';
import { until, useServer } from '../fixtures.js';
import { createMember, createRegularKey, errorOf, expectEnvelope, expectPaginationEdges, rest } from '../fixtures-admin.js';
import { ok, trpc, trpcRaw } from '../fixtures-trpc.js';

const One = WorkspaceSchema.strict();
const Single = { parse: (body: unknown) => ({ data: One.parse((body as { data: unknown }).data) }) };
const List = ListWorkspacesOutputSchema.extend({ data: One.array() }).strict();

const env = useServer();

const create = (json: unknown, key?: string | null) => rest(env.server, '/workspaces', { method: 'POST', json, key });
async function created(slug: string, json: Record<string, unknown> = {}) {
  const res = await create({ name: slug, slug, ...json });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return Single.parse(res.body).data;
}

describe('POST /workspaces', () => {
  it('201 { data: Workspace } with every required field; defaults for what is not given', async () => {
    const res = await create({ name: 'Ops', slug: 'ops', description: 'on call' });
    expect(res.status).toBe(201);
    expect(res.type).toMatch(/^application\/json/);
    const { data } = Single.parse(res.body);
    expect(data).toEqual({
      id: expect.any(String),
      name: 'Ops',
      slug: 'ops',
      description: 'on call',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      created_by: expect.any(String),
      default_guardrail_id: defaultGuardrailId(data.id),
      default_text_model: null,
      default_image_model: null,
      default_provider_sort: null,
      io_logging_api_key_ids: null,
      io_logging_sampling_rate: 1,
      is_data_discount_logging_enabled: false,
      is_observability_broadcast_enabled: false,
      is_observability_io_logging_enabled: false,
      disabled_server_tools: null,
      include_byok_in_budgets: false,
      is_default: false,
    });
    // The default guardrail id is the workspace's own, stable and distinct from other workspaces'.
    expect(data.default_guardrail_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(defaultGuardrailId(env.server.workspaceId)).not.toBe(data.default_guardrail_id);
  });

  it('stores every setting of A6', async () => {
    const settings = {
      default_text_model: 'openai/gpt-4o',
      default_image_model: 'openai/gpt-image-1',
      default_provider_sort: 'latency',
      disabled_server_tools: ['openrouter:web_search', 'openrouter:bash'],
      io_logging_api_key_ids: [3, 5],
      io_logging_sampling_rate: 0.25,
      is_data_discount_logging_enabled: true,
      is_observability_broadcast_enabled: true,
      is_observability_io_logging_enabled: true,
    };
    const data = await created('configured', settings);
    expect(data).toMatchObject(settings);
    expect(Single.parse((await rest(env.server, '/workspaces/configured')).body).data).toEqual(data);
  });

  it('400 for a taken slug, a bad slug, a missing name, a sampling rate out of range, fractional key ids', async () => {
    await created('taken');
    const dup = await create({ name: 'again', slug: 'taken' });
    expectEnvelope(dup, 400);
    expect(errorOf(dup).metadata).toMatchObject({ reason: 'slug taken' });
    for (const slug of ['Ops', 'a b', '-x', 'x-', 'a_b', '123e4567-e89b-12d3-a456-426614174000', '']) {
      expectEnvelope(await create({ name: 'x', slug }), 400);
    }
    for (const json of [
      { slug: 'no-name' },
      { name: 'x', slug: 'rate', io_logging_sampling_rate: 0 },
      { name: 'x', slug: 'rate', io_logging_sampling_rate: 1.5 },
      { name: 'x', slug: 'ids', io_logging_api_key_ids: [1.5] },
      { name: 'x', slug: 'tools', disabled_server_tools: ['no-platform'] },
    ]) {
      expectEnvelope(await create(json), 400);
    }
  });

  it('401 without a key; 403 for a regular key', async () => {
    expectEnvelope(await create({ name: 'x', slug: 'x' }, null), 401);
    expectEnvelope(await create({ name: 'x', slug: 'x' }, (await createRegularKey(env.server)).key), 403);
  });
});

describe('GET /workspaces', () => {
  it("{ data, total_count }: the organization's workspaces, oldest first, the default one first; paginated", async () => {
    await created('listed');
    const res = await rest(env.server, '/workspaces?offset=0&limit=100');
    expect(res.status).toBe(200);
    const list = List.parse(res.body);
    expect(list.data[0]).toMatchObject({ id: env.server.workspaceId, slug: 'default', is_default: true });
    expect(list.data.filter((w) => w.is_default)).toHaveLength(1);
    expect(list.data.map((w) => w.id)).not.toContain(env.other.workspaceId);
    expect(list.total_count).toBe(list.data.length);
    await expectPaginationEdges(env.server, '/workspaces', list.total_count);
  });

  it('limit as a query string is coerced for REST only: over tRPC the string "2" is a 400', async () => {
    const res = await rest(env.server, '/workspaces?limit=2');
    expect(res.status).toBe(200);
    expect(List.parse(res.body).data.length).toBeLessThanOrEqual(2);
    const typed = await trpc(env.server, 'workspaces.list', { limit: 2 }, { query: true });
    expect(typed.status).toBe(200);
    const stringly = await trpcRaw(env.server, 'workspaces.list', { limit: '2' }, { query: true });
    expect(stringly.status).toBe(400);
    expect(stringly.data).toBeUndefined();
  });

  it('401 without a key; 403 for a regular key', async () => {
    expectEnvelope(await rest(env.server, '/workspaces', { key: null }), 401);
    expectEnvelope(await rest(env.server, '/workspaces', { key: (await createRegularKey(env.server)).key }), 403);
  });
});

describe('GET /workspaces/{id}', () => {
  it('200 { data } by UUID or slug', async () => {
    const ws = await created('by-ref');
    for (const ref of [ws.id, 'by-ref', ws.id.toUpperCase()]) {
      const res = await rest(env.server, `/workspaces/${ref}`);
      expect(res.status).toBe(200);
      expect(Single.parse(res.body).data).toEqual(ws);
    }
  });

  it("404 for unknown and another organization's; 401; 403 for a regular key", async () => {
    expectEnvelope(await rest(env.server, '/workspaces/nope'), 404);
    expectEnvelope(await rest(env.server, '/workspaces/00000000-0000-4000-8000-000000000000'), 404);
    expectEnvelope(await rest(env.server, `/workspaces/${env.other.workspaceId}`), 404);
    expectEnvelope(await rest(env.server, '/workspaces/default', { key: null }), 401);
    expectEnvelope(await rest(env.server, '/workspaces/default', { key: (await createRegularKey(env.server)).key }), 403);
  });
});

describe('PATCH /workspaces/{id}', () => {
  it('200 { data } with the fields given changed; an empty disabled_server_tools clears the list', async () => {
    const ws = await created('patched', { disabled_server_tools: ['openrouter:bash'] });
    const res = await rest(env.server, '/workspaces/patched', {
      method: 'PATCH',
      json: { name: 'Patched', slug: 'patched-2', description: null, io_logging_sampling_rate: 0.5, disabled_server_tools: [] },
    });
    expect(res.status).toBe(200);
    expect(Single.parse(res.body).data).toEqual({
      ...ws,
      name: 'Patched',
      slug: 'patched-2',
      description: null,
      io_logging_sampling_rate: 0.5,
      disabled_server_tools: null,
      updated_at: expect.any(String),
    });
    expect(Single.parse((await rest(env.server, `/workspaces/${ws.id}`, { method: 'PATCH', json: {} })).body).data.slug).toBe('patched-2');
  });

  it("400 for bad values or the default workspace's slug; 404 for another organization's; 401; 403", async () => {
    const patch = (ref: string, json: unknown, key?: string | null) => rest(env.server, `/workspaces/${ref}`, { method: 'PATCH', json, key });
    await created('patch-bad');
    await created('patch-other');
    expectEnvelope(await patch('patch-bad', { slug: 'patch-other' }), 400);
    expectEnvelope(await patch('patch-bad', { io_logging_sampling_rate: 2 }), 400);
    expectEnvelope(await patch('default', { slug: 'main' }), 400);
    expectEnvelope(await patch(env.other.workspaceId, { name: 'mine now' }), 404);
    expectEnvelope(await patch('patch-bad', { name: 'x' }, null), 401);
    expectEnvelope(await patch('patch-bad', { name: 'x' }, (await createRegularKey(env.server)).key), 403);
  });
});

describe('DELETE /workspaces/{id}', () => {
  it('200 { deleted: true }: budgets, guardrails and memberships go, the slug is free again, its rows follow, the spend stays', async () => {
    const ws = await created('doomed');
    const member = await createMember(env.server, 'doomed-member@example.com');
    await ok(env.server, 'workspaces.addMembers', { id: ws.id, user_ids: [member.id] });
    await ok(env.server, 'budgets.set', { workspace_ref: ws.id, interval: 'monthly', limit_usd: 10 });
    await ok(env.server, 'guardrails.create', { name: 'g', workspace_id: ws.id });
    const { hash } = await createRegularKey(env.server, ws.id);
    await rest(env.server, `/keys/${hash}`, { method: 'PATCH', json: { disabled: true } });

    const res = await rest(env.server, '/workspaces/doomed', { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(DeletedOutputSchema.parse(res.body)).toEqual({ deleted: true });

    expectEnvelope(await rest(env.server, `/workspaces/${ws.id}`), 404);
    expectEnvelope(await rest(env.server, '/workspaces/doomed'), 404);
    expectEnvelope(await rest(env.server, `/workspaces/${ws.id}`, { method: 'DELETE' }), 404);
    expectEnvelope(await rest(env.server, `/workspaces/${ws.id}/budgets`), 404);
    expect(List.parse((await rest(env.server, '/workspaces?limit=100')).body).data.map((w) => w.id)).not.toContain(ws.id);
    expect(await env.server.db.budget.count({ where: { workspace_id: ws.id } })).toBe(0);
    expect(await env.server.db.guardrail.count({ where: { workspace_id: ws.id } })).toBe(0);
    expect(await env.server.db.workspaceMember.count({ where: { workspace_id: ws.id } })).toBe(0);
    // Its (disabled) key is gone from every answer and can never be enabled again; its rows go with
    // the workspace's deletion job (workspace-deletion.test.ts), the organization's spend stays.
    expectEnvelope(await rest(env.server, `/keys/${hash}`, { method: 'PATCH', json: { disabled: false } }), 404);
    const usage = (await env.server.db.organization.findUniqueOrThrow({ where: { id: env.server.organizationId } })).total_usage.toString();
    await until(async () => (await env.server.db.workspace.count({ where: { id: ws.id } })) === 0, { what: "the workspace's deletion job" });
    expect(await env.server.db.apiKey.count({ where: { workspace_id: ws.id } })).toBe(0);
    expect((await env.server.db.organization.findUniqueOrThrow({ where: { id: env.server.organizationId } })).total_usage.toString()).toBe(usage);
    // The slug can be used again.
    expect((await created('doomed')).id).not.toBe(ws.id);
  });

  it('400 while the workspace has active keys; 400 for the default workspace, confirmed or not', async () => {
    const ws = await created('busy');
    const { key, hash } = await createRegularKey(env.server, ws.id);
    const refused = await rest(env.server, '/workspaces/busy', { method: 'DELETE' });
    expectEnvelope(refused, 400);
    expect(errorOf(refused).metadata).toMatchObject({ reason: 'workspace has active keys', active_keys: 1 });
    expect((await rest(env.server, '/key', { key })).status).toBe(200);
    await rest(env.server, `/keys/${hash}`, { method: 'DELETE' });
    expect((await rest(env.server, '/workspaces/busy', { method: 'DELETE' })).status).toBe(200);

    expectEnvelope(await rest(env.server, '/workspaces/default', { method: 'DELETE' }), 400);
    expectEnvelope(await rest(env.server, '/workspaces/default?confirm_default_workspace_deletion=true', { method: 'DELETE' }), 400);
    expectEnvelope(await rest(env.server, `/workspaces/${env.server.workspaceId}?confirm_default_workspace_deletion=maybe`, { method: 'DELETE' }), 400);
    expect((await rest(env.server, '/workspaces/default')).status).toBe(200);
  });

  it("404 for unknown and another organization's; 401; 403 for a regular key", async () => {
    await created('kept');
    expectEnvelope(await rest(env.server, '/workspaces/nope', { method: 'DELETE' }), 404);
    expectEnvelope(await rest(env.server, `/workspaces/${env.other.workspaceId}`, { method: 'DELETE' }), 404);
    expectEnvelope(await rest(env.server, '/workspaces/kept', { method: 'DELETE', key: null }), 401);
    expectEnvelope(await rest(env.server, '/workspaces/kept', { method: 'DELETE', key: (await createRegularKey(env.server)).key }), 403);
    expect((await rest(env.server, '/workspaces/kept')).status).toBe(200);
  });
});

describe('POST /workspaces/{id}/members/remove', () => {
  const remove = (ref: string, json: unknown, key?: string | null) => rest(env.server, `/workspaces/${ref}/members/remove`, { method: 'POST', json, key });

  it('200 { removed_count } (bare): members go, non-members count for nothing', async () => {
    const ws = await created('crew');
    const a = await createMember(env.server, 'crew-a@example.com');
    const b = await createMember(env.server, 'crew-b@example.com');
    await ok(env.server, 'workspaces.addMembers', { id: ws.id, user_ids: [a.id, b.id] });
    const res = await remove('crew', { user_ids: [a.id, 'not-a-member', a.id] });
    expect(res.status).toBe(200);
    expect(RemoveWorkspaceMembersOutputSchema.strict().parse(res.body)).toEqual({ removed_count: 1 });
    const members = ListWorkspaceMembersOutputSchema.parse((await rest(env.server, `/workspaces/${ws.id}/members`)).body).data.map((m) => m.user_id);
    expect(members).toEqual([b.id]);
    expect((await remove(ws.id, { user_ids: [a.id] })).body).toEqual({ removed_count: 0 });
  });

  it('400 for a member with active keys in the workspace (nothing removed), the default workspace, an empty list', async () => {
    const ws = await created('holders');
    const holder = await createMember(env.server, 'holder@example.com');
    const free = await createMember(env.server, 'free@example.com');
    await ok(env.server, 'workspaces.addMembers', { id: ws.id, user_ids: [holder.id, free.id] });
    await ok(env.server, 'keys.create', { name: 'held', workspace_id: ws.id, creator_user_id: holder.id });
    const refused = await remove('holders', { user_ids: [holder.id, free.id] });
    expectEnvelope(refused, 400);
    expect(errorOf(refused).metadata).toMatchObject({ user_ids_with_active_keys: [holder.id] });
    expect(ListWorkspaceMembersOutputSchema.parse((await rest(env.server, `/workspaces/${ws.id}/members`)).body).total_count).toBe(2);
    expectEnvelope(await remove('default', { user_ids: [free.id] }), 400);
    expectEnvelope(await remove('holders', { user_ids: [] }), 400);
    expectEnvelope(await remove('holders', {}), 400);
  });

  it("404 for unknown and another organization's workspace; 401; 403 for a regular key", async () => {
    await created('crew-2');
    expectEnvelope(await remove('nope', { user_ids: ['x'] }), 404);
    expectEnvelope(await remove(env.other.workspaceId, { user_ids: [env.other.userId] }), 404);
    expectEnvelope(await remove('crew-2', { user_ids: ['x'] }, null), 401);
    expectEnvelope(await remove('crew-2', { user_ids: ['x'] }, (await createRegularKey(env.server)).key), 403);
  });
});
