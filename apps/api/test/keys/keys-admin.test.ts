// Key administration over REST (admin-api.md A1–A5): POST /keys, GET /keys, GET, PATCH and DELETE
// /keys/{hash}. Management keys only; another organization's keys are not found.
import { CreateKeyOutputSchema, dataOf, DeletedOutputSchema, GetKeyOutputSchema, ListKeysOutputSchema, ManagedKeySchema } from '@switchyard/schema';
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '../../src/access/key-format.js';
import { record } from '../fixtures-catalog.js';
import { createDb, queryRows } from '@switchyard/db';
import { createKeyQuery } from '../../src/modules/keys/keys-queries.js';
import { listKeys } from '../../src/modules/keys/keys.service.js';
import type { Audit } from '../../src/modules/audit/audit.js';
import { addUsage, createOrganization, expectExactOutput, managementActor, until, useServer } from '../fixtures.js';
import { createMember, createRegularKey, createWorkspace, expectEnvelope, rest } from '../fixtures-admin.js';
import { scaled } from '@switchyard/db/testing';

const Created = CreateKeyOutputSchema.extend({ data: ManagedKeySchema.strict() }).strict();
const One = ManagedKeySchema.strict();
const Single = dataOf(One).strict();
/** A GET /keys answer: not parsed by the server (meta.answer, trpc/init.ts), so each one is checked exactly. */
const exactList = (body: unknown) => expectExactOutput(ListKeysOutputSchema, body);

const env = useServer();

const post = (json: unknown, key?: string | null) => rest(env.server, '/keys', { method: 'POST', json, key });
async function created(json: Record<string, unknown> = {}) {
  const res = await post({ name: 'k', ...json });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return Created.parse(res.body);
}

