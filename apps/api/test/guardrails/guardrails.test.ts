import { beforeAll, describe, expect, it } from 'vitest';
import {
  GuardrailKeyAssignmentSchema,
  GuardrailMemberAssignmentSchema,
  GuardrailOutputSchema,
  GuardrailSchema,
  ListGuardrailKeyAssignmentsOutputSchema,
  ListGuardrailMemberAssignmentsOutputSchema,
  ListGuardrailsOutputSchema,
} from '@switchyard/schema';
import { testServer, useServer } from '../fixtures.js';
import { createMember, createRegularKey, createWorkspace, errorOf, expectEnvelope, expectPaginationEdges, rest } from '../fixtures-admin.js';
import { ok, trpc } from '../fixtures-trpc.js';

const ListSchema = ListGuardrailsOutputSchema.extend({ data: GuardrailSchema.strict().array() }).strict();
const KeysSchema = ListGuardrailKeyAssignmentsOutputSchema.extend({ data: GuardrailKeyAssignmentSchema.strict().array() }).strict();
const MembersSchema = ListGuardrailMemberAssignmentsOutputSchema.extend({ data: GuardrailMemberAssignmentSchema.strict().array() }).strict();

const env = useServer();

let ownerId: string;
let defaultId: string;
beforeAll(async () => {
  const me = await env.server.db.organization.findFirstOrThrow({ where: { id: { not: env.other.organizationId } } });
  defaultId = me.default_workspace_id!;
  ownerId = (await env.server.db.organizationMember.findFirstOrThrow({ where: { organization_id: me.id } })).user_id;
});

const OneSchema = GuardrailOutputSchema.extend({ data: GuardrailSchema.strict() }).strict();

/** POST /guardrails: 201 and { data: Guardrail }. */
async function createGuardrail(input: Record<string, unknown>, key?: string) {
  const answer = await rest(env.server, '/guardrails', { method: 'POST', json: { name: 'g', ...input }, key });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  expect(answer.type).toMatch(/^application\/json/);
  return OneSchema.parse(answer.body).data;
}

