// The OpenAPI document: valid (swagger-parser), every REST route in it (the byte-stream downloads
// included, with their media types, Range / 206 and Content-Disposition), identical to the
// committed openapi.json, and good enough that a client generated from it (openapi-typescript +
// openapi-fetch) compiles and downloads through the real server.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { forEachOpenApiProcedure } from 'trpc-to-openapi';
import { SAMPLE_VIDEO_URL } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOWNLOAD_ROUTES } from '../src/http/downloads.js';
import { pathShape } from '../src/http/openapi.js';
import { OPENAPI_FILE, openApiText } from '../src/openapi-file.js';
import { appRouter } from '../src/router.js';
import type { TestServer } from '../src/testing.js';
import { testServer } from './fixtures.js';
import { fileIdOf, openContainer, writeFile } from './fixtures-files.js';
import { trpc } from './fixtures-trpc.js';

type Response = { description?: string; content?: Record<string, unknown>; headers?: Record<string, unknown> };
type Operation = { summary?: string; parameters?: { in: string; name: string; required?: boolean }[]; responses: Record<string, Response> };
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

let server: TestServer;
let document: Document;
beforeAll(async () => {
  server = await testServer();
  document = (await (await server.request('/api/v1/openapi.json', { key: null })).json()) as Document;
});
afterAll(async () => {
  await server?.close();
});

/** The platform's steps (a container file, a video job) in one place. */
const platform = {
  async containerFile(bytes: Uint8Array) {
    const containerId = await openContainer(server, 'openapi-client');
    await writeFile(server, containerId, 'out/report.bin', bytes, 'application/octet-stream');
    return { containerId, fileId: fileIdOf('out/report.bin') };
  },
  async videoJob(url: string) {
    const res = await trpc(server, 'videos.createJob', {
      workspace_id: server.workspaceId,
      provider: 'sample',
      model: 'sample/v',
      upstream_job_id: url,
      outputs: [{ upstream_url: url }],
    });
    return res.data.data.id;
  },
};

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const api = await SwaggerParser.validate(structuredClone(document) as never);
    expect(api).toHaveProperty('openapi', '3.1.0');
  });

  it('has every REST route of the server: the procedures and the express download routes', () => {
    // By shape: paths that differ only in a placeholder's name are one path in the document (openapi.ts).
    const served = new Set<string>();
    forEachOpenApiProcedure(appRouter._def.procedures, ({ meta: { openapi } }) => void served.add(`${openapi.method} ${pathShape(openapi.path)}`));
    // The download routes as express has them (":param" -> "{param}").
    for (const route of DOWNLOAD_ROUTES) served.add(`${route.method.toUpperCase()} ${pathShape(route.path.replace(/:(\w+)/g, '{$1}'))}`);
    const documented = new Set(Object.entries(document.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${pathShape(p)}`)));
    expect([...documented].sort()).toEqual([...served].sort());
    // The 21 operations of the contract and every operation added since.
    expect(documented.size).toBeGreaterThan(21);
    for (const [p, ops] of Object.entries(document.paths)) {
      for (const [m, op] of Object.entries(ops)) expect(op.summary, `${m} ${p}`).toMatch(/\w/);
    }
  });

  it('describes the downloads as bytes: media types, Range and 206, Content-Disposition', () => {
    const file = document.paths['/containers/{container_id}/files/{file_id}/content']!.get!;
    expect(file.parameters!.map((p) => `${p.in} ${p.name}`)).toEqual(['path container_id', 'path file_id']);
    expect(file.responses['200']!.content).toEqual({ 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } });
    expect(Object.keys(file.responses['200']!.headers!)).toEqual(['Content-Disposition', 'Content-Length']);

    const video = document.paths['/videos/{jobId}/content']!.get!;
    expect(video.parameters!.map((p) => `${p.in} ${p.name} ${p.required}`)).toEqual(['path jobId true', 'query index false', 'header Range false']);
    for (const status of ['200', '206']) expect(Object.keys(video.responses[status]!.content!)).toEqual(['video/*', 'application/octet-stream']);
    expect(Object.keys(video.responses['206']!.headers!)).toContain('Content-Range');
    // Its declared statuses (http/raw-operations.ts): 403 for a platform key, 431 from Node's parser.
    expect(Object.keys(video.responses)).toEqual(['200', '206', '400', '401', '403', '404', '431', '500', '502']);
  });

  it('is the committed openapi.json (run `pnpm openapi` after changing the contract)', async () => {
    const committed = await fs.readFile(OPENAPI_FILE, 'utf8').catch(() => '(missing)');
    expect(committed === openApiText(document), `${OPENAPI_FILE} differs from the served document: run \`pnpm openapi\` and commit it`).toBe(true);
  });
});

