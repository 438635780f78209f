// Workspace documents over real HTTP: GET /files, GET /files/{file_id}, GET /files/{file_id}/content
// and DELETE /files/{file_id}, in the three File shapes; the quota a delete frees; who sees what.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DocumentDeletionSchema, type DocumentPage, DocumentPageSchema, ErrorEnvelopeSchema, FileCompatBSchema, FileNativeSchema } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TestServer } from '../../src/testing/test-server.js';
import { createOrganization, type OrgFixture } from '../fixtures.js';
import { fileIdOf, openContainer, sha256, testServerWith, writeFile } from '../fixtures-files.js';
import { trpc } from '../fixtures-trpc.js';

const QUOTA = 64 * 1024;
const COMPAT_A = { 'anthropic-version': '2023-06-01' };
const COMPAT_B = { 'openai-beta': 'assistants=v2' };

let server: TestServer;
let other: OrgFixture;
let containerId: string;
let regular: string;

beforeAll(async () => {
  server = await testServerWith({ STORAGE_QUOTA_BYTES: String(QUOTA), MAX_FILE_BYTES: String(QUOTA) });
  other = await createOrganization(server.db);
  containerId = await openContainer(server, 'documents');
  regular = (await trpc(server, 'keys.create', { name: 'regular' })).data.key;
});
afterAll(async () => {
  await server?.close();
});

let sequence = 0;
/** A new document: a fresh container file (written as the platform), promoted; its id and bytes. */
async function newDocument(size = 100, container = containerId, key = server.managementKey): Promise<{ id: string; bytes: Buffer }> {
  const bytes = randomBytes(size);
  const file = `docs/${sequence++}-${Date.now()}.bin`;
  await writeFile(server, container, file, bytes);
  const res = await server.request(`/api/v1/containers/${container}/files/${fileIdOf(file)}/promote`, { method: 'POST', key });
  expect(res.status, await res.clone().text()).toBe(200);
  return { id: ((await res.json()) as { id: string }).id, bytes };
}

async function call(method: string, url: string, key: string | null = server.managementKey, headers: Record<string, string> = {}) {
  const res = await server.request(`/api/v1${url}`, { method, key, headers });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, body: (await res.json()) as unknown };
}
const get = (url: string, key?: string | null, headers?: Record<string, string>) => call('GET', url, key, headers);
const del = (url: string, key?: string | null, headers?: Record<string, string>) => call('DELETE', url, key, headers);

function expectError(answer: { status: number; body: unknown }, status: number) {
  expect(answer.status).toBe(status);
  expect(ErrorEnvelopeSchema.parse(answer.body).error.code).toBe(status);
}

async function workspaceState(workspaceId: string) {
  const workspace = await server.db.workspace.findUniqueOrThrow({ where: { id: workspaceId } });
  const stored = await fs.readdir(path.join(server.dataDir, 'blobs', 'documents', workspaceId)).catch(() => [] as string[]);
  return { used: Number(workspace.storage_used_bytes), stored };
}

