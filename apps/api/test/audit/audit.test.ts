// The audit log on the real server (docs/audit.md): reading GET /api/v1/audit-logs
// and audit.platformList, no entry for a failed or rolled-back change, no entry seen by another
// organization, append-only, and the retention sweep.
import { randomUUID } from 'node:crypto';
import { AuditLogPageSchema, type AuditLogPage } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepAuditLog } from '../../src/modules/audit/retention.js';
import { hashApiKey } from '../../src/access/key-format.js';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { expectExactOutput, until, useServer } from '../fixtures.js';
import { ok, trpc } from '../fixtures-trpc.js';
import { createScimUser, PATCH_SCHEMA, scim, scimToken, USER_SCHEMA } from '../fixtures-scim.js';
import { BOUNDARY, multipart } from '../fixtures-upload.js';
import { inject } from 'vitest';

const env = useServer('Audit reader other');
const unique = () => randomUUID().slice(0, 8);

async function get(server: TestServer, query: string, key: string | null = server.managementKey) {
  const res = await server.request(`/api/v1/audit-logs${query}`, { key });
  return { status: res.status, body: (await res.json()) as AuditLogPage & { error?: { code: number; message: string; metadata?: { reason?: string } } } };
}

describe('GET /api/v1/audit-logs', () => {
  let hash: string;
  beforeAll(async () => {
    hash = (await ok(env.server, 'keys.create', { name: `audited-${unique()}` })).data.hash;
    await ok(env.server, 'keys.update', { hash, name: 'audited renamed' });
  });

  it("answers the organization's entries, newest first, with the entry's shape", async () => {
    const { status, body } = await get(env.server, `?target_type=key&target_id=${hash}`);
    expect(status).toBe(200);
    const page = expectExactOutput(AuditLogPageSchema, body);
    expect(page.data.map((e) => e.action)).toEqual(['keys.update', 'keys.create']);
    const [update] = page.data;
    expect(update).toMatchObject({
      organization_id: env.server.organizationId,
      actor: { kind: 'management_key', key_hash: hashApiKey(env.server.managementKey) },
      target: { type: 'key', id: hash },
      changes: { before: { name: expect.stringMatching(/^audited-/) }, after: { name: 'audited renamed' } },
    });
    expect(update!.request_id).toBeTruthy();
    expect(page.cursor).toBeNull();
  });

  it('a PATCH records only the fields that changed, with their values as answers show them', async () => {
    const made = await ok(env.server, 'keys.create', { name: `limits-${unique()}`, limit: 10, limit_reset: 'daily' });
    const { hash: h } = made.data;
    await ok(env.server, 'keys.update', { hash: h, name: made.data.name, limit: 12.5, limit_reset: null, include_byok_in_limit: true });
    const management = await ok(env.server, 'keys.create', { name: `scoped-${unique()}`, is_management_key: true, scopes: ['keys:read'] });
    await ok(env.server, 'keys.update', { hash: management.data.hash, scopes: [] });
    const { body } = await get(env.server, `?action=keys.update&target_type=key&target_id=${h}`);
    expect(body.data.map((e) => e.changes)).toEqual([
      { before: { limit: 10, limit_reset: 'daily', include_byok_in_limit: false }, after: { limit: 12.5, limit_reset: null, include_byok_in_limit: true } },
    ]);
    const scoped = await get(env.server, `?action=keys.update&target_type=key&target_id=${management.data.hash}`);
    expect(scoped.body.data.map((e) => e.changes)).toEqual([{ before: { scopes: ['keys:read'] }, after: { scopes: [] } }]);
  });

  it('concurrent PATCHes of one key all succeed, each with its entry', async () => {
    const first = `contended-${unique()}`;
    const { hash: h } = (await ok(env.server, 'keys.create', { name: first })).data;
    const names = Array.from({ length: 30 }, (_, i) => `contended ${i}`);
    const answers = await Promise.all(names.map((name) => trpc(env.server, 'keys.update', { hash: h, name })));
    expect(answers.map((a) => a.status)).toEqual(names.map(() => 200));
    const { body } = await get(env.server, `?action=keys.update&target_type=key&target_id=${h}&limit=100`);
    expect(body.data).toHaveLength(30);
    // Each entry's before is the name the one before it set (the updates queued on the row's lock):
    // the befores are the first name and every name but the last one set.
    const changes = body.data.map((e) => e.changes as { before: { name: string }; after: { name: string } });
    expect(new Set(changes.map((c) => c.after.name))).toEqual(new Set(names));
    const last = (await ok(env.server, 'keys.get', { hash: h }, { query: true })).data.name;
    expect(new Set(changes.map((c) => c.before.name))).toEqual(new Set([first, ...names].filter((n) => n !== last)));
  });

  it('filters by actor, action and time range, and pages with its cursor', async () => {
    const other = await ok(env.server, 'keys.create', { name: 'a second manager', is_management_key: true });
    for (let i = 0; i < 3; i++) await ok(env.server, 'keys.create', { name: `by second ${i}` }, { key: other.key });
    const byActor = await get(env.server, `?actor=${other.data.hash}&limit=2`);
    expect(byActor.status).toBe(200);
    expect(byActor.body.data).toHaveLength(2);
    expect(byActor.body.data.every((e) => e.actor.key_hash === other.data.hash)).toBe(true);
    expect(byActor.body.cursor).toEqual(expect.any(String));
    const next = await get(env.server, `?actor=${other.data.hash}&limit=2&cursor=${byActor.body.cursor}`);
    expect(next.body.data).toHaveLength(1);
    expect(next.body.cursor).toBeNull();
    const names = [...byActor.body.data, ...next.body.data].map((e) => (e.changes.after as { name: string }).name);
    expect(names).toEqual(['by second 2', 'by second 1', 'by second 0']);

    const updates = await get(env.server, '?action=keys.update');
    expect(updates.body.data.length).toBeGreaterThan(0);
    expect(updates.body.data.every((e) => e.action === 'keys.update')).toBe(true);

    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await get(env.server, `?since=${encodeURIComponent(future)}`)).body.data).toEqual([]);
    const past = new Date(Date.now() - 3_600_000).toISOString();
    expect((await get(env.server, `?until=${encodeURIComponent(past)}`)).body.data).toEqual([]);
  });

  it('refuses bad filters with 400 in the envelope', async () => {
    for (const query of ['?actor=nothex', '?action=no-dot', '?since=yesterday', '?limit=0', '?limit=101', '?cursor=bm90IGEgY3Vyc29y', '?target_id=x']) {
      const { status, body } = await get(env.server, query);
      expect({ query, status }).toEqual({ query, status: 400 });
      expect(body.error).toMatchObject({ code: 400, message: expect.any(String) });
    }
  });

  it('401 without a key; 403 for a regular key, a platform key and a scoped key without audit:read; 200 with it', async () => {
    expect((await get(env.server, '', null)).status).toBe(401);
    const regular = await ok(env.server, 'keys.create', { name: 'regular reader' });
    expect((await get(env.server, '', regular.key)).status).toBe(403);
    expect((await get(env.server, '', env.server.platformKey)).status).toBe(403);
    const keysOnly = await ok(env.server, 'keys.create', { name: 'keys only', is_management_key: true, scopes: ['keys:write'] });
    const refused = await get(env.server, '', keysOnly.key);
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toBe('Only management keys can perform this operation');
    expect(refused.body.error?.metadata?.reason).toContain('audit:read');
    const reader = await ok(env.server, 'keys.create', { name: 'auditor', is_management_key: true, scopes: ['audit:read'] });
    expect((await get(env.server, '', reader.key)).status).toBe(200);
  });

  it("another organization never sees the organization's entries", async () => {
    const theirs = await get(env.server, `?target_type=key&target_id=${hash}`, env.other.managementKey);
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual([]);
    const all = await get(env.server, '?limit=100', env.other.managementKey);
    expect(all.body.data.every((e) => e.organization_id === env.other.organizationId)).toBe(true);
  });

  it('the platform reads every organization, or one (audit.platformList over tRPC); tenants get 403 there', async () => {
    const one = await ok(
      env.server,
      'audit.platformList',
      { organization_id: env.server.organizationId, target_type: 'key', target_id: hash },
      { query: true },
    );
    expect(one.data.map((e) => e.action)).toEqual(['keys.update', 'keys.create']);
    await ok(env.server, 'keys.create', { name: 'theirs' }, { key: env.other.managementKey });
    const every = await ok(env.server, 'audit.platformList', { limit: 100 }, { query: true });
    const organizations = new Set(every.data.map((e) => e.organization_id));
    expect(organizations).toContain(env.server.organizationId);
    expect(organizations).toContain(env.other.organizationId);
    expect((await trpc(env.server, 'audit.platformList', {}, { key: env.server.managementKey, query: true })).status).toBe(403);
  });
});