/** A POST whose answer must be 200 with exactly this bare body. */
async function post(path: string, json: unknown, expected: unknown, key?: string) {
  const answer = await rest(env.server, path, { method: 'POST', json, key });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body).toEqual(expected);
}

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
    const ws = await createWorkspace(env.server, 'guarded');
    const elsewhere = await createGuardrail({ name: 'elsewhere', workspace_id: 'guarded' });

    const { status, body } = await rest(env.server, '/guardrails?limit=50&offset=0');
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

    const there = ListSchema.parse((await rest(env.server, `/guardrails?workspace_id=${ws.id}`)).body);
    expect(there.data.map((g) => g.id)).toEqual([elsewhere.id]);
    await expectPaginationEdges(env.server, '/guardrails', 2);
  });

  it('PATCH /guardrails/{id} changes the fields given, lists included, and updated_at', async () => {
    const g = await createGuardrail({ name: 'to change', allowed_models: ['a/b'], include_byok_in_budgets: true });
    await env.server.db.guardrail.update({ where: { id: g.id }, data: { updated_at: new Date('2020-01-01T00:00:00Z') } });
    const answer = await rest(env.server, `/guardrails/${g.id}`, {
      method: 'PATCH',
      json: { name: 'changed', allowed_models: null, ignored_models: ['x/y'], limit_usd: 3, reset_interval: 'weekly' },
    });
    expect(answer.status).toBe(200);
    const updated = OneSchema.parse(answer.body).data;
    // An omitted include_byok_in_budgets is left as it was.
    expect(updated).toMatchObject({
      name: 'changed',
      allowed_models: null,
      ignored_models: ['x/y'],
      limit_usd: 3,
      reset_interval: 'weekly',
      include_byok_in_budgets: true,
    });
    expect(updated.updated_at > '2020-01-01T00:00:00.000Z').toBe(true);
    expectEnvelope(await rest(env.server, `/guardrails/${g.id}`, { method: 'PATCH', json: { reset_interval: 'yearly', limit_usd: 1 } }), 400);
    // limit_usd and reset_interval only together.
    expectEnvelope(await rest(env.server, `/guardrails/${g.id}`, { method: 'PATCH', json: { limit_usd: 1 } }), 400);
    expectEnvelope(await rest(env.server, `/guardrails/${g.id}`, { method: 'PATCH', json: { reset_interval: 'daily' } }), 400);
    // The same contract over tRPC.
    expect((await ok(env.server, 'guardrails.update', { id: g.id, description: 'via trpc' })).data.description).toBe('via trpc');
  });

  it('workspace_id by UUID or slug; an empty page for an unknown or foreign one (404 is not listed); 400 over 200 characters; 401 without a key', async () => {
    const ws = await createWorkspace(env.server, 'listed-by-slug');
    const theirs = await createGuardrail({ name: 'in listed-by-slug', workspace_id: ws.id });
    expect(ListSchema.parse((await rest(env.server, '/guardrails?workspace_id=listed-by-slug')).body).data.map((g) => g.id)).toEqual([theirs.id]);
    expect((await ok(env.server, 'guardrails.list', { workspace_id: 'listed-by-slug' }, { query: true })).data.map((g) => g.id)).toEqual([theirs.id]);
    expectEnvelope(await rest(env.server, `/guardrails?workspace_id=${'a'.repeat(201)}`), 400);
    const nothing = { status: 200, type: 'application/json', body: { data: [], total_count: 0 } };
    expect(await rest(env.server, '/guardrails?workspace_id=no-such-slug')).toEqual(nothing);
    expect(await rest(env.server, '/guardrails?workspace_id=00000000-0000-4000-8000-000000000000')).toEqual(nothing);
    expect(await rest(env.server, `/guardrails?workspace_id=${env.other.workspaceId}`)).toEqual(nothing);
    await createGuardrail({ name: 'theirs' }, env.other.managementKey);
    expect(ListSchema.parse((await rest(env.server, '/guardrails', { key: env.other.managementKey })).body).data.map((g) => g.name)).toEqual(['theirs']);
    expectEnvelope(await rest(env.server, '/guardrails', { key: null }), 401);
  });

  it('a regular key sees its own workspace only (another workspace is an empty page: 403 is not listed)', async () => {
    const ws = await createWorkspace(env.server, 'regular-ws');
    const mine = await createGuardrail({ name: 'mine', workspace_id: ws.id });
    const { key } = await createRegularKey(env.server, ws.id);
    const own = await rest(env.server, `/guardrails?workspace_id=${ws.id}`, { key });
    expect(ListSchema.parse(own.body).data.map((g) => g.id)).toEqual([mine.id]);
    await createGuardrail({ name: 'in the default workspace' });
    for (const query of ['', `?workspace_id=${defaultId}`]) {
      const page = await rest(env.server, `/guardrails${query}`, { key });
      expect(page.status).toBe(200);
      expect(page.body).toEqual({ data: [], total_count: 0 });
    }
    expectEnvelope(await rest(env.server, `/guardrails/${(await createGuardrail({ name: 'default one' })).id}/assignments/keys`, { key }), 404);
    expect((await rest(env.server, `/guardrails/${mine.id}/assignments/keys`, { key })).status).toBe(200);
    expectEnvelope(await rest(env.server, '/guardrails', { method: 'POST', json: { name: 'x' }, key }), 403);
  });
});