describe('POST /keys', () => {
  it('201 { data: Managed key, key }: the secret once, its hash as the public id, every required field', async () => {
    const res = await post({
      name: 'service',
      limit: 25,
      limit_reset: 'weekly',
      include_byok_in_limit: true,
      expires_at: '2099-01-01T00:00:00.000Z',
      external: { user: 'partner-user-7', api_key: 'pk_live_8fK2mQ9xZr4Tn7Wb3Lc6Vd1Ye5Hs0Ja' },
    });
    expect(res.status).toBe(201);
    expect(res.type).toMatch(/^application\/json/);
    const { data, key } = Created.parse(res.body);
    expect(key).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
    expect(data).toEqual({
      hash: hashApiKey(key),
      name: 'service',
      label: `sk-sy-v1-${key.slice(9, 12)}...${key.slice(-3)}`,
      disabled: false,
      workspace_id: env.server.workspaceId,
      creator_user_id: expect.any(String),
      external_user: 'partner-user-7',
      limit: 25,
      limit_remaining: 25,
      limit_reset: 'weekly',
      include_byok_in_limit: true,
      usage: 0,
      usage_daily: 0,
      usage_weekly: 0,
      usage_monthly: 0,
      byok_usage: 0,
      byok_usage_daily: 0,
      byok_usage_weekly: 0,
      byok_usage_monthly: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      expires_at: '2099-01-01T00:00:00.000Z',
      is_management_key: false,
      scopes: null,
    });
    // The secret is never readable again; the partner's key is stored only as its hash.
    expect(JSON.stringify((await rest(env.server, `/keys/${data.hash}`)).body)).not.toContain(key);
    const row = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: data.hash } });
    expect(row.external_api_key_hash).toBe(hashApiKey('pk_live_8fK2mQ9xZr4Tn7Wb3Lc6Vd1Ye5Hs0Ja'));
    // The new key works at once.
    expect((await rest(env.server, '/key', { key })).status).toBe(200);
  });

  it('in a named workspace (slug or UUID), with a member as creator; defaults: default workspace, no limit', async () => {
    const ws = await createWorkspace(env.server, 'keys-ws');
    const member = await createMember(env.server, 'keys-creator@example.com');
    const { data } = await created({ workspace_id: 'keys-ws', creator_user_id: member.id });
    expect(data).toMatchObject({ workspace_id: ws.id, creator_user_id: member.id, limit: null, limit_remaining: null, limit_reset: null });
    expect((await created({ workspace_id: ws.id })).data.workspace_id).toBe(ws.id);
    expect((await created()).data).toMatchObject({ workspace_id: env.server.workspaceId, external_user: null, include_byok_in_limit: false });
  });

  it('400 for a missing name, minute-precision expires_at, a weak or short external.api_key, an unknown creator, bad limits', async () => {
    for (const json of [
      {},
      { name: '' },
      { name: 'k', expires_at: '2099-01-01T00:00Z' },
      { name: 'k', expires_at: '2099-01-01' },
      { name: 'k', external: { api_key: 'pk_live_8fK2mQ9xZr4Tn7Wb3Lc6Vd1Ye5Hs0Ja' } },
      { name: 'k', external: { user: 'u', api_key: 'short-key' } },
      { name: 'k', external: { user: 'u', api_key: 'a'.repeat(40) } },
      { name: 'k', creator_user_id: 'not-a-member' },
      { name: 'k', creator_user_id: env.other.userId },
      { name: 'k', limit: -1 },
      { name: 'k', limit_reset: 'yearly' },
      // Year 0 passes the schema; PostgreSQL has no year 0 and refuses it.
      { name: 'k', expires_at: '0000-01-01T00:00:00Z' },
    ]) {
      expectEnvelope(await post(json), 400);
    }
  });

  it('400 for an expires_at that is not in the future (a key that could never be used); 201 a second after now', async () => {
    const now = new Date('2026-06-01T12:00:00.000Z');
    env.server.setNow(now);
    try {
      for (const expires_at of ['2026-06-01T12:00:00.000Z', '2026-06-01T11:59:59.999Z', '2020-01-01T00:00:00Z']) {
        const res = await post({ name: 'k', expires_at });
        expectEnvelope(res, 400);
        expect(res.body).toMatchObject({ error: { metadata: { reason: 'expires_at in the past' } } });
      }
      const { data } = await created({ expires_at: '2026-06-01T12:00:01.000Z' });
      expect(data.expires_at).toBe('2026-06-01T12:00:01.000Z');
    } finally {
      env.server.setNow(null);
    }
  });

  it('stores the limit and expiry exactly as given: a tiny limit, an instant in UTC', async () => {
    const { data } = await created({ limit: 0.0000001, expires_at: '2099-12-31T23:59:59.999Z' });
    expect(data).toMatchObject({ limit: 0.0000001, limit_remaining: 0.0000001, expires_at: '2099-12-31T23:59:59.999Z' });
    const row = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: data.hash } });
    expect(row.limit?.toString()).toBe('1e-7');
    expect(row.expires_at?.toISOString()).toBe('2099-12-31T23:59:59.999Z');
  });

  /** Who the statement's audit entry names. */
  const TEST_AUDIT: Audit = {
    actor: { kind: 'platform_key', keyHash: null, label: 'test', userId: null, organizationId: null },
    requestId: null,
    clientAddress: null,
    at: new Date(),
  };

  /** POST /keys' statement itself, for a workspace id given as is. */
  const insert = async (workspaceId: string) => {
    const actor = await managementActor(env.server);
    const key = { id: randomUUID(), secret: generateApiKey() };
    const query = createKeyQuery(actor.organizationId, workspaceId, actor.userId, { name: 'inserted directly' }, key, new Date(), TEST_AUDIT, 'keys.create');
    return queryRows(env.server.db, query.statement, query.values);
  };

  it("writes into no other organization's workspace, nor one deleted since it was resolved: the insert checks it too", async () => {
    const other = await createOrganization(env.server.db, 'Key insert neighbour');
    const { default_workspace_id: theirs } = await env.server.db.organization.findUniqueOrThrow({ where: { id: other.organizationId } });
    expect(await insert(theirs!)).toEqual([]);
    const deleted = await createWorkspace(env.server, 'deleted-after-resolving');
    await env.server.db.workspace.update({ where: { id: deleted.id }, data: { deleted_at: new Date() } });
    expect(await insert(deleted.id)).toEqual([]);
    // The organization's own live workspace takes it.
    const live = await createWorkspace(env.server, 'live-for-insert');
    expect(await insert(live.id)).toHaveLength(1);
    expect(await env.server.db.apiKey.count({ where: { name: 'inserted directly' } })).toBe(1);
  });

  it('waits for a deletion of its workspace in progress, then writes nothing into it', async () => {
    const workspace = await createWorkspace(env.server, 'deleted-meanwhile');
    // A deletion as deleteWorkspace makes it: the row locked FOR UPDATE and marked deleted, not yet committed.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const deletion = env.server.db.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT 1 FROM workspaces WHERE id = ${workspace.id}::uuid FOR UPDATE`;
        await tx.workspace.update({ where: { id: workspace.id }, data: { deleted_at: new Date() } });
        locked();
        await held;
      },
      // maxWait: a busy machine may take longer than Prisma's 2 s default to lend the connection.
      { timeout: scaled(30_000), maxWait: scaled(30_000) },
    );
    await isLocked;
    let answered = false;
    const inserted = insert(workspace.id).then((rows) => {
      answered = true;
      return rows;
    });
    try {
      // The insert's statement waits on the deletion's row lock; until that is let go, no answer.
      await until(
        async () => {
          const [{ n }] = await env.server.db.$queryRaw<[{ n: bigint }]>`
            SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO api_keys%'`;
          return n === 1n;
        },
        { what: "the key's insert to wait on the workspace's lock" },
      );
      expect(answered).toBe(false);
    } finally {
      // Never left holding the lock, whatever failed.
      release();
      await deletion;
    }
    expect(await inserted).toEqual([]);
    expect(await env.server.db.apiKey.count({ where: { workspace_id: workspace.id } })).toBe(0);
  });

  it("401 without a key; 403 for a regular key; 400 for another organization's workspace (404 is not listed)", async () => {
    expectEnvelope(await post({ name: 'k' }, null), 401);
    expectEnvelope(await post({ name: 'k' }, (await createRegularKey(env.server)).key), 403);
    expectEnvelope(await post({ name: 'k', workspace_id: env.other.workspaceId }), 400);
  });
});