describe('entries match changes', () => {
  const count = () => env.server.db.auditLog.count({ where: { organization_id: env.server.organizationId } });

  it('a refused change (400, 404) appends nothing', async () => {
    const before = await count();
    expect((await trpc(env.server, 'keys.update', { hash: 'f'.repeat(64), name: 'x' })).status).toBe(404);
    expect((await trpc(env.server, 'keys.delete', { hash: 'e'.repeat(64) })).status).toBe(404);
    expect((await trpc(env.server, 'keys.rotate', { hash: 'd'.repeat(64) })).status).toBe(404);
    expect((await trpc(env.server, 'keys.create', { name: 'past', expires_at: '2001-01-01T00:00:00Z' })).status).toBe(400);
    expect(await count()).toBe(before);
  });

  it('a change rolled back after its entry was written leaves neither (scopes on a regular key)', async () => {
    const regular = await ok(env.server, 'keys.create', { name: `to scope ${unique()}` });
    const before = await count();
    const refused = await trpc(env.server, 'keys.update', { hash: regular.data.hash, scopes: ['keys:read'] });
    expect(refused.status).toBe(400);
    expect(await count()).toBe(before);
    const row = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: regular.data.hash } });
    expect(row.scopes).toEqual([]);
  });

  it("disabling the organization's last unscoped management key is refused and leaves no entry", async () => {
    const { server, other } = env;
    const before = await server.db.auditLog.count({ where: { organization_id: other.organizationId } });
    const refused = await trpc(server, 'keys.update', { hash: hashApiKey(other.managementKey), disabled: true }, { key: other.managementKey });
    expect(refused.status).toBe(400);
    expect(await server.db.auditLog.count({ where: { organization_id: other.organizationId } })).toBe(before);
  });
});

