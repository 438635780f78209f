import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ByokCredentialSchema, ByokOutputSchema, DeletedOutputSchema, ListByokOutputSchema } from '@switchyard/schema';
import { loadConfig } from '../../src/config.js';
import { resealByokSecrets } from '../../src/modules/byok/byok-reseal.js';
import { loadSecretBox, parseSecretKey, SecretBox, SECRET_KEY_FILE } from '../../src/lib/secret-box.js';
import { createOrganization, managementActor, useServer } from '../fixtures.js';
import { createRegularKey, createWorkspace, expectEnvelope, expectPaginationEdges, rest } from '../fixtures-admin.js';
import { ok, type InputOf } from '../fixtures-trpc.js';

const GetSchema = ByokOutputSchema.extend({ data: ByokCredentialSchema.strict() }).strict();
const PROVIDER_KEY = 'sk-proj-Zx81bQe9TTq3LmN0pAbCd';

const env = useServer();

async function serverBox(): Promise<SecretBox> {
  return new SecretBox([parseSecretKey(await fs.readFile(path.join(env.server.dataDir, SECRET_KEY_FILE), 'utf8'))]);
}

/** POST /byok through tRPC (the same procedure); the credential record. */
const createByok = async (input: InputOf<'byok.create'>, key?: string) => (await ok(env.server, 'byok.create', input, { key })).data;

describe('POST /byok', () => {
  it('201 { data: BYOK credential } with every field, the masked label and never the secret', async () => {
    const { hash } = await createRegularKey(env.server);
    const res = await rest(env.server, '/byok', {
      method: 'POST',
      json: {
        provider: 'openai',
        key: PROVIDER_KEY,
        name: 'Prod OpenAI',
        is_required: true,
        declared_zdr: true,
        allowed_api_key_hashes: [hash],
        allowed_models: ['openai/gpt-4o'],
      },
    });
    expect(res.status).toBe(201);
    expect(res.type).toMatch(/^application\/json/);
    const { data } = GetSchema.parse(res.body);
    expect(data).toEqual({
      id: expect.any(String),
      workspace_id: env.server.workspaceId,
      name: 'Prod OpenAI',
      label: 'sk-...AbCd',
      provider: 'openai',
      disabled: false,
      is_fallback: false,
      sort_order: 0,
      allowed_api_key_hashes: [hash],
      allowed_models: ['openai/gpt-4o'],
      allowed_user_ids: null,
      declared_zdr: true,
      is_byok_only: false,
      is_required: true,
      created_at: expect.any(String),
    });
    expect(JSON.stringify(res.body)).not.toContain('Zx81bQe9');
    // name is optional; disabled at creation.
    const bare = await rest(env.server, '/byok', { method: 'POST', json: { provider: 'mistral', key: '12345678abcd', disabled: true } });
    expect(bare.status).toBe(201);
    expect(GetSchema.parse(bare.body).data).toMatchObject({ name: null, disabled: true, declared_zdr: null });
  });

  it('400 for a missing provider or key, a short key, an empty or foreign allowed_api_key_hashes, fallback with byok-only', async () => {
    const theirs = (await createRegularKey(env.server, undefined, env.other.managementKey)).hash;
    for (const json of [
      { key: '12345678' },
      { provider: 'openai' },
      { provider: 'openai', key: 'short' },
      { provider: 'OpenAI', key: '12345678' },
      { provider: 'openai', key: '12345678', allowed_api_key_hashes: [] },
      { provider: 'openai', key: '12345678', allowed_api_key_hashes: ['nothex'] },
      { provider: 'openai', key: '12345678', allowed_api_key_hashes: [theirs] },
      { provider: 'openai', key: '12345678', is_fallback: true, is_byok_only: true },
    ]) {
      expectEnvelope(await rest(env.server, '/byok', { method: 'POST', json }), 400);
    }
  });

  it("creates in a named workspace (slug or UUID); 400 for another organization's (404 is not listed); 401; 403 for a regular key", async () => {
    const ws = await createWorkspace(env.server, 'byok-ws');
    expect((await createByok({ workspace_id: 'byok-ws', provider: 'x', key: '12345678' })).workspace_id).toBe(ws.id);
    expectEnvelope(await rest(env.server, '/byok', { method: 'POST', json: { workspace_id: env.other.workspaceId, provider: 'x', key: '12345678' } }), 400);
    expectEnvelope(await rest(env.server, '/byok', { method: 'POST', key: null, json: { provider: 'x', key: '12345678' } }), 401);
    const { key } = await createRegularKey(env.server);
    expectEnvelope(await rest(env.server, '/byok', { method: 'POST', key, json: { provider: 'x', key: '12345678' } }), 403);
  });

  it('stores only ciphertext, bound to the row, opened by the server key; nothing logged carries the secret', async () => {
    const created = await createByok({ provider: 'openai', name: 'sealed', key: PROVIDER_KEY });
    const row = await env.server.db.byokCredential.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.secret_ciphertext).not.toContain(PROVIDER_KEY);
    expect(row.secret_ciphertext).toMatch(/^v1\.[0-9a-f]{16}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    const box = await serverBox();
    expect(box.open(row.secret_ciphertext!, row.id)).toBe(PROVIDER_KEY);
    expect(() => box.open(row.secret_ciphertext!, '00000000-0000-4000-8000-000000000000')).toThrow();
    expect(JSON.stringify(env.server.logs)).not.toContain('Zx81bQe9');
  });
});