describe('GET /keys', () => {
  it('{ data } without total_count: keys of the default workspace, newest first, enabled only unless include_disabled', async () => {
    const ws = await createWorkspace(env.server, 'list-keys');
    const a = (await created({ name: 'a', workspace_id: ws.id })).data;
    const b = (await created({ name: 'b', workspace_id: ws.id })).data;
    const c = (await created({ name: 'c', workspace_id: ws.id })).data;
    await rest(env.server, `/keys/${b.hash}`, { method: 'PATCH', json: { disabled: true } });

    const res = await rest(env.server, `/keys?workspace_id=list-keys`);
    expect(res.status).toBe(200);
    const list = exactList(res.body);
    expect(list.data.map((k) => k.hash)).toEqual([c.hash, a.hash]);
    expect(exactList((await rest(env.server, `/keys?workspace_id=${ws.id}&include_disabled=true`)).body).data.map((k) => k.name)).toEqual(['c', 'b', 'a']);
    expect(exactList((await rest(env.server, `/keys?workspace_id=${ws.id}&include_disabled=false`)).body).data).toHaveLength(2);
    expect(exactList((await rest(env.server, `/keys?workspace_id=${ws.id}&include_disabled=true&offset=1`)).body).data.map((k) => k.name)).toEqual(['b', 'a']);
    expect(exactList((await rest(env.server, `/keys?workspace_id=${ws.id}&include_disabled=true&offset=1&limit=1`)).body).data.map((k) => k.name)).toEqual([
      'b',
    ]);
    // Without workspace_id: the default workspace only.
    const defaults = exactList((await rest(env.server, '/keys?include_disabled=true')).body).data;
    expect(defaults.length).toBeGreaterThan(0);
    expect(defaults.every((k) => k.workspace_id === env.server.workspaceId)).toBe(true);
  });

  it('each key carries the usage figures of GET /key, from the same rollups', async () => {
    const ws = await createWorkspace(env.server, 'usage-keys');
    const { key, data } = await created({ name: 'spender', workspace_id: ws.id, limit: 10, limit_reset: 'daily' });
    const today = new Date().toISOString().slice(0, 10);
    await addUsage(env.server.db, data.hash, today, 1.25, 0.5);
    await addUsage(env.server.db, data.hash, '2020-01-01', 3);
    const [listed] = exactList((await rest(env.server, `/keys?workspace_id=${ws.id}`)).body).data;
    const own = GetKeyOutputSchema.parse((await rest(env.server, '/key', { key })).body).data;
    for (const field of [
      'limit',
      'limit_remaining',
      'limit_reset',
      'include_byok_in_limit',
      'usage',
      'usage_daily',
      'usage_weekly',
      'usage_monthly',
      'byok_usage',
      'byok_usage_daily',
      'byok_usage_weekly',
      'byok_usage_monthly',
    ] as const) {
      expect(listed![field], field).toEqual(own[field]);
    }
    expect(listed).toMatchObject({ usage: 4.25, usage_daily: 1.25, byok_usage: 0.5, limit_remaining: 8.75 });
  });

  it('each listed record is the one GET /keys/{hash} answers, for every kind of limit', async () => {
    const ws = await createWorkspace(env.server, 'record-kinds');
    const today = new Date().toISOString().slice(0, 10);
    const kinds = [
      { limit: null },
      { limit: 0.1, limit_reset: null },
      { limit: 100, limit_reset: 'daily', include_byok_in_limit: true },
      { limit: 3.333333333333, limit_reset: 'weekly' },
      { limit: 1, limit_reset: 'monthly', include_byok_in_limit: true, expires_at: '2099-01-02T03:04:05.678Z' },
      { limit: 0.3, external: { user: 'ext-user' } },
    ];
    for (const [i, kind] of kinds.entries()) {
      const { data } = await created({ name: `kind ${i}`, workspace_id: ws.id, ...kind });
      await addUsage(env.server.db, data.hash, today, 0.1 + i / 7, 0.2);
      await addUsage(env.server.db, data.hash, '2020-01-01', 1 / 3);
    }
    const listed = exactList((await rest(env.server, `/keys?workspace_id=${ws.id}`)).body).data;
    expect(listed).toHaveLength(kinds.length);
    expect(listed.some((k) => k.limit_remaining === 0)).toBe(true);
    for (const record of listed) {
      expect(record).toEqual(Single.parse((await rest(env.server, `/keys/${record.hash}`)).body).data);
    }
  });

  it('a page of 100 keys costs a bounded number of queries, whatever the number of generations', async () => {
    const ws = await createWorkspace(env.server, 'many-keys');
    const hashes: string[] = [];
    for (let i = 0; i < 100; i++) hashes.push((await created({ name: `k${i}`, workspace_id: ws.id })).data.hash);
    const captured: unknown[] = [];
    const traced = createDb(env.server.databaseUrl, { poolMax: 1, onQuery: (event) => captured.push(event) });
    try {
      const actor = await managementActor(env.server);
      const queries = async () => {
        captured.length = 0;
        const page = await listKeys({ db: traced, now: () => new Date() }, actor, { workspace_id: ws.id, limit: 100 });
        expect(page).toHaveLength(100);
        return captured.length;
      };
      const before = await queries();
      for (const hash of hashes.slice(0, 20)) {
        for (let i = 0; i < 3; i++) await record(env.server, { api_key_hash: hash, usage: 0.01 });
      }
      expect(await queries()).toBe(before);
      // The workspace, the keys, their usage.
      expect(before).toBeLessThanOrEqual(3);
    } finally {
      await traced.$disconnect();
    }
    expect(exactList((await rest(env.server, `/keys?workspace_id=${ws.id}&limit=100`)).body).data.filter((k) => k.usage > 0)).toHaveLength(20);
  });

  it("400 for a bad offset or include_disabled; 401; 403 for a regular key; 400 for another organization's workspace (404 is not listed)", async () => {
    expectEnvelope(await rest(env.server, '/keys?offset=-1'), 400);
    expectEnvelope(await rest(env.server, '/keys?include_disabled=yes'), 400);
    expectEnvelope(await rest(env.server, '/keys', { key: null }), 401);
    expectEnvelope(await rest(env.server, '/keys', { key: (await createRegularKey(env.server)).key }), 403);
    expectEnvelope(await rest(env.server, `/keys?workspace_id=${env.other.workspaceId}`), 400);
  });
});

