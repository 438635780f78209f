import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ByokCredentialSchema, ByokOutputSchema } from '@switchyard/schema';
import { loadConfig } from '../src/config.js';
import { resealByokSecrets } from '../src/modules/byok/byok.service.js';
import { loadSecretBox, parseSecretKey, SecretBox, SECRET_KEY_FILE } from '../src/modules/byok/secret-box.js';
import type { TestServer } from '../src/testing.js';
import { createOrganization, managementActor, testServer, type OrgFixture } from './fixtures.js';
import { createRegularKey, createWorkspace, expectEnvelope, ok, rest, trpc } from './fixtures-admin.js';

const GetSchema = ByokOutputSchema.extend({ data: ByokCredentialSchema.strict() }).strict();
const PROVIDER_KEY = 'sk-proj-Zx81bQe9TTq3LmN0pAbCd';

let server: TestServer;
let other: OrgFixture;
beforeAll(async () => {
  server = await testServer();
  other = await createOrganization(server.db);
});
afterAll(async () => {
  await server?.close();
});

async function serverBox(): Promise<SecretBox> {
  return new SecretBox([parseSecretKey(await fs.readFile(path.join(server.dataDir, SECRET_KEY_FILE), 'utf8'))]);
}

describe('GET /byok/{id}', () => {
  it('returns every field, the masked label and never the secret; the column holds only ciphertext', async () => {
    const created = await ok(server, 'byok.create', {
      provider: 'openai',
      name: 'Prod OpenAI',
      key: PROVIDER_KEY,
      is_fallback: true,
      sort_order: 2,
      allowed_models: ['openai/gpt-4o'],
      declared_zdr: true,
    });
    expect(JSON.stringify(created)).not.toContain(PROVIDER_KEY);
    const { status, body } = await rest(server, `/byok/${created.id}`);
    expect(status).toBe(200);
    const { data } = GetSchema.parse(body);
    expect(data).toEqual({
      id: created.id,
      workspace_id: expect.any(String),
      name: 'Prod OpenAI',
      label: 'sk-...AbCd',
      provider: 'openai',
      disabled: false,
      is_fallback: true,
      sort_order: 2,
      allowed_api_key_hashes: null,
      allowed_models: ['openai/gpt-4o'],
      allowed_user_ids: null,
      declared_zdr: true,
      is_byok_only: false,
      is_required: false,
      created_at: created.created_at,
    });
    expect(JSON.stringify(body)).not.toContain('Zx81bQe9');

    const row = await server.db.byokCredential.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.secret_ciphertext).not.toContain(PROVIDER_KEY);
    expect(row.secret_ciphertext).toMatch(/^v1\.[0-9a-f]{16}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    // The server's key (generated under DATA_DIR) opens it, bound to this row's id only.
    const box = await serverBox();
    expect(box.open(row.secret_ciphertext, row.id)).toBe(PROVIDER_KEY);
    expect(() => box.open(row.secret_ciphertext, '00000000-0000-4000-8000-000000000000')).toThrow();
    // Nothing the server logged carries the secret.
    expect(JSON.stringify(server.logs)).not.toContain('Zx81bQe9');
  });

  it('rotating the secret changes the label and ciphertext; disabling shows disabled', async () => {
    const created = await ok(server, 'byok.create', { provider: 'anthropic', name: 'A', key: 'sk-ant-first-secret-1111' });
    const before = await server.db.byokCredential.findUniqueOrThrow({ where: { id: created.id } });
    const rotated = await ok(server, 'byok.rotateSecret', { id: created.id, key: 'sk-ant-second-secret-2222' });
    // 25 characters: at most 6 shown.
    expect(rotated.label).toBe('sk...2222');
    const after = await server.db.byokCredential.findUniqueOrThrow({ where: { id: created.id } });
    expect(after.secret_ciphertext).not.toBe(before.secret_ciphertext);
    expect((await serverBox()).open(after.secret_ciphertext, after.id)).toBe('sk-ant-second-secret-2222');

    expect((await ok(server, 'byok.disable', { id: created.id })).disabled).toBe(true);
    expect((await rest(server, `/byok/${created.id}`)).body.data.disabled).toBe(true);
    expect((await ok(server, 'byok.disable', { id: created.id, disabled: false })).disabled).toBe(false);
  });

  it('creates in a named workspace (slug or UUID); 400 for a short key or bad lists', async () => {
    const ws = await createWorkspace(server, 'byok-ws');
    expect((await ok(server, 'byok.create', { workspace_id: 'byok-ws', provider: 'x', name: 'x', key: '12345678' })).workspace_id).toBe(ws.id);
    expect((await trpc(server, 'byok.create', { provider: 'x', name: 'x', key: 'short' })).status).toBe(400);
    expect((await trpc(server, 'byok.create', { provider: 'x', name: 'x', key: '12345678', allowed_api_key_hashes: ['nothex'] })).status).toBe(400);
    expect((await trpc(server, 'byok.create', { workspace_id: other.workspaceId, provider: 'x', name: 'x', key: '12345678' })).status).toBe(404);
  });

  it('404 for non-UUID, unknown and foreign ids (never 500); 401 without a key; 403 for a regular key', async () => {
    const theirs = await ok(server, 'byok.create', { provider: 'openai', name: 'theirs', key: 'sk-theirs-000000' }, { key: other.managementKey });
    expectEnvelope(await rest(server, `/byok/${theirs.id}`), 404);
    expect((await rest(server, `/byok/${theirs.id}`, { key: other.managementKey })).status).toBe(200);
    expect((await trpc(server, 'byok.rotateSecret', { id: theirs.id, key: 'sk-hijacked-0000' })).status).toBe(404);
    expect((await trpc(server, 'byok.disable', { id: theirs.id })).status).toBe(404);
    for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000', "1'%20OR%201=1", '%20']) {
      expectEnvelope(await rest(server, `/byok/${id}`), 404);
    }
    expectEnvelope(await rest(server, `/byok/${theirs.id}`, { key: null }), 401);
    const { key } = await createRegularKey(server);
    expectEnvelope(await rest(server, `/byok/${theirs.id}`, { key }), 403);
    expect((await trpc(server, 'byok.create', { provider: 'x', name: 'x', key: '12345678' }, { key })).status).toBe(403);
  });

  it('after a key rotation, old secrets still open and resealSecrets moves them to the new key', async () => {
    const created = await ok(server, 'byok.create', { provider: 'openai', name: 'rotating', key: 'sk-rotate-me-9876' });
    const oldBox = await serverBox();
    const newKey = randomBytes(32);
    const ring = new SecretBox([newKey, parseSecretKey(await fs.readFile(path.join(server.dataDir, SECRET_KEY_FILE), 'utf8'))]);
    const actor = await managementActor(server);
    const { resealed } = await resealByokSecrets(server.db, ring, actor);
    expect(resealed).toBeGreaterThanOrEqual(1);
    const row = await server.db.byokCredential.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.secret_ciphertext.startsWith(`v1.${ring.currentKeyId}.`)).toBe(true);
    expect(new SecretBox([newKey]).open(row.secret_ciphertext, row.id)).toBe('sk-rotate-me-9876');
    expect(() => oldBox.open(row.secret_ciphertext, row.id)).toThrow(/no secret key/);
    // Only this organization's secrets were touched, and a second pass has nothing left to do.
    expect((await server.db.byokCredential.findFirstOrThrow({ where: { organization_id: other.organizationId } })).secret_ciphertext)
      .toMatch(new RegExp(`^v1\\.${oldBox.currentKeyId}\\.`));
    expect(await resealByokSecrets(server.db, ring, actor)).toEqual({ resealed: 0 });
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
