// Containers, container file downloads and promotion to workspace documents, over real HTTP, with
// the bytes in each store (the local directory, and S3 on the test process's S3 server).
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFileSchema, ErrorEnvelopeSchema, FileCompatASchema, FileCompatBSchema, FileNativeSchema } from '@switchyard/schema';
import { TEST_STORES, type TestServer, type TestStore } from '../../src/testing/test-server.js';
import { createOrganization, type OrgFixture, until } from '../fixtures.js';
import { fileIdOf, openContainer, putFile, readStored, sha256, storedKeys, testServerWith, writeFile } from '../fixtures-files.js';
import { trpc, trpcRaw } from '../fixtures-trpc.js';

const MAX_FILE = 64 * 1024;
const QUOTA = 256 * 1024;
/** Above one S3 part (5 MiB), so that a broken upload is a multipart upload under way. */
const CONTAINER_FILE_MAX = 8 * 1024 * 1024;

describe.each(TEST_STORES)('%s store', (store: TestStore) => {
  let server: TestServer;
  let other: OrgFixture;
  beforeAll(async () => {
    server = await testServerWith(
      {
        MAX_FILE_BYTES: String(MAX_FILE),
        STORAGE_QUOTA_BYTES: String(QUOTA),
        CONTAINER_FILE_MAX_BYTES: String(CONTAINER_FILE_MAX),
      },
      store,
    );
    other = await createOrganization(server.db);
  });
  afterAll(async () => {
    await server?.close();
  });

  async function expectError(res: Response, status: number, message: string) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = ErrorEnvelopeSchema.parse(await res.json());
    expect(body.error).toMatchObject({ code: status, message });
    return body;
  }

  const content = (containerId: string, fileId: string, init?: Parameters<TestServer['request']>[1]) =>
    server.request(`/api/v1/containers/${containerId}/files/${fileId}/content`, init);
  const promote = (containerId: string, fileId: string, init?: Parameters<TestServer['request']>[1]) =>
    server.request(`/api/v1/containers/${containerId}/files/${fileId}/promote`, { method: 'POST', ...init });

  /** A regular (non-management) key of the server's organization, in its default workspace. */
  async function regularKey(): Promise<string> {
    const { data } = await trpc(server, 'keys.create', { name: 'regular' });
    return data.key;
  }

  /** Raw HTTP, so that the path reaches the server exactly as written (fetch normalises dot segments). */
  function rawGet(pathname: string): Promise<{ status: number; body: string }> {
    const url = new URL(server.url);
    return new Promise((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path: pathname, headers: { authorization: `Bearer ${server.managementKey}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  async function documentState(workspaceId: string) {
    const [documents, workspace] = await Promise.all([
      server.db.document.findMany({ where: { workspace_id: workspaceId } }),
      server.db.workspace.findUniqueOrThrow({ where: { id: workspaceId } }),
    ]);
    const stored = await storedKeys(server, `documents/${workspaceId}/`);
    return { documents, used: Number(workspace.storage_used_bytes), stored };
  }

  describe('containers (internal)', () => {
    it('opens the same container for the same session key, and a new one on restart', async () => {
      const id = await openContainer(server, 'session-one');
      expect(id).toBe('sess_session-one');
      expect(await openContainer(server, 'session-one')).toBe(id);
      const restarted = await openContainer(server, 'session-one', { restart: true });
      expect(restarted).toMatch(/^sess_session-one-r[0-9a-f]{12}$/);
      const sanitised = await openContainer(server, 'chat/42 @ home');
      expect(sanitised).toMatch(/^sess_chat_42___home_[0-9a-f]{12}$/);
      // Each id names its own sandbox.
      await writeFile(server, id, 'same.txt', Buffer.from('first'));
      await writeFile(server, restarted, 'same.txt', Buffer.from('restarted'));
      expect(await (await content(id, fileIdOf('same.txt'))).text()).toBe('first');
      expect(await (await content(restarted, fileIdOf('same.txt'))).text()).toBe('restarted');
    });

    it('lets only platform keys open containers and write files, in the organization they name', async () => {
      const key = await regularKey();
      for (const tenant of [key, server.managementKey, other.managementKey]) {
        const opened = await trpc(server, 'files.openContainer', { session_key: 'x', workspace_id: server.workspaceId }, { key: tenant });
        expect(opened.status).toBe(403);
        expect(opened.error?.message).toBe('Only platform keys can perform this operation');
      }
      expect((await trpcRaw(server, 'files.openContainer', { session_key: 'x' })).status).toBe(400);
      const id = await openContainer(server, 'writer-auth');
      for (const tenant of [key, server.managementKey, other.managementKey]) {
        await expectError(await putFile(server, id, fileIdOf('a'), Buffer.from('x'), { key: tenant }), 403, 'Only platform keys can perform this operation');
      }
      await expectError(await putFile(server, id, fileIdOf('a'), Buffer.from('x'), { key: null }), 401, 'Missing Authentication header');
      // The platform names the organization: another one's container of the same id is not this one.
      await expectError(await putFile(server, id, fileIdOf('a'), Buffer.from('x'), { organizationId: other.organizationId }), 404, 'Resource not found');
      await expectError(await putFile(server, id, fileIdOf('a'), Buffer.from('x'), { organizationId: null }), 400, 'Invalid request parameters');
      await expectError(await putFile(server, 'sess_nope', fileIdOf('a'), Buffer.from('x')), 404, 'Resource not found');
      expect(await server.db.containerFile.count({ where: { container: { container_id: id } } })).toBe(0);
    });

    it('refuses unclean paths on the write side too, and replaces a file in place', async () => {
      const id = await openContainer(server, 'writer-paths');
      for (const bad of ['../escape', '/abs', 'a\\b', 'a\0b']) {
        await expectError(await putFile(server, id, fileIdOf(bad), Buffer.from('x')), 400, 'Invalid request parameters');
      }
      const first = await writeFile(server, id, 'out/r.txt', Buffer.from('v1'), 'text/plain; charset=utf-8');
      const res = await putFile(server, id, fileIdOf('out/r.txt'), Buffer.from('version 2'), { contentType: 'text/plain' });
      expect(res.status).toBe(201);
      const second = ContainerFileSchema.strict().parse(((await res.json()) as { data: unknown }).data);
      expect(second).toMatchObject({ container_id: id, file_id: first.file_id, path: 'out/r.txt', mime_type: 'text/plain', size_bytes: 9 });
      expect(await (await content(id, first.file_id)).text()).toBe('version 2');
      // The replaced bytes are gone: one stored object per file.
      const container = await server.db.container.findFirstOrThrow({ where: { container_id: id } });
      expect(await storedKeys(server, `containers/${container.id}/`)).toHaveLength(1);
    });
  });

  describe('container writes that fail', () => {
    async function containerState(containerId: string) {
      const container = await server.db.container.findFirstOrThrow({ where: { container_id: containerId } });
      const files = await server.db.containerFile.findMany({ where: { container_id: container.id } });
      const stored = await storedKeys(server, `containers/${container.id}/`);
      let temp = 0;
      for await (const _upload of server.storage.listTemporary()) temp++;
      return { files: files.length, stored: stored.length, temp };
    }

    it('answers 413 for a file over CONTAINER_FILE_MAX_BYTES and stores nothing, streamed or not', async () => {
      const id = await openContainer(server, 'too-big');
      await expectError(await putFile(server, id, fileIdOf('big.bin'), randomBytes(CONTAINER_FILE_MAX + 1)), 413, 'Request payload too large');
      async function* chunks() {
        for (let i = 0; i < 5; i++) yield randomBytes(CONTAINER_FILE_MAX / 4);
      }
      await expectError(await putFile(server, id, fileIdOf('big.bin'), chunks()), 413, 'Request payload too large');
      expect(await containerState(id)).toEqual({ files: 0, stored: 0, temp: 0 });
      expect((await putFile(server, id, fileIdOf('big.bin'), randomBytes(CONTAINER_FILE_MAX))).status).toBe(201);
    });

    it('leaves no row and no partial file when the upload breaks mid-body', async () => {
      const id = await openContainer(server, 'broken-upload');
      const url = new URL(`/internal/containers/${id}/files/${fileIdOf('partial.bin')}?organization_id=${server.organizationId}`, server.url);
      const req = http.request(url, {
        method: 'PUT',
        headers: { authorization: `Bearer ${server.platformKey}`, 'content-length': String(7 * 1024 * 1024) },
      });
      req.on('error', () => undefined);
      // More than one S3 part, so that S3 too has an upload under way (a multipart upload).
      req.write(randomBytes(5.5 * 1024 * 1024));
      // Until the server's unfinished upload appears, then until it is gone.
      await until(async () => (await containerState(id)).temp === 1, { everyMs: 20, what: 'the unfinished upload to appear' });
      req.destroy();
      await until(async () => (await containerState(id)).temp === 0, { everyMs: 20, what: 'the unfinished upload to be removed' });
      expect(await containerState(id)).toEqual({ files: 0, stored: 0, temp: 0 });
      await expectError(await content(id, fileIdOf('partial.bin')), 404, 'Resource not found');
    });
  });

  describe('GET /containers/{container_id}/files/{file_id}/content', () => {
    let containerId: string;
    const bytes = randomBytes(200_003);
    beforeAll(async () => {
      containerId = await openContainer(server, 'download');
      await writeFile(server, containerId, 'results/plot "final".bin', bytes);
    });

    it('streams the exact bytes as application/octet-stream with length and file name', async () => {
      const res = await content(containerId, fileIdOf('results/plot "final".bin'));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(res.headers.get('content-length')).toBe(String(bytes.length));
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="plot \\"final\\".bin"');
      const body = Buffer.from(await res.arrayBuffer());
      expect(body.length).toBe(bytes.length);
      expect(sha256(body)).toBe(sha256(bytes));
    });

    it('carries non-ASCII file names in filename*', async () => {
      await writeFile(server, containerId, 'données/résumé.txt', Buffer.from('ok'));
      const res = await content(containerId, fileIdOf('données/résumé.txt'));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toContain("filename*=UTF-8''r%C3%A9sum%C3%A9.txt");
    });

    it('answers a byte range with 206 and Content-Range, read as a range from the store', async () => {
      const id = fileIdOf('results/plot "final".bin');
      const whole = await content(containerId, id);
      const etag = whole.headers.get('etag');
      expect(etag).toBe(`"${sha256(bytes)}"`);
      expect(whole.headers.get('accept-ranges')).toBe('bytes');
      await whole.arrayBuffer();
      const size = bytes.length;
      const cases: Array<[string, number, number]> = [
        ['bytes=0-0', 0, 0],
        ['bytes=100-1099', 100, 1099],
        ['bytes=199000-', 199_000, size - 1],
        ['bytes=-10', size - 10, size - 1],
        ['bytes=200000-999999999', 200_000, size - 1],
      ];
      for (const [range, start, end] of cases) {
        const res = await content(containerId, id, { headers: { range } });
        expect(res.status, range).toBe(206);
        expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${size}`);
        expect(res.headers.get('content-length')).toBe(String(end - start + 1));
        expect(Buffer.from(await res.arrayBuffer()).equals(bytes.subarray(start, end + 1)), range).toBe(true);
      }
      // If-Range: the range only while the file is still the one the client has.
      const same = await content(containerId, id, { headers: { range: 'bytes=0-9', 'if-range': etag! } });
      expect(same.status).toBe(206);
      await same.arrayBuffer();
      // Anything else is ignored and the whole file is served.
      const ignored: Array<Record<string, string>> = [
        { range: `bytes=${size}-` },
        { range: 'bytes=10-5' },
        { range: 'bytes=0-1,5-6' },
        { range: 'items=0-1' },
        { range: 'bytes=-0' },
        { range: 'bytes=0-9', 'if-range': '"another version"' },
      ];
      for (const headers of ignored) {
        const res = await content(containerId, id, { headers });
        expect(res.status, JSON.stringify(headers)).toBe(200);
        expect(res.headers.get('content-range')).toBeNull();
        expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(bytes));
      }
    });

    it('answers 401 without a key, 404 for unknown containers and files and for another organization', async () => {
      const id = fileIdOf('results/plot "final".bin');
      await expectError(await content(containerId, id, { key: null }), 401, 'Missing Authentication header');
      await expectError(await content(containerId, id, { key: 'sk-sy-v1-wrong' }), 401, 'Missing Authentication header');
      await expectError(await content('sess_unknown', id), 404, 'Resource not found');
      await expectError(await content(containerId, fileIdOf('results/missing.bin')), 404, 'Resource not found');
      await expectError(await content(containerId, id, { key: other.managementKey }), 404, 'Resource not found');
    });

    it("keeps a regular key to its own workspace's containers", async () => {
      const key = await regularKey();
      const id = fileIdOf('results/plot "final".bin');
      expect((await content(containerId, id, { key })).status).toBe(200);
      const ws = await server.db.workspace.create({
        data: { organization_id: (await server.db.container.findFirstOrThrow()).organization_id, slug: 'side', name: 'Side' },
      });
      const { data } = await trpc(server, 'files.openContainer', {
        session_key: 'side-session',
        workspace_id: ws.id,
      });
      await writeFile(server, data.data.container_id, 'a.txt', Buffer.from('a'));
      await expectError(await content(data.data.container_id, fileIdOf('a.txt'), { key }), 404, 'Resource not found');
      expect((await content(data.data.container_id, fileIdOf('a.txt'))).status).toBe(200);
    });

    const traversal: Array<[string, string]> = [
      ['a ".." segment', fileIdOf('../download/x')],
      ['a ".." inside', fileIdOf('results/../../etc/passwd')],
      ['an absolute path', fileIdOf('/etc/passwd')],
      ['a NUL byte', fileIdOf('results/plot.bin\0.txt')],
      ['backslashes', fileIdOf('..\\..\\etc\\passwd')],
      ['bad base64url', 'cfile_not*base64'],
      ['standard base64', `cfile_${Buffer.from('results/>>?').toString('base64')}`.replace(/=+$/, '')],
      ['an empty path', 'cfile_'],
      ['no cfile_ prefix', Buffer.from('results/x').toString('base64url')],
      ['a percent-encoded ".."', 'cfile_%2E%2E'],
      ['a percent-encoded slash', `cfile_${'Li4'}%2F${'Li4'}`],
      ['a percent-encoded NUL', 'cfile_%00'],
      ['a double-encoded id', `cfile_%25${'32'}`],
      ['a percent-encoded backslash', 'cfile_%5C'],
    ];
    it.each(traversal)('answers 400 for %s, on download and on promote', async (_what, fileId) => {
      await expectError(await content(containerId, fileId), 400, 'Invalid request parameters');
      await expectError(await promote(containerId, fileId), 400, 'Invalid request parameters');
    });

    it('answers 400 for a malformed percent-encoding in the file id', async () => {
      await expectError(await content(containerId, 'cfile_%E0%A4%A'), 400, 'Invalid request parameters');
      await expectError(await promote(containerId, 'cfile_%E0%A4%A'), 400, 'Invalid request parameters');
    });

    it('cannot be walked out of with dot segments or encoded slashes in the URL', async () => {
      const id = fileIdOf('results/plot "final".bin');
      // Dot segments in the URL path never reach another route's handler with a 200.
      for (const pathname of [
        `/api/v1/containers/${containerId}/files/../../../key/content`,
        `/api/v1/containers/${containerId}/files/%2E%2E%2F%2E%2E%2Fkey/content`,
        `/api/v1/containers/..%2F${containerId}/files/${id}/content`,
        `/api/v1/containers/${containerId}%2F..%2Fdownload/files/${id}/content`,
      ]) {
        const res = await rawGet(pathname);
        expect([400, 404], pathname).toContain(res.status);
        expect(ErrorEnvelopeSchema.parse(JSON.parse(res.body)).error.code).toBe(res.status);
      }
    });
  });

  describe('POST /containers/{container_id}/files/{file_id}/promote', () => {
    let containerId: string;
    let workspaceId: string;
    beforeAll(async () => {
      containerId = await openContainer(server, 'promote');
      workspaceId = (await server.db.container.findFirstOrThrow({ where: { container_id: containerId } })).workspace_id;
    });

    it('copies the file into a durable document, native shape by default, with no body and no Content-Type', async () => {
      const bytes = randomBytes(5000);
      await writeFile(server, containerId, 'reports/summary.csv', bytes, 'text/csv');
      const before = await documentState(workspaceId);
      const res = await promote(containerId, fileIdOf('reports/summary.csv'));
      expect(res.status).toBe(200);
      const file = FileNativeSchema.strict().parse(await res.json());
      expect(file).toMatchObject({
        _shape: 'native',
        type: 'file',
        filename: 'summary.csv',
        mime_type: 'text/csv',
        size_bytes: 5000,
        downloadable: true,
      });
      expect(file.id).toMatch(/^file_[0-9a-f]{24}$/);
      expect(new Date(file.created_at).toISOString()).toBe(file.created_at);
      const after = await documentState(workspaceId);
      expect(after.used - before.used).toBe(5000);
      const document = after.documents.find((d) => d.id === file.id)!;
      expect(document.sha256).toBe(sha256(bytes));
      // The copy outlives the container.
      await server.db.container.deleteMany({ where: { container_id: containerId } });
      expect(await server.db.document.findUnique({ where: { id: file.id } })).not.toBeNull();
      expect(sha256(await readStored(server, document.storage_key))).toBe(sha256(bytes));
      containerId = await openContainer(server, 'promote-2');
    });

    it('answers compat_a with an anthropic-version header and compat_b for OpenAI SDK requests', async () => {
      await writeFile(server, containerId, 'img/chart.png', randomBytes(100), 'image/png');
      const id = fileIdOf('img/chart.png');

      const a = await promote(containerId, id, { headers: { 'anthropic-version': '2023-06-01' } });
      expect(a.status).toBe(200);
      const fileA = FileCompatASchema.strict().parse(await a.json());
      expect(fileA).toMatchObject({ _shape: 'compat_a', type: 'file', filename: 'chart.png', mime_type: 'image/png', size_bytes: 100, downloadable: true });

      for (const headers of [
        { 'openai-beta': 'assistants=v2' } as Record<string, string>,
        { 'user-agent': 'OpenAI/Python 1.52.0', 'x-stainless-lang': 'python', 'x-stainless-package-version': '1.52.0' },
      ]) {
        const b = await promote(containerId, id, { headers });
        expect(b.status).toBe(200);
        const fileB = FileCompatBSchema.strict().parse(await b.json());
        expect(fileB).toEqual({
          _shape: 'compat_b',
          id: fileA.id,
          object: 'file',
          bytes: 100,
          created_at: Math.floor(Date.parse(fileA.created_at) / 1000),
          filename: 'chart.png',
          purpose: 'assistants_output',
          status: 'processed',
        });
      }
      // A User-Agent alone, or x-stainless headers without the OpenAI User-Agent, is not an OpenAI SDK.
      const notOpenAi: Array<Record<string, string>> = [{ 'user-agent': 'OpenAI/Python 1.52.0' }, { 'x-stainless-lang': 'js', 'user-agent': 'curl/8' }];
      for (const headers of notOpenAi) {
        const n = await promote(containerId, id, { headers });
        expect(((await n.json()) as { _shape: string })._shape).toBe('native');
      }
    });

    it('returns the first document when the same unchanged file is promoted again; a rewritten file makes a new one', async () => {
      await writeFile(server, containerId, 'twice.txt', Buffer.from('same bytes'));
      const before = await documentState(workspaceId);
      const first = (await (await promote(containerId, fileIdOf('twice.txt'))).json()) as { id: string };
      const again = (await (await promote(containerId, fileIdOf('twice.txt'))).json()) as { id: string };
      expect(again.id).toBe(first.id);
      const mid = await documentState(workspaceId);
      expect(mid.documents.length - before.documents.length).toBe(1);
      expect(mid.used - before.used).toBe(10);

      await writeFile(server, containerId, 'twice.txt', Buffer.from('other bytes!'));
      const third = (await (await promote(containerId, fileIdOf('twice.txt'))).json()) as { id: string; size_bytes: number };
      expect(third.id).not.toBe(first.id);
      expect(third.size_bytes).toBe(12);
      expect((await documentState(workspaceId)).used - before.used).toBe(22);
    });

    it('makes one document when the same file is promoted twice at once', async () => {
      await writeFile(server, containerId, 'race.txt', randomBytes(1000));
      const before = await documentState(workspaceId);
      const answers = await Promise.all([1, 2, 3].map(() => promote(containerId, fileIdOf('race.txt'))));
      const ids = await Promise.all(answers.map(async (r) => ((await r.json()) as { id: string }).id));
      expect(new Set(ids).size).toBe(1);
      const after = await documentState(workspaceId);
      expect(after.documents.length - before.documents.length).toBe(1);
      expect(after.stored.length - before.stored.length).toBe(1);
      expect(after.used - before.used).toBe(1000);
    });

    it('answers 413 and stores nothing for a file over the maximum size', async () => {
      await writeFile(server, containerId, 'huge.bin', randomBytes(MAX_FILE + 1));
      await writeFile(server, containerId, 'max.bin', randomBytes(MAX_FILE));
      const before = await documentState(workspaceId);
      await expectError(await promote(containerId, fileIdOf('huge.bin')), 413, 'Request payload too large');
      expect(await documentState(workspaceId)).toEqual(before);
      expect((await promote(containerId, fileIdOf('max.bin'))).status).toBe(200);
    });

    it('keeps the quota exact under concurrent promotions that together exceed it', async () => {
      const ws = await server.db.workspace.create({
        data: { organization_id: other.organizationId, slug: 'quota', name: 'Quota', storage_quota_bytes: 100_000 },
      });
      const id = await openContainer(server, 'quota', { workspaceId: ws.id });
      const write = (p: string, n: number) =>
        putFile(server, id, fileIdOf(p), randomBytes(n), { organizationId: other.organizationId }).then((r) => expect(r.status).toBe(201));
      await write('a.bin', 60_000);
      await write('b.bin', 60_000);
      await write('c.bin', 40_000);
      for (let round = 0; round < 3; round++) {
        await server.db.document.deleteMany({ where: { workspace_id: ws.id } });
        for (const key of await storedKeys(server, `documents/${ws.id}/`)) await server.storage.delete(key);
        await server.db.workspace.update({ where: { id: ws.id }, data: { storage_used_bytes: 0 } });
        const answers = await Promise.all(['a.bin', 'b.bin'].map((p) => promote(id, fileIdOf(p), { key: other.managementKey })));
        const statuses = answers.map((r) => r.status).sort();
        expect(statuses).toEqual([200, 413]);
        const refused = answers.find((r) => r.status === 413)!;
        await expectError(refused, 413, 'Request payload too large');
        const state = await documentState(ws.id);
        expect(state.documents).toHaveLength(1);
        expect(state.stored).toHaveLength(1);
        expect(state.used).toBe(60_000);
      }
      // 60,000 + 40,000 fits exactly.
      expect((await promote(id, fileIdOf('c.bin'), { key: other.managementKey })).status).toBe(200);
      const state = await documentState(ws.id);
      expect(state.used).toBe(100_000);
      expect(state.documents.reduce((sum, d) => sum + Number(d.size_bytes), 0)).toBe(100_000);
      expect(state.stored).toHaveLength(2);
    });

    it('uses the configured default quota for workspaces without their own', async () => {
      const before = await documentState(workspaceId);
      await server.db.workspace.update({ where: { id: workspaceId }, data: { storage_used_bytes: QUOTA - 10 } });
      await writeFile(server, containerId, 'eleven.txt', Buffer.from('eleven bytes'.slice(0, 11)));
      await expectError(await promote(containerId, fileIdOf('eleven.txt')), 413, 'Request payload too large');
      await writeFile(server, containerId, 'ten.txt', Buffer.from('ten bytes!'));
      expect((await promote(containerId, fileIdOf('ten.txt'))).status).toBe(200);
      expect((await documentState(workspaceId)).used).toBe(QUOTA);
      await server.db.workspace.update({ where: { id: workspaceId }, data: { storage_used_bytes: before.used } });
    });

    it('answers 503 when document storage is unavailable, and leaves no row and no quota behind', async () => {
      await writeFile(server, containerId, 'unavailable.txt', Buffer.from('bytes'));
      const before = await documentState(workspaceId);
      const restore = await server.breakStorage('documents');
      try {
        await expectError(await promote(containerId, fileIdOf('unavailable.txt')), 503, 'Service temporarily unavailable');
        const after = await server.db.document.findMany({ where: { workspace_id: workspaceId } });
        expect(after).toHaveLength(before.documents.length);
        expect(Number((await server.db.workspace.findUniqueOrThrow({ where: { id: workspaceId } })).storage_used_bytes)).toBe(before.used);
      } finally {
        await restore();
      }
      expect((await promote(containerId, fileIdOf('unavailable.txt'))).status).toBe(200);
    });

    it('answers 401 without a key and 404 for unknown or foreign containers and files', async () => {
      await writeFile(server, containerId, 'private.txt', Buffer.from('x'));
      const id = fileIdOf('private.txt');
      await expectError(await promote(containerId, id, { key: null }), 401, 'Missing Authentication header');
      await expectError(await promote('sess_nobody', id), 404, 'Resource not found');
      await expectError(await promote(containerId, fileIdOf('nothing.txt')), 404, 'Resource not found');
      await expectError(await promote(containerId, id, { key: other.managementKey }), 404, 'Resource not found');
    });

    it('is documented in the OpenAPI document', async () => {
      const doc = (await (await server.request('/api/v1/openapi.json', { key: null })).json()) as {
        paths: Record<string, Record<string, { tags?: string[] }>>;
      };
      expect(doc.paths['/containers/{container_id}/files/{file_id}/promote']?.post?.tags).toEqual(['Containers']);
    });

    it('answers the same through tRPC', async () => {
      await writeFile(server, containerId, 'trpc.txt', Buffer.from('via trpc'));
      const ok = await trpc(server, 'files.promote', {
        container_id: containerId,
        file_id: fileIdOf('trpc.txt'),
      });
      expect(ok.status).toBe(200);
      expect(ok.data).toMatchObject({ _shape: 'native', filename: 'trpc.txt', size_bytes: 8 });
      const bad = await trpc(server, 'files.promote', { container_id: containerId, file_id: fileIdOf('../x') });
      expect(bad.status).toBe(400);
    });
  });
});