describe('entries match changes: the writes of SCIM, files and destinations', () => {
  const count = (organizationId = env.server.organizationId) => env.server.db.auditLog.count({ where: { organization_id: organizationId } });

  it('refused writes (409, 400, 404) append nothing', async () => {
    const { server } = env;
    const mapping = { workspace_id: server.workspaceId, scim_group_id: randomUUID(), role: 'member' as const };
    await ok(server, 'scim.createGroupMapping', mapping);
    const destination = (await ok(server, 'destinations.create', { type: 'webhook', name: 'refusals', config: { url: 'https://r.example.com/' } })).data.id;
    const token = await scimToken(server);
    const userName = `dup-${unique()}@example.com`;
    await createScimUser(server, token, userName);
    const before = await count();
    expect((await trpc(server, 'scim.createGroupMapping', { ...mapping, role: 'admin' })).status).toBe(409);
    expect((await trpc(server, 'scim.updateGroupMapping', { id: randomUUID(), role: 'admin' })).status).toBe(404);
    expect((await trpc(server, 'scim.revokeToken', { id: randomUUID() })).status).toBe(404);
    expect((await trpc(server, 'destinations.update', { id: destination, config: { url: 'ftp://nope' } })).status).toBe(400);
    expect((await trpc(server, 'destinations.delete', { id: randomUUID() })).status).toBe(404);
    expect((await trpc(server, 'files.deleteDocument', { file_id: 'file_nothing' })).status).toBe(404);
    const duplicate = await scim(server, token, '/Users', { method: 'POST', body: { schemas: [USER_SCHEMA], userName, active: true } });
    expect(duplicate.status).toBe(409);
    const empty = await server.request('/api/v1/files', {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: multipart([{ name: 'file', filename: 'empty.txt', bytes: Buffer.alloc(0) }]),
    });
    expect(empty.status).toBe(400);
    expect(await count()).toBe(before);
  });

  it('a SCIM write rolled back after its entry was written (it would disable the last management key) leaves neither', async () => {
    const { server, other } = env;
    const token = await scimToken(server, other.managementKey);
    const person = await server.db.user.findUniqueOrThrow({ where: { id: other.userId } });
    const user = await createScimUser(server, token, person.email);
    const before = await count(other.organizationId);
    const refused = await scim(server, token, `/Users/${user.id}`, {
      method: 'PATCH',
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'active', value: false }] },
    });
    expect(refused.status).toBe(400);
    expect(await count(other.organizationId)).toBe(before);
    expect((await server.db.scimUser.findUniqueOrThrow({ where: { id: user.id } })).active).toBe(true);
  });
});