describe('GET /keys/{hash}', () => {
  it('200 { data: Managed key }', async () => {
    const { data } = await created({ name: 'one' });
    const res = await rest(env.server, `/keys/${data.hash}`);
    expect(res.status).toBe(200);
    expect(Single.parse(res.body).data).toEqual(data);
  });

  it("404 for unknown, malformed and another organization's hashes; 401; 403 for a regular key", async () => {
    const theirs = await createRegularKey(env.server, undefined, env.other.managementKey);
    expectEnvelope(await rest(env.server, `/keys/${theirs.hash}`), 404);
    expectEnvelope(await rest(env.server, `/keys/${'0'.repeat(64)}`), 404);
    expect([404, 400]).toContain((await rest(env.server, '/keys/not-a-hash')).status);
    const { data } = await created();
    expectEnvelope(await rest(env.server, `/keys/${data.hash}`, { key: null }), 401);
    expectEnvelope(await rest(env.server, `/keys/${data.hash}`, { key: (await createRegularKey(env.server)).key }), 403);
  });
});

describe('PATCH /keys/{hash}', () => {
  it('200 { data } with the changes applied; disabling refuses the key from the next request on', async () => {
    const { key, data } = await created({ name: 'before', limit: 5 });
    const res = await rest(env.server, `/keys/${data.hash}`, {
      method: 'PATCH',
      json: { name: 'after', limit: null, limit_reset: 'monthly', include_byok_in_limit: true, disabled: true },
    });
    expect(res.status).toBe(200);
    const changed = Single.parse(res.body).data;
    expect(changed).toEqual({
      ...data,
      name: 'after',
      limit: null,
      limit_remaining: null,
      limit_reset: 'monthly',
      include_byok_in_limit: true,
      disabled: true,
      updated_at: expect.any(String),
    });
    expectEnvelope(await rest(env.server, '/key', { key }), 401);
    await rest(env.server, `/keys/${data.hash}`, { method: 'PATCH', json: { disabled: false } });
    expect((await rest(env.server, '/key', { key })).status).toBe(200);
  });

  it("400 for bad values; 404 for another organization's key; 401; 403 for a regular key", async () => {
    const { data } = await created();
    const patch = (hash: string, json: unknown, key?: string | null) => rest(env.server, `/keys/${hash}`, { method: 'PATCH', json, key });
    expectEnvelope(await patch(data.hash, { limit: -1 }), 400);
    expectEnvelope(await patch(data.hash, { limit_reset: 'yearly' }), 400);
    expectEnvelope(await patch(data.hash, { name: '' }), 400);
    expectEnvelope(await patch((await createRegularKey(env.server, undefined, env.other.managementKey)).hash, { disabled: true }), 404);
    expectEnvelope(await patch(data.hash, { name: 'x' }, null), 401);
    expectEnvelope(await patch(data.hash, { name: 'x' }, (await createRegularKey(env.server)).key), 403);
  });
});