describe('GET /files', () => {
  let workspace: { id: string; slug: string };
  let container: string;
  let ids: string[];
  beforeAll(async () => {
    workspace = (await trpc(server, 'workspaces.create', { slug: `docs-${Date.now()}`, name: 'Docs' })).data.data;
    container = await openContainer(server, `list-${Date.now()}`, { workspaceId: workspace.id });
    ids = [];
    for (let i = 0; i < 5; i++) ids.push((await newDocument(10, container)).id);
  });

  it('lists the documents promote made, oldest first, as a bare native page', async () => {
    const { status, body } = await get(`/files?workspace_id=${workspace.id}&limit=100`);
    expect(status).toBe(200);
    const page = DocumentPageSchema.parse(body);
    expect(page).toMatchObject({ _shape: 'native', cursor: null, first_id: ids[0], last_id: ids[4], has_more: false });
    expect(page.data.map((f) => f.id)).toEqual(ids);
    for (const file of page.data) expect(FileNativeSchema.strict().parse(file)).toMatchObject({ _shape: 'native', downloadable: true, size_bytes: 10 });
    // The slug names the same workspace.
    expect(DocumentPageSchema.parse((await get(`/files?workspace_id=${workspace.slug}`)).body).data).toHaveLength(5);
  });

  it('pages by cursor (native), by after (compat_b) and by after_id (compat_a), each file once', async () => {
    const walk = async (headers: Record<string, string>, next: (page: DocumentPage & { cursor?: string | null }) => string) => {
      const seen: string[] = [];
      let query = '';
      for (let i = 0; i < 10; i++) {
        const { status, body } = await get(`/files?workspace_id=${workspace.id}&limit=2${query}`, undefined, headers);
        expect(status).toBe(200);
        const page = DocumentPageSchema.parse(body);
        for (const file of page.data) expect(file._shape).toBe(page._shape);
        seen.push(...page.data.map((f) => f.id));
        if (!page.has_more) break;
        query = next(page);
      }
      return seen;
    };
    expect(await walk({}, (b) => `&cursor=${b.cursor}`)).toEqual(ids);
    expect(await walk(COMPAT_B, (b) => `&after=${b.last_id}`)).toEqual(ids);
    expect(await walk(COMPAT_A, (b) => `&after_id=${b.last_id}`)).toEqual(ids);
  });

  it('answers the compat_b page with object "list" and compat_b files; compat_a without a cursor', async () => {
    const b = (await get(`/files?workspace_id=${workspace.id}&limit=1`, undefined, COMPAT_B)).body;
    expect(Object.keys(z.looseObject({}).parse(b)).sort()).toEqual(['_shape', 'data', 'first_id', 'has_more', 'last_id', 'object']);
    expect(b).toMatchObject({ _shape: 'compat_b', object: 'list', has_more: true });
    expect(FileCompatBSchema.strict().parse(DocumentPageSchema.parse(b).data[0])).toMatchObject({
      object: 'file',
      bytes: 10,
      status: 'processed',
      purpose: 'assistants_output',
    });
    const a = (await get(`/files?workspace_id=${workspace.id}&limit=1`, undefined, COMPAT_A)).body;
    expect(Object.keys(z.looseObject({}).parse(a)).sort()).toEqual(['_shape', 'data', 'first_id', 'has_more', 'last_id']);
    expect(DocumentPageSchema.parse(a).data[0]!._shape).toBe('compat_a');
  });

  it('an empty workspace: an empty page, ids null', async () => {
    const empty = (await trpc(server, 'workspaces.create', { slug: `empty-${Date.now()}`, name: 'Empty' })).data.data;
    expect((await get(`/files?workspace_id=${empty.id}`)).body).toEqual({
      _shape: 'native',
      data: [],
      cursor: null,
      first_id: null,
      last_id: null,
      has_more: false,
    });
  });

  it('400 for what platform storage does not do, and for bad paging parameters', async () => {
    for (const query of [
      'limit=0',
      'limit=1001',
      'order=desc',
      `before_id=${ids[1]}`,
      'provider=openai',
      'cursor=bm9wZQ',
      'after=file_unknown',
      `after_id=${ids[0]}&after=${ids[1]}`,
    ]) {
      expectError(await get(`/files?workspace_id=${workspace.id}&${query}`), 400);
    }
    expect((await get(`/files?workspace_id=${workspace.id}&order=asc`)).status).toBe(200);
  });

  it('401 without a key; a regular key lists its own workspace only (403 elsewhere); another organization: 400 for this workspace (404 is not listed)', async () => {
    expectError(await get('/files', null), 401);
    expect((await get('/files', regular)).status).toBe(200);
    expectError(await get(`/files?workspace_id=${workspace.id}`, regular), 403);
    expectError(await get(`/files?workspace_id=${workspace.id}`, other.managementKey), 400);
    expect((await get('/files', other.managementKey)).body).toHaveProperty('data', []);
    expectError(await get('/files', server.platformKey), 403);
  });
});