describe('append-only', () => {
  it('no statement updates, deletes or truncates an entry outside the retention sweep', async () => {
    await ok(env.server, 'keys.create', { name: 'append only' });
    const { db } = env.server;
    await expect(db.$executeRaw`UPDATE audit_log SET action = 'forged'`).rejects.toThrow(/append-only/);
    await expect(db.$executeRaw`DELETE FROM audit_log`).rejects.toThrow(/append-only/);
    await expect(db.$executeRaw`TRUNCATE audit_log`).rejects.toThrow(/append-only/);
    expect(await db.auditLog.count({ where: { action: 'forged' } })).toBe(0);
  });
});

describe('retention', () => {
  it('sweepAuditLog deletes entries older than the retention days, by the driven clock; 0 keeps all', async () => {
    const { server } = env;
    const longAgo = new Date(Date.now() - 400 * 86_400_000);
    server.setNow(longAgo);
    let old: string;
    try {
      old = (await ok(server, 'keys.create', { name: 'long ago' })).data.hash;
    } finally {
      server.setNow(null);
    }
    const recent = (await ok(server, 'keys.create', { name: 'recent' })).data.hash;
    const entries = (hash: string) => server.db.auditLog.count({ where: { target_id: hash } });
    expect(await entries(old)).toBe(1);
    expect(await sweepAuditLog(server.db, new Date(), 0)).toBe(0);
    expect(await entries(old)).toBe(1);
    expect(await sweepAuditLog(server.db, new Date(), 365)).toBeGreaterThanOrEqual(1);
    expect(await entries(old)).toBe(0);
    expect(await entries(recent)).toBe(1);
  });
});

describe('the retention job of the job runner', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      adminUrl: inject('pgAdminUrl'),
      template: inject('pgTemplate'),
      env: { AUDIT_RETENTION_DAYS: '1', AUDIT_SWEEP_INTERVAL_MS: '100' },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('deletes an entry once it is older than AUDIT_RETENTION_DAYS by the server clock', async () => {
    server.setNow(new Date(Date.now() - 2 * 86_400_000));
    let hash: string;
    try {
      hash = (await ok(server, 'keys.create', { name: 'two days ago' })).data.hash;
    } finally {
      server.setNow(null);
    }
    const fresh = (await ok(server, 'keys.create', { name: 'today' })).data.hash;
    await until(async () => (await server.db.auditLog.count({ where: { target_id: hash } })) === 0, { what: 'the old entry swept' });
    expect(await server.db.auditLog.count({ where: { target_id: fresh } })).toBe(1);
  });
});