describe('DELETE /keys/{hash}', () => {
  it('200 { deleted: true }; the key is refused at once and gone from every answer; its generations and spend stay', async () => {
    const { key, data } = await created({ name: 'doomed' });
    expect((await rest(env.server, '/key', { key })).status).toBe(200); // cached by this server now
    const generation = await record(env.server, { api_key_hash: data.hash, usage: 0.02 });
    const row0 = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: data.hash } });
    const res = await rest(env.server, `/keys/${data.hash}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(DeletedOutputSchema.parse(res.body)).toEqual({ deleted: true });

    expectEnvelope(await rest(env.server, '/key', { key }), 401);
    expectEnvelope(await rest(env.server, `/keys/${data.hash}`), 404);
    expectEnvelope(await rest(env.server, `/keys/${data.hash}`, { method: 'PATCH', json: { disabled: false } }), 404);
    expectEnvelope(await rest(env.server, `/keys/${data.hash}`, { method: 'DELETE' }), 404);
    expect(exactList((await rest(env.server, '/keys?include_disabled=true')).body).data.map((k) => k.hash)).not.toContain(data.hash);
    // The organization's records stay: the generation, the key's rollups.
    expect(await env.server.db.generation.findUnique({ where: { id: generation } })).toMatchObject({ api_key_id: row0.id });
    const row = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: data.hash }, include: { usage_days: true } });
    expect(row.usage_days.length).toBeGreaterThan(0);
    expect(row.deleted_at).not.toBeNull();
  });

  it("404 for another organization's key; 401; 403 for a regular key", async () => {
    const theirs = await createRegularKey(env.server, undefined, env.other.managementKey);
    expectEnvelope(await rest(env.server, `/keys/${theirs.hash}`, { method: 'DELETE' }), 404);
    expect((await rest(env.server, '/key', { key: theirs.key })).status).toBe(200);
    const { data } = await created();
    expectEnvelope(await rest(env.server, `/keys/${data.hash}`, { method: 'DELETE', key: null }), 401);
    expectEnvelope(await rest(env.server, `/keys/${data.hash}`, { method: 'DELETE', key: (await createRegularKey(env.server)).key }), 403);
  });
});

describe("an organization's last enabled management key", () => {
  const patch = (hash: string, json: unknown, key: string) => rest(env.server, `/keys/${hash}`, { method: 'PATCH', json, key });
  const del = (hash: string, key: string) => rest(env.server, `/keys/${hash}`, { method: 'DELETE', key });
  const lastKey = { error: { metadata: { reason: 'last management key' } } };

  it('cannot be disabled (400) nor deleted (400, unlisted): the key still works; another may go once a second exists', async () => {
    const org = await createOrganization(env.server.db);
    const own = hashApiKey(org.managementKey);
    for (const res of [await patch(own, { disabled: true }, org.managementKey), await del(own, org.managementKey)]) {
      expectEnvelope(res, 400);
      expect(res.body).toMatchObject(lastKey);
    }
    // Nothing changed: the key answers, enabled and not deleted.
    expect((await rest(env.server, '/key', { key: org.managementKey })).status).toBe(200);
    expect(await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: own } })).toMatchObject({ disabled: false, deleted_at: null });
    // A change that disables nothing is not refused.
    expect((await patch(own, { name: 'renamed', disabled: false }, org.managementKey)).status).toBe(200);

    // With a second management key, the first may be disabled, then the second is the last.
    const second = await post({ name: 'second', is_management_key: true }, org.managementKey);
    expect(second.status).toBe(201);
    const { key: secondKey, data: secondData } = Created.parse(second.body);
    expect((await patch(own, { disabled: true }, secondKey)).status).toBe(200);
    expectEnvelope(await del(secondData.hash, secondKey), 400);
    // An expired management key does not count as one left.
    expect((await patch(own, { disabled: false }, secondKey)).status).toBe(200);
    await env.server.db.apiKey.update({ where: { hash: own }, data: { expires_at: new Date(Date.now() - 1000) } });
    expectEnvelope(await patch(secondData.hash, { disabled: true }, secondKey), 400);
    // Regular keys come and go as before.
    const regular = await createRegularKey(env.server, undefined, secondKey);
    expect((await patch(regular.hash, { disabled: true }, secondKey)).status).toBe(200);
    expect((await del(regular.hash, secondKey)).status).toBe(200);
  });

  it('two management keys disabling each other at once: one wins, the other is refused, one stays enabled', async () => {
    const org = await createOrganization(env.server.db);
    const second = Created.parse((await post({ name: 'second', is_management_key: true }, org.managementKey)).body);
    const first = hashApiKey(org.managementKey);
    const answers = await Promise.all([patch(second.data.hash, { disabled: true }, org.managementKey), patch(first, { disabled: true }, second.key)]);
    // The loser waited for the winner's lock and found itself the last (400), or, authenticated
    // after the winner's commit, found its own key disabled (401).
    const [won, lost] = answers.map((a) => a.status).sort();
    expect(won).toBe(200);
    expect([400, 401]).toContain(lost);
    const enabled = await env.server.db.apiKey.count({
      where: { organization_id: org.organizationId, is_management_key: true, disabled: false, deleted_at: null },
    });
    expect(enabled).toBe(1);
  });
});
