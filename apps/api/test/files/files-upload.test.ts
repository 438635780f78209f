// POST /files (platform-api.md D9) over real HTTP, in both stores: the File record in each shape,
// the type told from the bytes for every family, the 400s (empty, bad forms, unknown content,
// provider), the 413s (size bound, quota), who may upload where, that a refused or aborted upload
// leaves nothing (no row, no claim, no bytes, no temp upload), and that the file is listed by B7,
// refused by B9 and deleted by B10 with its quota freed.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DocumentPageSchema, ErrorEnvelopeSchema, FileCompatASchema, FileCompatBSchema, FileNativeSchema } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyText } from '../../src/modules/files/content-type.js';
import { TEST_STORES, type TestServer } from '../../src/testing/test-server.js';
import { createOrganization, until, type OrgFixture } from '../fixtures.js';
import { readStored, storedKeys, testServerWith } from '../fixtures-files.js';
import { trpc } from '../fixtures-trpc.js';
import { BINARY_SAMPLES, BOUNDARY, multipart, TEXT_SAMPLES, upload, uploadFile, type Answer } from '../fixtures-upload.js';

const MAX_FILE_BYTES = 512 * 1024;
const COMPAT_A = { 'anthropic-version': '2023-06-01' };
const COMPAT_B = { 'openai-beta': 'assistants=v2' };

function expectError(answer: Answer, status: number) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(ErrorEnvelopeSchema.strict().parse(answer.body).error.code).toBe(status);
}