describe('GET /files/{file_id} and /content', () => {
  it('answers the File itself, bare, in each shape', async () => {
    const { id } = await newDocument(123);
    const native = await get(`/files/${id}`);
    expect(native.status).toBe(200);
    expect(FileNativeSchema.strict().parse(native.body)).toMatchObject({ _shape: 'native', id, size_bytes: 123, downloadable: true, type: 'file' });
    expect((await get(`/files/${id}`, undefined, COMPAT_A)).body).toMatchObject({ _shape: 'compat_a', id });
    expect(FileCompatBSchema.strict().parse((await get(`/files/${id}`, undefined, COMPAT_B)).body)).toMatchObject({ id, bytes: 123 });
  });

  it('streams the exact bytes as application/octet-stream', async () => {
    const { id, bytes } = await newDocument(40_000);
    const res = await server.request(`/api/v1/files/${id}/content`, { key: server.managementKey, headers: { accept: 'application/octet-stream' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-length')).toBe(String(bytes.length));
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=/);
    expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(sha256(bytes));
    // A range, as for container files.
    const part = await server.request(`/api/v1/files/${id}/content`, { key: server.managementKey, headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(100, 200))).toBe(true);
  });

  it('404 for an unknown file, for a file of another workspace than the one named, and for another organization', async () => {
    const { id } = await newDocument();
    const elsewhere = (await trpc(server, 'workspaces.create', { slug: `else-${Date.now()}`, name: 'Else' })).data.data;
    for (const url of ['/files/file_unknown', `/files/${id}?workspace_id=${elsewhere.id}`]) {
      expectError(await get(url), 404);
      expectError(await get(`${url.replace('?', '/content?')}${url.includes('?') ? '' : '/content'}`), 404);
    }
    expectError(await get(`/files/${id}`, other.managementKey), 404);
    expectError(await get(`/files/${id}/content`, other.managementKey), 404);
    expectError(await get(`/files/${id}?workspace_id=nope`), 404);
  });

  it('400 for a provider on the bytes, 404 on the record (400 is not listed); 401 without a key; 403 for a regular key naming another workspace and for the platform key', async () => {
    const { id } = await newDocument();
    expectError(await get(`/files/${id}?provider=anthropic`), 404);
    expectError(await get(`/files/${id}/content?provider=anthropic`), 400);
    expectError(await get(`/files/${id}`, null), 401);
    expectError(await get(`/files/${id}/content`, null), 401);
    expect((await get(`/files/${id}`, regular)).status).toBe(200);
    const elsewhere = (await trpc(server, 'workspaces.create', { slug: `rk-${Date.now()}`, name: 'RK' })).data.data;
    expectError(await get(`/files/${id}?workspace_id=${elsewhere.id}`, regular), 403);
    expectError(await get(`/files/${id}/content?workspace_id=${elsewhere.id}`, regular), 403);
    expectError(await get(`/files/${id}`, server.platformKey), 403);
  });
});

describe('DELETE /files/{file_id}', () => {
  it('answers the deletion in each shape, and the file is gone', async () => {
    for (const [headers, want] of [
      [{}, { _shape: 'native', type: 'file_deleted' }],
      [COMPAT_A, { _shape: 'compat_a', type: 'file_deleted' }],
      [COMPAT_B, { _shape: 'compat_b', object: 'file', deleted: true }],
    ] as const) {
      const { id } = await newDocument();
      const answer = await del(`/files/${id}`, undefined, headers);
      expect(answer.status).toBe(200);
      expect(DocumentDeletionSchema.parse(answer.body)).toEqual({ ...want, id });
      expectError(await get(`/files/${id}`), 404);
      expectError(await get(`/files/${id}/content`), 404);
      expectError(await del(`/files/${id}`), 404);
    }
  });

  it('frees the quota at once and removes the stored bytes', async () => {
    const workspace = (await trpc(server, 'workspaces.create', { slug: `quota-${Date.now()}`, name: 'Quota' })).data.data;
    const container = await openContainer(server, `quota-${Date.now()}`, { workspaceId: workspace.id });
    const first = await newDocument(QUOTA / 2, container);
    await newDocument(QUOTA / 2, container);
    expect(await workspaceState(workspace.id)).toMatchObject({ used: QUOTA });
    expect((await workspaceState(workspace.id)).stored).toHaveLength(2);
    // Full: the next promotion is refused.
    await writeFile(server, container, 'third.bin', randomBytes(10));
    const refused = await server.request(`/api/v1/containers/${container}/files/${fileIdOf('third.bin')}/promote`, {
      method: 'POST',
      key: server.managementKey,
    });
    expect(refused.status).toBe(413);
    expect((await del(`/files/${first.id}?workspace_id=${workspace.id}`)).status).toBe(200);
    const after = await workspaceState(workspace.id);
    expect(after).toMatchObject({ used: QUOTA / 2 });
    expect(after.stored).toHaveLength(1);
    // And the space is usable again.
    const again = await server.request(`/api/v1/containers/${container}/files/${fileIdOf('third.bin')}/promote`, { method: 'POST', key: server.managementKey });
    expect(again.status).toBe(200);
  });

  it('two concurrent deletes of one file free its bytes once', async () => {
    const before = (await workspaceState(server.workspaceId)).used;
    const { id } = await newDocument(1000);
    const answers = await Promise.all([del(`/files/${id}`), del(`/files/${id}`)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404]);
    expect((await workspaceState(server.workspaceId)).used).toBe(before);
  });

  it('401 without a key; another organization: 404; a regular key in its own workspace only; the platform key: 403', async () => {
    const { id } = await newDocument();
    expectError(await del(`/files/${id}`, null), 401);
    expectError(await del(`/files/${id}`, other.managementKey), 404);
    expectError(await del(`/files/${id}`, server.platformKey), 403);
    const elsewhere = (await trpc(server, 'workspaces.create', { slug: `del-${Date.now()}`, name: 'Del' })).data.data;
    expectError(await del(`/files/${id}?workspace_id=${elsewhere.id}`, regular), 403);
    expect((await del(`/files/${id}`, regular)).status).toBe(200);
  });
});

describe('timestamps', () => {
  it("come from the server clock: the document's created_at, the workspace's updated_at on promote and delete", async () => {
    const workspace = (await trpc(server, 'workspaces.create', { slug: `clock-${Date.now()}`, name: 'Clock' })).data.data;
    const container = await openContainer(server, `clock-${Date.now()}`, { workspaceId: workspace.id });
    const updatedAt = async () => (await server.db.workspace.findUniqueOrThrow({ where: { id: workspace.id } })).updated_at.toISOString();
    try {
      server.setNow(new Date('2026-04-05T06:07:08.009Z'));
      const { id } = await newDocument(100, container);
      expect((await get(`/files/${id}?workspace_id=${workspace.id}`)).body).toMatchObject({ id, created_at: '2026-04-05T06:07:08.009Z' });
      expect(await updatedAt()).toBe('2026-04-05T06:07:08.009Z');
      server.setNow(new Date('2026-04-06T00:00:00.000Z'));
      expect((await del(`/files/${id}?workspace_id=${workspace.id}`)).status).toBe(200);
      expect(await updatedAt()).toBe('2026-04-06T00:00:00.000Z');
    } finally {
      server.setNow(null);
    }
  });
});