const ListSchema = ListByokOutputSchema.extend({ data: ByokCredentialSchema.strict().array() }).strict();

describe('GET /byok', () => {
  it("lists a workspace's credentials in routing order, paginated, filtered by provider, without secrets", async () => {
    const ws = await createWorkspace(env.server, 'byok-list');
    const b = await createByok({ workspace_id: ws.id, provider: 'openai', name: 'b', key: 'sk-openai-bbbb-2222', sort_order: 2 });
    const a = await createByok({ workspace_id: ws.id, provider: 'openai', name: 'a', key: 'sk-openai-aaaa-1111', sort_order: 1 });
    const c = await createByok({ workspace_id: ws.id, provider: 'anthropic', name: 'c', key: 'sk-ant-cccc-3333' });

    const all = await rest(env.server, '/byok?workspace_id=byok-list&offset=0&limit=50');
    expect(all.status).toBe(200);
    const list = ListSchema.parse(all.body);
    expect(list.total_count).toBe(3);
    expect(list.data.map((x) => x.id)).toEqual([c.id, a.id, b.id]);
    expect(JSON.stringify(list)).not.toContain('sk-openai-aaaa-1111');
    expect((await rest(env.server, `/byok?workspace_id=${ws.id}&offset=1&limit=1`)).body).toEqual({ data: [list.data[1]], total_count: 3 });
    const openai = ListSchema.parse((await rest(env.server, '/byok?workspace_id=byok-list&provider=openai')).body);
    expect([openai.total_count, openai.data.map((x) => x.id)]).toEqual([2, [a.id, b.id]]);
    await expectPaginationEdges(env.server, '/byok?workspace_id=byok-list', 3);
  });

  it('without workspace_id: the default workspace, whatever workspace the caller key is in', async () => {
    const ws = await createWorkspace(env.server, 'byok-elsewhere');
    const management = (await ok(env.server, 'keys.create', { name: 'ws admin', workspace_id: ws.id, is_management_key: true })).key;
    const inDefault = await createByok({ provider: 'groq', key: 'gsk-default-0000' }, management);
    expect(inDefault.workspace_id).toBe(env.server.workspaceId);
    const ids = ListSchema.parse((await rest(env.server, '/byok?provider=groq', { key: management })).body).data.map((x) => x.id);
    expect(ids).toEqual([inDefault.id]);
  });

  it("workspace_id null: one credential listed in every workspace of its organization, and in no other organization's", async () => {
    // Its own organization, so that the other tests' lists keep their counts.
    const org = await createOrganization(env.server.db, 'Every workspace');
    const second = await createWorkspace(env.server, `byok-all-${randomBytes(3).toString('hex')}`, org.managementKey);
    const created = await createByok({ provider: 'mistral', key: 'mk-every-workspace-0000', workspace_id: null, sort_order: 1 }, org.managementKey);
    expect(ByokCredentialSchema.strict().parse(created).workspace_id).toBeNull();
    const own = await createByok({ provider: 'mistral', key: 'mk-second-only-0000', workspace_id: second.id }, org.managementKey);
    const listed = async (query: string, key: string) =>
      ListSchema.parse((await rest(env.server, `/byok${query}`, { key })).body).data.map((x) => [x.id, x.workspace_id]);
    expect(await listed('', org.managementKey)).toEqual([[created.id, null]]);
    expect(await listed(`?workspace_id=${second.id}`, org.managementKey)).toEqual([
      [own.id, second.id],
      [created.id, null],
    ]);
    expect(await listed('?provider=mistral', env.server.managementKey)).not.toContainEqual([created.id, null]);
    expectEnvelope(await rest(env.server, `/byok/${created.id}`), 404);
    // Deleting a workspace destroys its own credentials, not the organization's.
    expect((await rest(env.server, `/workspaces/${second.id}`, { method: 'DELETE', key: org.managementKey })).status).toBe(200);
    expectEnvelope(await rest(env.server, `/byok/${own.id}`, { key: org.managementKey }), 404);
    expect((await rest(env.server, `/byok/${created.id}`, { key: org.managementKey })).status).toBe(200);
  });

  it("400 for a bad limit; 401; 403 for a regular key; 400 for another organization's workspace (404 is not listed)", async () => {
    expectEnvelope(await rest(env.server, '/byok?limit=101'), 400);
    expectEnvelope(await rest(env.server, '/byok?limit=0'), 400);
    expectEnvelope(await rest(env.server, '/byok', { key: null }), 401);
    expectEnvelope(await rest(env.server, '/byok', { key: (await createRegularKey(env.server)).key }), 403);
    expectEnvelope(await rest(env.server, `/byok?workspace_id=${env.other.workspaceId}`), 400);
  });
});