for (const store of TEST_STORES) {
  describe(`POST /files (${store} store)`, () => {
    let server: TestServer;
    let other: OrgFixture;
    beforeAll(async () => {
      server = await testServerWith({ MAX_FILE_BYTES: String(MAX_FILE_BYTES) }, store);
      other = await createOrganization(server.db);
    });
    afterAll(async () => {
      await server?.close();
    });

    let sequence = 0;
    /** A new workspace of the server's organization (so listings and quotas start empty). */
    async function newWorkspace(quota?: number): Promise<{ id: string; slug: string }> {
      const workspace = (await trpc(server, 'workspaces.create', { slug: `up-${sequence++}-${Date.now()}`, name: 'Uploads' })).data.data as {
        id: string;
        slug: string;
      };
      if (quota !== undefined) await server.db.workspace.update({ where: { id: workspace.id }, data: { storage_quota_bytes: quota } });
      return workspace;
    }

    async function temporaries(): Promise<number> {
      let count = 0;
      for await (const _ of server.storage.listTemporary()) count++;
      return count;
    }

    /** Everything an upload into the workspace could have left: rows, quota, stored bytes, claims, temp uploads. */
    async function state(workspaceId: string) {
      const workspace = await server.db.workspace.findUniqueOrThrow({ where: { id: workspaceId } });
      return {
        rows: await server.db.document.count({ where: { workspace_id: workspaceId } }),
        used: Number(workspace.storage_used_bytes),
        stored: (await storedKeys(server, `documents/${workspaceId}/`)).length,
        claims: await server.db.pendingObject.count(),
        temporary: await temporaries(),
      };
    }
    const NOTHING = { rows: 0, used: 0, stored: 0, claims: 0, temporary: 0 };

    it('answers 200 with the File record, bare, in each shape; listed by GET /files at once; stored as sent', async () => {
      const workspace = await newWorkspace();
      const sample = TEXT_SAMPLES.find((s) => s.type === 'text/markdown')!;
      const query = `?workspace_id=${workspace.id}`;

      const native = await uploadFile(server, 'notes.md', sample.bytes, { query });
      expect(native.status, JSON.stringify(native.body)).toBe(200);
      expect(native.headers['content-type']).toMatch(/^application\/json/);
      const file = FileNativeSchema.strict().parse(native.body);
      expect(file).toMatchObject({
        _shape: 'native',
        type: 'file',
        filename: 'notes.md',
        mime_type: 'text/markdown',
        size_bytes: sample.bytes.length,
        downloadable: false,
      });
      expect(file.id).toMatch(/^file_/);

      const a = await uploadFile(server, 'notes.md', sample.bytes, { query, headers: COMPAT_A });
      expect(FileCompatASchema.strict().parse(a.body)).toMatchObject({ _shape: 'compat_a', mime_type: 'text/markdown', downloadable: false });
      const b = await uploadFile(server, 'notes.md', sample.bytes, { query, headers: COMPAT_B });
      expect(FileCompatBSchema.strict().parse(b.body)).toMatchObject({
        _shape: 'compat_b',
        object: 'file',
        bytes: sample.bytes.length,
        filename: 'notes.md',
        purpose: 'user_data',
        status: 'processed',
      });
      // An OpenAI SDK request by its x-stainless headers and User-Agent.
      const sdk = await uploadFile(server, 'notes.md', sample.bytes, {
        query,
        headers: { 'user-agent': 'OpenAI/Python 1.99.0', 'x-stainless-lang': 'python' },
      });
      expect(sdk.body).toMatchObject({ _shape: 'compat_b', purpose: 'user_data' });

      const page = DocumentPageSchema.parse((await server.request(`/api/v1/files${query}`).then((r) => r.json())) as unknown);
      expect(page.data.map((f) => f.id)).toEqual([file.id, (a.body as { id: string }).id, (b.body as { id: string }).id, (sdk.body as { id: string }).id]);
      expect(page.data[0]).toEqual(file);
      // B8 answers the same record.
      expect(await server.request(`/api/v1/files/${file.id}${query}`).then((r) => r.json())).toEqual(file);

      const row = await server.db.document.findUniqueOrThrow({ where: { id: file.id } });
      expect(row).toMatchObject({ purpose: 'user_data', downloadable: false, workspace_id: workspace.id, organization_id: server.organizationId });
      expect(await readStored(server, row.storage_key)).toEqual(sample.bytes);
      expect(await state(workspace.id)).toEqual({ ...NOTHING, rows: 4, used: 4 * sample.bytes.length, stored: 4 });
    });

    it('B9 refuses the bytes of an uploaded file (400): uploads are not downloadable', async () => {
      const workspace = await newWorkspace();
      const uploaded = await uploadFile(server, 'a.txt', Buffer.from('hello'), { query: `?workspace_id=${workspace.id}` });
      const res = await server.request(`/api/v1/files/${(uploaded.body as { id: string }).id}/content?workspace_id=${workspace.id}`, {
        headers: { accept: 'application/octet-stream' },
      });
      expect(res.status).toBe(400);
      expect(ErrorEnvelopeSchema.parse(await res.json()).error.code).toBe(400);
    });

    it('tells each type family from the bytes, never from the filename or the part type', async () => {
      const workspace = await newWorkspace();
      for (const sample of [...BINARY_SAMPLES, ...TEXT_SAMPLES]) {
        // A misleading name and declared type: only the bytes count.
        const body = multipart([{ name: 'file', filename: `misnamed-${sample.name}.exe`, type: 'application/x-msdownload', bytes: sample.bytes }]);
        const answer = await upload(server, body, { key: server.managementKey, query: `?workspace_id=${workspace.id}` });
        expect(answer.status, `${sample.name}: ${JSON.stringify(answer.body)}`).toBe(200);
        expect(answer.body, sample.name).toMatchObject({ mime_type: sample.type, size_bytes: sample.bytes.length, filename: `misnamed-${sample.name}.exe` });
      }
    });

    it('classifies a text longer than the inspected prefix, and checks UTF-8 to its last byte', async () => {
      const workspace = await newWorkspace();
      const query = `?workspace_id=${workspace.id}`;
      // Past the prefix file-type reads (256 KiB): the type is decided mid-stream.
      const lines = Array.from({ length: 9000 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(20)}"}`).join('\n');
      const ndjson = await uploadFile(server, 'long.ndjson', Buffer.from(`${lines}\n`), { query });
      expect(ndjson.body).toMatchObject({ mime_type: 'application/x-ndjson', size_bytes: lines.length + 1 });
      const png = BINARY_SAMPLES.find((s) => s.type === 'image/png')!.bytes;
      const bigPng = await uploadFile(server, 'big.png', Buffer.concat([png, randomBytes(300 * 1024)]), { query });
      expect(bigPng.body).toMatchObject({ mime_type: 'image/png' });
      // Valid UTF-8 for 300 KB, then a byte that is not (in the middle, and cut at the end): refused, nothing kept.
      const prose = Buffer.from('plain text line\n'.repeat(20_000));
      expectError(await uploadFile(server, 'broken.txt', Buffer.concat([prose, Buffer.from([0xc3, 0x28]), prose]), { query }), 400);
      expectError(await uploadFile(server, 'cut.txt', Buffer.concat([prose, Buffer.from([0xe2, 0x82])]), { query }), 400);
      expectError(await uploadFile(server, 'nul.txt', Buffer.concat([prose, Buffer.from([0])]), { query }), 400);
      await until(
        async () =>
          JSON.stringify(await state(workspace.id)) === JSON.stringify({ ...NOTHING, rows: 2, used: lines.length + 1 + png.length + 300 * 1024, stored: 2 }),
      );
    });

    it('refuses, with 400 and nothing left behind: an empty file, unknown content, bad forms, provider', async () => {
      const workspace = await newWorkspace();
      const query = `?workspace_id=${workspace.id}`;
      const file = (bytes: Buffer, filename = 'f.bin') => ({ name: 'file', filename, bytes });
      const text = Buffer.from('hello');
      const cases: Array<[string, Promise<Answer>]> = [
        ['empty file', upload(server, multipart([file(Buffer.alloc(0))]), { key: server.managementKey, query })],
        ['plain zip', upload(server, multipart([file(Buffer.from('PK\x03\x04', 'latin1'))]), { key: server.managementKey, query })],
        [
          'ELF binary',
          upload(server, multipart([file(Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01', 'latin1'), randomBytes(200)]))]), {
            key: server.managementKey,
            query,
          }),
        ],
        ['random bytes', upload(server, multipart([file(randomBytes(20_000))]), { key: server.managementKey, query })],
        ['text with NUL', upload(server, multipart([file(Buffer.from('abc\u0000def'))]), { key: server.managementKey, query })],
        [
          'Ogg video',
          upload(
            server,
            multipart([file(Buffer.concat([Buffer.from('OggS\0\x02', 'latin1'), Buffer.alloc(22), Buffer.from('\x80theora', 'latin1'), Buffer.alloc(40)]))]),
            { key: server.managementKey, query },
          ),
        ],
        ['no part at all', upload(server, multipart([]), { key: server.managementKey, query })],
        ['a field, no file', upload(server, multipart([{ name: 'file', bytes: text }]), { key: server.managementKey, query })],
        [
          'file and a field',
          upload(server, multipart([file(text), { name: 'purpose', bytes: Buffer.from('user_data') }]), { key: server.managementKey, query }),
        ],
        ['a field, then the file', upload(server, multipart([{ name: 'purpose', bytes: Buffer.from('x') }, file(text)]), { key: server.managementKey, query })],
        ['two files', upload(server, multipart([file(text, 'a.txt'), file(text, 'b.txt')]), { key: server.managementKey, query })],
        ['wrong part name', upload(server, multipart([{ name: 'document', filename: 'a.txt', bytes: text }]), { key: server.managementKey, query })],
        [
          'a part without a name',
          upload(server, Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; filename="a.txt"\r\n\r\nhello\r\n--${BOUNDARY}--\r\n`), {
            key: server.managementKey,
            query,
          }),
        ],
        ['empty filename', upload(server, multipart([file(text, '')]), { key: server.managementKey, query })],
        ['control character in the filename', upload(server, multipart([file(text, 'a\tb.txt')]), { key: server.managementKey, query })],
        ['filename over 255 bytes', upload(server, multipart([file(text, `${'é'.repeat(130)}.txt`)]), { key: server.managementKey, query })],
        ['cut-off body', upload(server, multipart([file(text)], { unterminated: true }), { key: server.managementKey, query })],
        ['JSON body', upload(server, Buffer.from('{"file":"x"}'), { key: server.managementKey, query, contentType: 'application/json' })],
        ['no Content-Type', upload(server, Buffer.from('hello'), { key: server.managementKey, query, contentType: null })],
        ['no boundary', upload(server, multipart([file(text)]), { key: server.managementKey, query, contentType: 'multipart/form-data' })],
        ['provider', upload(server, multipart([file(text)]), { key: server.managementKey, query: `${query}&provider=openai` })],
        ['unknown workspace', upload(server, multipart([file(text)]), { key: server.managementKey, query: '?workspace_id=no-such-workspace' })],
        ['workspace_id given twice', upload(server, multipart([file(text)]), { key: server.managementKey, query: `${query}&workspace_id=default` })],
      ];
      for (const [what, answer] of cases) {
        const settled = await answer;
        expect(settled.status, `${what}: ${JSON.stringify(settled.body)}`).toBe(400);
        expectError(settled, 400);
      }
      await until(async () => JSON.stringify(await state(workspace.id)) === JSON.stringify(NOTHING), { what: 'nothing left behind' });
    });

    it('a refusal made before the body is read reaches a fetch client still sending it (the rest is read and dropped)', async () => {
      // fetch writes the whole body before it reads the answer, and a file-backed Blob (as the CLI
      // sends) is written after the headers, from disk: had the server closed the connection under
      // it, the call would fail with a broken pipe (seen on Node 22) instead of answering 400.
      const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'switchyard-refused-'));
      for (const size of [21, 64 * 1024, 8 * 1024 * 1024]) {
        const file = path.join(dir, `refused-${size}.txt`);
        await fsp.writeFile(file, Buffer.alloc(size, 'a'));
        const body = new FormData();
        body.append('file', await fs.openAsBlob(file), 'refused.txt');
        for (let round = 0; round < 10; round++) {
          const res = await fetch(`${server.url}/api/v1/files?workspace_id=no-such-workspace`, {
            method: 'POST',
            headers: { authorization: `Bearer ${server.managementKey}` },
            body,
          });
          expectError({ status: res.status, headers: { 'content-type': res.headers.get('content-type') ?? '' }, body: (await res.json()) as unknown }, 400);
        }
      }
      await fsp.rm(dir, { recursive: true, force: true });
    });

    it('413 past MAX_FILE_BYTES, and past the workspace quota; an exact fit is stored; B10 frees the quota', async () => {
      const workspace = await newWorkspace(1000);
      const query = `?workspace_id=${workspace.id}`;
      expectError(await uploadFile(server, 'big.txt', Buffer.alloc(MAX_FILE_BYTES + 1, 'a'), { query }), 413);
      expectError(await uploadFile(server, 'over.txt', Buffer.alloc(1001, 'a'), { query }), 413);
      expect(await state(workspace.id)).toEqual(NOTHING);

      const fits = await uploadFile(server, 'fits.txt', Buffer.alloc(600, 'a'), { query });
      expect(fits.status).toBe(200);
      // 600 used: 401 more would pass the quota, 400 fits it exactly.
      expectError(await uploadFile(server, 'over.txt', Buffer.alloc(401, 'b'), { query }), 413);
      const exact = await uploadFile(server, 'exact.txt', Buffer.alloc(400, 'b'), { query });
      expect(exact.status).toBe(200);
      expect(await state(workspace.id)).toEqual({ ...NOTHING, rows: 2, used: 1000, stored: 2 });
      // The quota used up: refused before a byte is read.
      expectError(await uploadFile(server, 'one.txt', Buffer.from('c'), { query }), 413);

      // B10 frees the file's share: the file is gone from the listing and the store.
      const id = (fits.body as { id: string }).id;
      const deleted = await server.request(`/api/v1/files/${id}${query}`, { method: 'DELETE' });
      expect(deleted.status).toBe(200);
      expect(await state(workspace.id)).toEqual({ ...NOTHING, rows: 1, used: 400, stored: 1 });
      const page = DocumentPageSchema.parse(await server.request(`/api/v1/files${query}`).then((r) => r.json()));
      expect(page.data.map((f) => f.id)).toEqual([(exact.body as { id: string }).id]);
      expect((await uploadFile(server, 'again.txt', Buffer.alloc(600, 'c'), { query })).status).toBe(200);
    });

    it('concurrent uploads never overshoot the quota together', async () => {
      const workspace = await newWorkspace(1000);
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => uploadFile(server, `c${i}.txt`, Buffer.alloc(300, 'a'), { query: `?workspace_id=${workspace.id}` })),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
      for (const answer of answers.filter((a) => a.status !== 200)) expectError(answer, 413);
      await until(async () => JSON.stringify(await state(workspace.id)) === JSON.stringify({ ...NOTHING, rows: 3, used: 900, stored: 3 }));
    });

    it('who may upload where: 401 without a key, a regular key its own workspace only, other organizations and platform keys refused', async () => {
      const sample = Buffer.from('a,b\n1,2\n');
      const send = (key: string | null, query = '') => upload(server, multipart([{ name: 'file', filename: 'x.csv', bytes: sample }]), { key, query });
      expectError(await send(null), 401);
      expectError(await send('sk-sy-v1-' + '0'.repeat(64)), 401);
      expectError(await send(server.platformKey), 403);

      // The default: the key's own workspace (management key: the organization's default).
      const byManagement = await send(server.managementKey);
      expect(byManagement.status).toBe(200);
      expect((await server.db.document.findUniqueOrThrow({ where: { id: (byManagement.body as { id: string }).id } })).workspace_id).toBe(server.workspaceId);

      const workspace = await newWorkspace();
      const regular = (await trpc(server, 'keys.create', { name: 'regular', workspace_id: workspace.id })).data.key as string;
      const own = await send(regular);
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      expect((await server.db.document.findUniqueOrThrow({ where: { id: (own.body as { id: string }).id } })).workspace_id).toBe(workspace.id);
      expect((await send(regular, `?workspace_id=${workspace.slug}`)).status).toBe(200);
      // Another workspace of its organization: 403, as B7 answers.
      expectError(await send(regular, `?workspace_id=${server.workspaceId}`), 403);
      // Another organization's workspace names nothing the key can see (D9 lists no 404: 400).
      expectError(await send(server.managementKey, `?workspace_id=${other.workspaceId}`), 400);
      // That organization's own key uploads into its own default workspace.
      const theirs = await send(other.managementKey);
      expect(theirs.status).toBe(200);
      expect(await server.db.document.findUniqueOrThrow({ where: { id: (theirs.body as { id: string }).id } })).toMatchObject({
        organization_id: other.organizationId,
        workspace_id: other.workspaceId,
      });
      // ...and it is not listed to this organization, nor readable by it.
      const id = (theirs.body as { id: string }).id;
      expect((await server.request(`/api/v1/files/${id}`)).status).toBe(404);
    });

    it('a client that goes away mid-upload leaves nothing: no row, no claim, no bytes, no temp upload', async () => {
      const workspace = await newWorkspace();
      const head = multipart([{ name: 'file', filename: 'cut.txt', bytes: Buffer.alloc(20_000, 'a') }], { unterminated: true }).subarray(0, -2);
      const http = await import('node:http');
      const req = http.request(new URL(`/api/v1/files?workspace_id=${workspace.id}`, server.url), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${server.managementKey}`,
          'content-type': 'multipart/form-data; boundary=switchyard-test-boundary-7d3f',
          'content-length': String(head.length + 1_000_000),
        },
      });
      req.on('error', () => undefined);
      req.write(head);
      // The write is under way: its claim is taken (and, for the local store, its temp file open).
      await until(async () => (await server.db.pendingObject.count()) === 1, { what: 'the upload to start' });
      req.destroy();
      await until(async () => JSON.stringify(await state(workspace.id)) === JSON.stringify(NOTHING), {
        what: 'nothing left after the client went away',
      });
    });
  });
}

describe('classifyText (the structure of an uploaded text)', () => {
  it.each([
    ['{"a": 1}', true, 'application/json'],
    ['  [1, 2, 3]\n', true, 'application/json'],
    ['"just a string"', true, 'text/plain'],
    ['{"a": 1}\n{"b": 2}\n', true, 'application/x-ndjson'],
    ['{"a": 1}\n{"b": 2}\n{"c"', false, 'application/x-ndjson'],
    ['{\n  "long": [1, 2,', false, 'application/json'],
    ['{ not json }', true, 'text/plain'],
    ['id,name\n1,"a, b"\n2,"c ""quoted"""\n', true, 'text/csv'],
    ['id,name\n1,a\n2,b,c\n', true, 'text/plain'],
    ['id,name\n1,"never closed\n', true, 'text/plain'],
    ['only,one,record\n', true, 'text/plain'],
    ['# Title\ntext', true, 'text/markdown'],
    ['```ts\nconst a = 1;\n```\n', true, 'text/markdown'],
    ['- one, two\n- three, four\n', true, 'text/markdown'],
    ['Some **bold** words.\nAnd a [link](https://example.com).\n', true, 'text/markdown'],
    ['Hello there.\nNothing to see here\n', true, 'text/plain'],
    ['\uFEFF{"bom": true}', true, 'application/json'],
  ] as const)('%j (whole: %s) is %s', (text, complete, type) => {
    expect(classifyText(text, complete)).toBe(type);
  });
});