describe('POST, GET, PATCH and DELETE /guardrails/{id}', () => {
  it('creates with every field of admin-api.md and reads it back', async () => {
    const ws = await createWorkspace(env.server, 'filed-under');
    const created = await createGuardrail({
      name: 'everything',
      description: null,
      workspace_id: ws.id,
      limit_usd: 2.5,
      reset_interval: 'daily',
      allowed_providers: ['openai'],
      allowed_data_regions: ['europe', 'us'],
      enforce_zdr: true,
      enforce_zdr_openai: false,
      enable_free_model_training: false,
      enable_paid_model_training: true,
      content_filters: [{ pattern: '\\bsecret\\b', action: 'redact' }],
      content_filter_builtins: [
        { slug: 'email', action: 'block', label: 'ignored' },
        { slug: 'regex-prompt-injection', action: 'flag' },
      ],
    });
    expect(created).toMatchObject({
      workspace_id: ws.id,
      description: '',
      limit_usd: 2.5,
      reset_interval: 'daily',
      allowed_data_regions: ['europe', 'us'],
      enforce_zdr: true,
      // The deprecated enforce_zdr fills every enforce_zdr_* field not given.
      enforce_zdr_anthropic: true,
      enforce_zdr_openai: false,
      enforce_zdr_google: true,
      enforce_zdr_xai: true,
      enforce_zdr_other: true,
      enable_free_model_publication: null,
      enable_free_model_training: false,
      enable_paid_model_training: true,
      include_byok_in_budgets: false,
      content_filters: [{ pattern: '\\bsecret\\b', action: 'redact', label: null }],
      content_filter_builtins: [
        { slug: 'email', action: 'block', label: 'Email address' },
        { slug: 'regex-prompt-injection', action: 'flag', scan_scope: 'all_messages', label: 'Prompt injection' },
      ],
    });
    const read = await rest(env.server, `/guardrails/${created.id}`);
    expect(read.status).toBe(200);
    expect(OneSchema.parse(read.body).data).toEqual(created);
    // null removes the filters.
    const cleared = await rest(env.server, `/guardrails/${created.id}`, { method: 'PATCH', json: { content_filters: null, content_filter_builtins: null } });
    expect(OneSchema.parse(cleared.body).data).toMatchObject({ content_filters: null, content_filter_builtins: null, allowed_data_regions: ['europe', 'us'] });
  });

  it('files under the default workspace, by slug too; 400 for bad input and for an unknown workspace (404 is not listed)', async () => {
    expect((await createGuardrail({ name: 'defaulted' })).workspace_id).toBe(defaultId);
    await createWorkspace(env.server, 'by-slug');
    const bySlug = await createGuardrail({ name: 's', workspace_id: 'by-slug' });
    expect(bySlug.workspace_id).not.toBe(defaultId);
    const create = (json: unknown) => rest(env.server, '/guardrails', { method: 'POST', json });
    expectEnvelope(await create({}), 400);
    expectEnvelope(await create({ name: 'x', limit_usd: 5 }), 400);
    expectEnvelope(await create({ name: 'x', reset_interval: 'monthly' }), 400);
    expectEnvelope(await create({ name: 'x', allowed_data_regions: ['mars'] }), 400);
    expectEnvelope(await create({ name: 'x', content_filters: [{ pattern: '(', action: 'block' }] }), 400);
    expectEnvelope(await create({ name: 'x', content_filter_builtins: [{ action: 'block' }] }), 400);
    expectEnvelope(await create({ name: 'x', workspace_id: 'no-such-workspace' }), 400);
    expectEnvelope(await create({ name: 'x', workspace_id: env.other.workspaceId }), 400);
    expectEnvelope(await rest(env.server, '/guardrails', { method: 'POST', json: { name: 'x' }, key: null }), 401);
  });

  it('DELETE removes the guardrail and its assignments; the key can be assigned again', async () => {
    const g = await createGuardrail({ name: 'doomed' });
    const k = await createRegularKey(env.server);
    const m = await createMember(env.server, 'doomed@example.com');
    await post(`/guardrails/${g.id}/assignments/keys`, { key_hashes: [k.hash] }, { assigned_count: 1 });
    await post(`/guardrails/${g.id}/assignments/members`, { member_user_ids: [m.id] }, { assigned_count: 1 });
    const deleted = await rest(env.server, `/guardrails/${g.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true });
    expect(await env.server.db.guardrailKeyAssignment.count({ where: { guardrail_id: g.id } })).toBe(0);
    expect(await env.server.db.guardrailMemberAssignment.count({ where: { guardrail_id: g.id } })).toBe(0);
    expectEnvelope(await rest(env.server, `/guardrails/${g.id}`), 404);
    expectEnvelope(await rest(env.server, `/guardrails/${g.id}`, { method: 'DELETE' }), 404);
    // The key and the member remain, and may be assigned elsewhere.
    const next = await createGuardrail({ name: 'next' });
    await post(`/guardrails/${next.id}/assignments/keys`, { key_hashes: [k.hash] }, { assigned_count: 1 });
  });

  it('404 for unknown, non-UUID and foreign ids; 401 without a key; 403 for a regular key', async () => {
    const theirs = await createGuardrail({ name: 'foreign' }, env.other.managementKey);
    for (const id of [theirs.id, 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      expectEnvelope(await rest(env.server, `/guardrails/${id}`), 404);
      expectEnvelope(await rest(env.server, `/guardrails/${id}`, { method: 'PATCH', json: { name: 'mine' } }), 404);
      expectEnvelope(await rest(env.server, `/guardrails/${id}`, { method: 'DELETE' }), 404);
    }
    const mine = await createGuardrail({ name: 'protected' });
    const { key } = await createRegularKey(env.server);
    expectEnvelope(await rest(env.server, `/guardrails/${mine.id}`, { key }), 403);
    expectEnvelope(await rest(env.server, `/guardrails/${mine.id}`, { method: 'PATCH', json: { name: 'x' }, key }), 403);
    expectEnvelope(await rest(env.server, `/guardrails/${mine.id}`, { method: 'DELETE', key }), 403);
    expectEnvelope(await rest(env.server, `/guardrails/${mine.id}`, { key: null }), 401);
    expectEnvelope(await rest(env.server, `/guardrails/${mine.id}`, { method: 'PATCH', json: { name: 'x' }, key: null }), 401);
    expectEnvelope(await rest(env.server, `/guardrails/${mine.id}`, { method: 'DELETE', key: null }), 401);
    expect(OneSchema.parse((await rest(env.server, `/guardrails/${mine.id}`)).body).data.name).toBe('protected');
  });
});

describe('guardrail assignments', () => {
  it('assign keys in bulk: hash, name and masked label, assigned_by; skips existing; never the secret', async () => {
    const g = await createGuardrail({ name: 'keys' });
    const k1 = await createRegularKey(env.server);
    const k2 = await createRegularKey(env.server);
    await post(`/guardrails/${g.id}/assignments/keys`, { key_hashes: [k1.hash, k2.hash, k1.hash] }, { assigned_count: 2 });
    await post(`/guardrails/${g.id}/assignments/keys`, { key_hashes: [k2.hash] }, { assigned_count: 0 });

    const { status, body } = await rest(env.server, `/guardrails/${g.id}/assignments/keys`);
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
    await expectPaginationEdges(env.server, `/guardrails/${g.id}/assignments/keys`, 2);

    await post(`/guardrails/${g.id}/assignments/keys/remove`, { key_hashes: [k1.hash, 'f'.repeat(64)] }, { unassigned_count: 1 });
    expect(KeysSchema.parse((await rest(env.server, `/guardrails/${g.id}/assignments/keys`)).body).data.map((a) => a.key_hash)).toEqual([k2.hash]);
    // A later call's assignment lists after the earlier ones.
    const k3 = await createRegularKey(env.server);
    await post(`/guardrails/${g.id}/assignments/keys`, { key_hashes: [k3.hash] }, { assigned_count: 1 });
    expect(KeysSchema.parse((await rest(env.server, `/guardrails/${g.id}/assignments/keys`)).body).data.map((a) => a.key_hash)).toEqual([k2.hash, k3.hash]);
  });

  it('a key holds at most one guardrail: assigning it elsewhere moves it', async () => {
    const first = await createGuardrail({ name: 'first' });
    const second = await createGuardrail({ name: 'second' });
    const k = await createRegularKey(env.server);
    await post(`/guardrails/${first.id}/assignments/keys`, { key_hashes: [k.hash] }, { assigned_count: 1 });
    await post(`/guardrails/${second.id}/assignments/keys`, { key_hashes: [k.hash] }, { assigned_count: 1 });
    expect(KeysSchema.parse((await rest(env.server, `/guardrails/${first.id}/assignments/keys`)).body).total_count).toBe(0);
    expect(KeysSchema.parse((await rest(env.server, `/guardrails/${second.id}/assignments/keys`)).body).data.map((a) => a.key_hash)).toEqual([k.hash]);
    // Over tRPC, the same contract.
    expect(await ok(env.server, 'guardrails.assignKeys', { id: first.id, key_hashes: [k.hash] })).toEqual({ assigned_count: 1 });
  });

  it('GET /guardrails/assignments/keys and /members list the whole organization, management key only', async () => {
    const fresh = await testServer();
    try {
      const g1 = OneSchema.parse((await rest(fresh, '/guardrails', { method: 'POST', json: { name: 'one' } })).body).data;
      const g2 = OneSchema.parse((await rest(fresh, '/guardrails', { method: 'POST', json: { name: 'two' } })).body).data;
      const keys = [await createRegularKey(fresh), await createRegularKey(fresh), await createRegularKey(fresh)];
      const members = [await createMember(fresh, 'o1@example.com'), await createMember(fresh, 'o2@example.com')];
      const call = (path: string, json: unknown) => rest(fresh, path, { method: 'POST', json });
      await call(`/guardrails/${g1.id}/assignments/keys`, { key_hashes: [keys[0]!.hash] });
      await call(`/guardrails/${g2.id}/assignments/keys`, { key_hashes: [keys[1]!.hash, keys[2]!.hash] });
      await call(`/guardrails/${g1.id}/assignments/members`, { member_user_ids: [members[0]!.id] });
      await call(`/guardrails/${g2.id}/assignments/members`, { member_user_ids: [members[1]!.id] });
      // Another organization's assignments are not listed.
      const theirs = await createGuardrail({ name: 'theirs' }, env.other.managementKey);
      await post(
        `/guardrails/${theirs.id}/assignments/keys`,
        { key_hashes: [(await createRegularKey(env.server, undefined, env.other.managementKey)).hash] },
        { assigned_count: 1 },
        env.other.managementKey,
      );

      const allKeys = await rest(fresh, '/guardrails/assignments/keys?offset=0&limit=50');
      expect(allKeys.status).toBe(200);
      const keyList = KeysSchema.parse(allKeys.body);
      expect(keyList.total_count).toBe(3);
      expect(keyList.data.map((a) => a.key_hash).sort()).toEqual(keys.map((k) => k.hash).sort());
      expect(new Set(keyList.data.map((a) => a.guardrail_id))).toEqual(new Set([g1.id, g2.id]));
      await expectPaginationEdges(fresh, '/guardrails/assignments/keys', 3);

      const allMembers = await rest(fresh, '/guardrails/assignments/members');
      expect(allMembers.status).toBe(200);
      const memberList = MembersSchema.parse(allMembers.body);
      expect(memberList.data.map((a) => a.user_id).sort()).toEqual(members.map((m) => m.id).sort());
      await expectPaginationEdges(fresh, '/guardrails/assignments/members', 2);

      const { key } = await createRegularKey(fresh);
      for (const path of ['/guardrails/assignments/keys', '/guardrails/assignments/members']) {
        expectEnvelope(await rest(fresh, path, { key }), 403);
        expectEnvelope(await rest(fresh, path, { key: null }), 401);
      }
    } finally {
      await fresh.close();
    }
  });

  it('assign members in bulk with organization_id and assigned_by; skips existing', async () => {
    const g = await createGuardrail({ name: 'members' });
    const a = await createMember(env.server, 'ga@example.com');
    const b = await createMember(env.server, 'gb@example.com');
    await post(`/guardrails/${g.id}/assignments/members`, { member_user_ids: [b.id, a.id] }, { assigned_count: 2 });
    await post(`/guardrails/${g.id}/assignments/members`, { member_user_ids: [a.id] }, { assigned_count: 0 });
    const list = MembersSchema.parse((await rest(env.server, `/guardrails/${g.id}/assignments/members`)).body);
    expect(list.data.map((m) => m.user_id).sort()).toEqual([a.id, b.id].sort());
    expect(list.data[0]).toMatchObject({ guardrail_id: g.id, assigned_by: ownerId });
    expect(list.data[0]!.organization_id).toMatch(/^org_/);
    await expectPaginationEdges(env.server, `/guardrails/${g.id}/assignments/members`, 2);
    await post(`/guardrails/${g.id}/assignments/members/remove`, { member_user_ids: [a.id, b.id] }, { unassigned_count: 2 });
    expect((await rest(env.server, `/guardrails/${g.id}/assignments/members`)).body).toEqual({ data: [], total_count: 0 });
  });

  it('400 naming unknown or foreign keys and members, assigning nothing', async () => {
    const g = await createGuardrail({ name: 'strictly mine' });
    const k = await createRegularKey(env.server);
    const theirKey = await createRegularKey(env.server, undefined, env.other.managementKey);
    const keys = await rest(env.server, `/guardrails/${g.id}/assignments/keys`, { method: 'POST', json: { key_hashes: [k.hash, theirKey.hash, 'nope'] } });
    expectEnvelope(keys, 400);
    expect(errorOf(keys).metadata?.invalid_key_hashes).toEqual([theirKey.hash, 'nope']);
    const members = await rest(env.server, `/guardrails/${g.id}/assignments/members`, {
      method: 'POST',
      json: { member_user_ids: [ownerId, env.other.userId] },
    });
    expectEnvelope(members, 400);
    expect(errorOf(members).metadata?.invalid_member_user_ids).toEqual([env.other.userId]);
    expect(KeysSchema.parse((await rest(env.server, `/guardrails/${g.id}/assignments/keys`)).body).total_count).toBe(0);
    expect(MembersSchema.parse((await rest(env.server, `/guardrails/${g.id}/assignments/members`)).body).total_count).toBe(0);
    for (const [path, json] of [
      ['keys', { key_hashes: [] }],
      ['keys', {}],
      ['keys/remove', {}],
      ['members', { member_user_ids: Array(101).fill('u') }],
      ['members', { user_ids: [ownerId] }],
      ['members/remove', {}],
    ] as const) {
      expectEnvelope(await rest(env.server, `/guardrails/${g.id}/assignments/${path}`, { method: 'POST', json }), 400);
    }
  });

  it('concurrent assigns of the same keys never duplicate', async () => {
    const g = await createGuardrail({ name: 'race' });
    const hashes: string[] = [];
    for (let i = 0; i < 5; i++) hashes.push((await createRegularKey(env.server)).hash);
    const answers = await Promise.all([0, 1, 2].map(() => trpc(env.server, 'guardrails.assignKeys', { id: g.id, key_hashes: hashes })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.reduce((n, a) => n + a.data.assigned_count, 0)).toBe(5);
    expect(await env.server.db.guardrailKeyAssignment.count({ where: { guardrail_id: g.id } })).toBe(5);
  });

  it('404 for non-UUID, unknown and foreign guardrails (reads and writes); 401 without a key', async () => {
    const theirs = await createGuardrail({ name: 'foreign' }, env.other.managementKey);
    for (const id of [theirs.id, 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      expectEnvelope(await rest(env.server, `/guardrails/${id}/assignments/keys`), 404);
      expectEnvelope(await rest(env.server, `/guardrails/${id}/assignments/members`), 404);
    }
    const k = await createRegularKey(env.server);
    const bodies = { keys: { key_hashes: [k.hash] }, members: { member_user_ids: [ownerId] } };
    for (const [kind, json] of Object.entries(bodies)) {
      for (const suffix of ['', '/remove']) {
        const path = `/guardrails/${theirs.id}/assignments/${kind}${suffix}`;
        expectEnvelope(await rest(env.server, path, { method: 'POST', json }), 404);
        expectEnvelope(await rest(env.server, path, { method: 'POST', json, key: null }), 401);
        expectEnvelope(await rest(env.server, path, { method: 'POST', json, key: k.key }), 403);
      }
    }
    expectEnvelope(await rest(env.server, `/guardrails/${theirs.id}/assignments/keys`, { key: null }), 401);
    expectEnvelope(await rest(env.server, `/guardrails/${theirs.id}/assignments/members`, { key: null }), 401);
  });
});