describe('a client generated from the document', () => {
  it('compiles calls to every kind of operation, downloads included, and they work against the server', async () => {
    const apiDir = fileURLToPath(new URL('..', import.meta.url));
    const dir = await fs.mkdtemp(path.join(apiDir, '.openapi-client-'));
    try {
      await fs.writeFile(path.join(dir, 'paths.ts'), astToString(await openapiTS(structuredClone(document) as never)));
      await fs.writeFile(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2022', 'DOM'],
            skipLibCheck: true,
            types: ['node'],
          },
          include: ['*.ts'],
        }),
      );
      await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      await fs.writeFile(
        path.join(dir, 'client.ts'),
        `import createClient from 'openapi-fetch';
import type { paths } from './paths.js';

const env = process.env as Record<string, string>;
const client = createClient<paths>({ baseUrl: env.BASE_URL, headers: { Authorization: \`Bearer \${env.API_KEY}\` } });
const key = await client.GET('/key');
const file = await client.GET('/containers/{container_id}/files/{file_id}/content', {
  params: { path: { container_id: env.CONTAINER_ID, file_id: env.FILE_ID } },
  parseAs: 'arrayBuffer',
});
const part = await client.GET('/videos/{jobId}/content', {
  params: { path: { jobId: env.JOB_ID }, query: { index: 0 }, header: { Range: 'bytes=0-99' } },
  parseAs: 'arrayBuffer',
});
// @ts-expect-error the path parameter is required
void client.GET('/videos/{jobId}/content', { params: { path: {} } });
const label: string | undefined = key.data?.data.label;
console.log(JSON.stringify({
  label,
  file: { status: file.response.status, bytes: file.data?.byteLength, disposition: file.response.headers.get('content-disposition') },
  part: { status: part.response.status, bytes: part.data?.byteLength, range: part.response.headers.get('content-range') },
}));
`,
      );
      const exec = promisify(execFile);
      const tsc = path.join(apiDir, 'node_modules', 'typescript', 'bin', 'tsc');
      await exec(process.execPath, [tsc, '-p', dir]).catch((e: { stdout: string; stderr: string }) => {
        throw new Error(`the generated client does not compile:\n${e.stdout}${e.stderr}`);
      });

      const bytes = randomBytes(5000);
      const { containerId, fileId } = await platform.containerFile(bytes);
      const jobId = await platform.videoJob(SAMPLE_VIDEO_URL);
      const { stdout } = await exec(process.execPath, ['--import', 'tsx', path.join(dir, 'client.ts')], {
        cwd: apiDir,
        env: { ...process.env, BASE_URL: `${server.url}/api/v1`, API_KEY: server.managementKey, CONTAINER_ID: containerId, FILE_ID: fileId, JOB_ID: jobId },
      });
      expect(JSON.parse(stdout)).toEqual({
        label: expect.stringMatching(/^sk-sy-v1-/),
        file: { status: 200, bytes: 5000, disposition: 'attachment; filename=report.bin' },
        part: { status: 206, bytes: 100, range: expect.stringMatching(/^bytes 0-99\/\d+$/) },
      });
    } finally {
      if (!process.env.KEEP) await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