describe('GET /byok/{id}', () => {
  it('200 { data } as created', async () => {
    const created = await createByok({ provider: 'openai', name: 'Prod', key: PROVIDER_KEY, is_fallback: true, sort_order: 2 });
    const { status, body } = await rest(env.server, `/byok/${created.id}`);
    expect(status).toBe(200);
    expect(GetSchema.parse(body).data).toEqual(created);
  });

  it('404 for non-UUID, unknown and foreign ids (never 500); 401 without a key; 403 for a regular key', async () => {
    const theirs = await createByok({ provider: 'openai', name: 'theirs', key: 'sk-theirs-000000' }, env.other.managementKey);
    expectEnvelope(await rest(env.server, `/byok/${theirs.id}`), 404);
    expect((await rest(env.server, `/byok/${theirs.id}`, { key: env.other.managementKey })).status).toBe(200);
    for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000', "1'%20OR%201=1", '%20']) {
      expectEnvelope(await rest(env.server, `/byok/${id}`), 404);
    }
    expectEnvelope(await rest(env.server, `/byok/${theirs.id}`, { key: null }), 401);
    const { key } = await createRegularKey(env.server);
    expectEnvelope(await rest(env.server, `/byok/${theirs.id}`, { key }), 403);
  });
});

describe('PATCH /byok/{id}', () => {
  it('changes only the fields given; key rotates the secret in place (label recomputed); null clears an allowlist', async () => {
    const { hash } = await createRegularKey(env.server);
    const created = await createByok({ provider: 'anthropic', name: 'A', key: 'sk-ant-first-secret-1111', allowed_models: ['a/b'] });
    const before = await env.server.db.byokCredential.findUniqueOrThrow({ where: { id: created.id } });
    const res = await rest(env.server, `/byok/${created.id}`, {
      method: 'PATCH',
      json: { key: 'sk-ant-second-secret-2222', disabled: true, allowed_models: null, allowed_api_key_hashes: [hash], is_required: true },
    });
    expect(res.status).toBe(200);
    const { data } = GetSchema.parse(res.body);
    expect(data).toEqual({
      ...created,
      label: 'sk...2222', // 25 characters: at most 6 shown
      disabled: true,
      allowed_models: null,
      allowed_api_key_hashes: [hash],
      is_required: true,
    });
    const after = await env.server.db.byokCredential.findUniqueOrThrow({ where: { id: created.id } });
    expect(after.secret_ciphertext).not.toBe(before.secret_ciphertext);
    expect((await serverBox()).open(after.secret_ciphertext!, after.id)).toBe('sk-ant-second-secret-2222');
    // An empty body changes nothing.
    expect(GetSchema.parse((await rest(env.server, `/byok/${created.id}`, { method: 'PATCH', json: {} })).body).data).toEqual(data);
    expect(
      GetSchema.parse((await rest(env.server, `/byok/${created.id}`, { method: 'PATCH', json: { name: null, disabled: false } })).body).data,
    ).toMatchObject({
      name: null,
      disabled: false,
    });
  });

  it('400 for fallback with byok-only (also against stored values), an empty or foreign hash list, a short key', async () => {
    const created = await createByok({ provider: 'openai', key: 'sk-fallback-0000', is_fallback: true });
    const theirs = (await createRegularKey(env.server, undefined, env.other.managementKey)).hash;
    for (const json of [{ is_byok_only: true }, { allowed_api_key_hashes: [] }, { allowed_api_key_hashes: [theirs] }, { key: 'short' }]) {
      expectEnvelope(await rest(env.server, `/byok/${created.id}`, { method: 'PATCH', json }), 400);
    }
    expect((await rest(env.server, `/byok/${created.id}`, { method: 'PATCH', json: { is_fallback: false, is_byok_only: true } })).status).toBe(200);
  });

  it('404 for unknown, foreign and deleted ids; 401; 403 for a regular key', async () => {
    const theirs = await createByok({ provider: 'openai', key: 'sk-theirs-111111' }, env.other.managementKey);
    expectEnvelope(await rest(env.server, `/byok/${theirs.id}`, { method: 'PATCH', json: { key: 'sk-hijacked-0000' } }), 404);
    expectEnvelope(await rest(env.server, '/byok/not-a-uuid', { method: 'PATCH', json: { disabled: true } }), 404);
    const mine = await createByok({ provider: 'openai', key: 'sk-mine-22222222' });
    expectEnvelope(await rest(env.server, `/byok/${mine.id}`, { method: 'PATCH', key: null, json: { disabled: true } }), 401);
    expectEnvelope(
      await rest(env.server, `/byok/${mine.id}`, { method: 'PATCH', key: (await createRegularKey(env.server)).key, json: { disabled: true } }),
      403,
    );
    await rest(env.server, `/byok/${mine.id}`, { method: 'DELETE' });
    expectEnvelope(await rest(env.server, `/byok/${mine.id}`, { method: 'PATCH', json: { disabled: false } }), 404);
  });
});

describe('DELETE /byok/{id}', () => {
  it('200 { deleted: true }: the secret is destroyed, the record is gone from every answer; the row stays, marked deleted', async () => {
    const created = await createByok({ provider: 'openai', key: 'sk-doomed-33333333', name: 'doomed' });
    const deleted = await rest(env.server, `/byok/${created.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(DeletedOutputSchema.parse(deleted.body)).toEqual({ deleted: true });
    const row = await env.server.db.byokCredential.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.secret_ciphertext).toBeNull();
    expect(row.deleted_at).not.toBeNull();
    expectEnvelope(await rest(env.server, `/byok/${created.id}`), 404);
    expect(ListSchema.parse((await rest(env.server, '/byok?provider=openai&limit=100')).body).data.map((x) => x.id)).not.toContain(created.id);
    expectEnvelope(await rest(env.server, `/byok/${created.id}`, { method: 'DELETE' }), 404);
  });

  it('404 for unknown and foreign ids; 401; 403 for a regular key', async () => {
    const theirs = await createByok({ provider: 'openai', key: 'sk-theirs-444444' }, env.other.managementKey);
    expectEnvelope(await rest(env.server, `/byok/${theirs.id}`, { method: 'DELETE' }), 404);
    expect((await rest(env.server, `/byok/${theirs.id}`, { key: env.other.managementKey })).status).toBe(200);
    expectEnvelope(await rest(env.server, '/byok/00000000-0000-4000-8000-000000000000', { method: 'DELETE' }), 404);
    const mine = await createByok({ provider: 'openai', key: 'sk-mine-55555555' });
    expectEnvelope(await rest(env.server, `/byok/${mine.id}`, { method: 'DELETE', key: null }), 401);
    expectEnvelope(await rest(env.server, `/byok/${mine.id}`, { method: 'DELETE', key: (await createRegularKey(env.server)).key }), 403);
  });
});

describe('secret key rotation', () => {
  it('after a key rotation, old secrets still open and resealSecrets moves them to the new key', async () => {
    const created = await createByok({ provider: 'openai', name: 'rotating', key: 'sk-rotate-me-9876' });
    await createByok({ provider: 'openai', name: 'theirs', key: 'sk-theirs-reseal-0' }, env.other.managementKey);
    const destroyed = await createByok({ provider: 'openai', name: 'destroyed', key: 'sk-destroyed-0000' });
    await rest(env.server, `/byok/${destroyed.id}`, { method: 'DELETE' });
    const oldBox = await serverBox();
    const newKey = randomBytes(32);
    const ring = new SecretBox([newKey, parseSecretKey(await fs.readFile(path.join(env.server.dataDir, SECRET_KEY_FILE), 'utf8'))]);
    const actor = await managementActor(env.server);
    const { resealed } = await resealByokSecrets(env.server.db, ring, actor);
    expect(resealed).toBeGreaterThanOrEqual(1);
    const row = await env.server.db.byokCredential.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.secret_ciphertext!.startsWith(`v1.${ring.currentKeyId}.`)).toBe(true);
    expect(new SecretBox([newKey]).open(row.secret_ciphertext!, row.id)).toBe('sk-rotate-me-9876');
    expect(() => oldBox.open(row.secret_ciphertext!, row.id)).toThrow(/no secret key/);
    // Only this organization's secrets were touched, and a second pass has nothing left to do.
    expect((await env.server.db.byokCredential.findFirstOrThrow({ where: { organization_id: env.other.organizationId } })).secret_ciphertext).toMatch(
      new RegExp(`^v1\\.${oldBox.currentKeyId}\\.`),
    );
    expect(await resealByokSecrets(env.server.db, ring, actor)).toEqual({ resealed: 0 });
    // A destroyed secret stays destroyed.
    expect((await env.server.db.byokCredential.findUniqueOrThrow({ where: { id: destroyed.id } })).secret_ciphertext).toBeNull();
  });
});

describe('secret keys', () => {
  it('AES-256-GCM: tampering with any part of the ciphertext fails', () => {
    const box = new SecretBox([randomBytes(32)]);
    const sealed = box.seal('provider-secret', 'row-1');
    expect(box.open(sealed, 'row-1')).toBe('provider-secret');
    expect(box.seal('provider-secret', 'row-1')).not.toBe(sealed); // fresh IV each time
    const parts = sealed.split('.');
    for (const i of [2, 3, 4]) {
      const bad = [...parts];
      bad[i] = Buffer.from(Buffer.from(bad[i]!, 'base64url').map((b, j) => (j === 0 ? b ^ 1 : b))).toString('base64url');
      expect(() => box.open(bad.join('.'), 'row-1')).toThrow();
    }
    expect(() => box.open(`v2.${parts.slice(1).join('.')}`, 'row-1')).toThrow(/format/);
  });

  it('generates DATA_DIR/secret-key once (mode 0600), and concurrent starts agree on it', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-secret-'));
    try {
      const results = await Promise.all(Array.from({ length: 4 }, () => loadSecretBox({ configured: undefined, dataDir: dir })));
      expect(new Set(results.map((r) => r.box.currentKeyId)).size).toBe(1);
      expect(results.filter((r) => r.source === 'generated')).toHaveLength(1);
      const stat = await fs.stat(path.join(dir, SECRET_KEY_FILE));
      expect(stat.mode & 0o777).toBe(0o600);
      expect((await fs.readdir(dir)).sort()).toEqual([SECRET_KEY_FILE]);
      const again = await loadSecretBox({ configured: undefined, dataDir: dir });
      expect(again).toMatchObject({ source: 'file' });
      expect(again.box.currentKeyId).toBe(results[0]!.box.currentKeyId);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('SWITCHYARD_SECRET_KEY: hex or base64 of 32 bytes, comma-separated for rotation; anything else stops the start', async () => {
    const a = randomBytes(32);
    const b = randomBytes(32);
    const config = loadConfig({ SWITCHYARD_SECRET_KEY: `${a.toString('hex')}, ${b.toString('base64')}` });
    expect(config.secretKeys).toEqual([a, b]);
    const loaded = await loadSecretBox({ configured: config.secretKeys, dataDir: '/nonexistent' });
    expect(loaded.source).toBe('env');
    expect(loaded.box.open(new SecretBox([b]).seal('s', 'id'), 'id')).toBe('s');
    expect(() => loadConfig({ SWITCHYARD_SECRET_KEY: 'too-short' })).toThrow(/SWITCHYARD_SECRET_KEY/);
    expect(loadConfig({}).secretKeys).toBeUndefined();
  });
});
