// The OpenAPI document: valid (swagger-parser), clean under Redocly's lint (redocly.yaml: no error,
// no warning), every record a named component, every REST route in it (the byte-stream downloads
// included, with their media types, Range / 206 and Content-Disposition), identical to the
// committed openapi.json, and good enough that a client generated from it (openapi-typescript +
// openapi-fetch) compiles under strict tsc and calls the real server: reads, a write, downloads.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { forEachOpenApiProcedure } from 'trpc-to-openapi';
import { API_PREFIX, SAMPLE_VIDEO_URL } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathShape } from '../../src/http/openapi.js';
import { BYTE_ROUTE_MOUNTS } from '../../src/modules.js';
import { OPENAPI_FILE, openApiText } from '../../src/openapi-file.js';
import { appRouter } from '../../src/router.js';
import { proceduresOf } from '../../src/trpc/procedures.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { testServer } from '../fixtures.js';
import { demoCatalog } from '../fixtures-catalog.js';
import { fileIdOf, openContainer, writeFile } from '../fixtures-files.js';
import { ok, trpc } from '../fixtures-trpc.js';

type Response = { description?: string; content?: Record<string, unknown>; headers?: Record<string, unknown> };
type Operation = { summary?: string; parameters?: { in: string; name: string; required?: boolean }[]; responses: Record<string, Response> };
type Document = { openapi: string; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };
type Schema = { $ref?: string; type?: string; items?: Schema; anyOf?: Schema[]; properties?: Record<string, Schema> };

const apiDir = fileURLToPath(new URL('../..', import.meta.url));
const exec = promisify(execFile);

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
  /** The demo catalog, for GET /models. */
  async catalog() {
    await trpc(server, 'models.import', demoCatalog, { key: server.platformKey });
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

  it("passes Redocly's lint (redocly.yaml, the recommended rules): no error, no warning", async () => {
    const cli = path.join(apiDir, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
    const config = path.join(apiDir, '..', '..', 'redocly.yaml');
    // The document as served; REDOCLY_TELEMETRY=off as well as the config's telemetry: nothing leaves the machine.
    const args = [cli, 'lint', `${server.url}/api/v1/openapi.json`, '--config', config, '--format=json'];
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    // redocly exits 1 when it finds an error; its report is on stdout either way.
    const { stdout } = await exec(process.execPath, args, { env, maxBuffer: 64 * 1024 * 1024 }).catch((e: { stdout?: string; stderr?: string }) => {
      if (!e.stdout) throw new Error(`redocly lint did not run: ${e.stderr}`);
      return { stdout: e.stdout };
    });
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems, 'run `pnpm --filter @switchyard/api openapi:lint` for the details').toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('names every record: each JSON answer is a named component or carries named ones in data', () => {
    // Named: a $ref to a component, or an array / nullable of such.
    const named = (schema: Schema | undefined): boolean =>
      !!schema &&
      (!!schema.$ref || (schema.type === 'array' && named(schema.items)) || (!!schema.anyOf && schema.anyOf.every((s) => s.type === 'null' || named(s))));
    const anonymous: string[] = [];
    let answers = 0;
    for (const [p, ops] of Object.entries(document.paths)) {
      for (const [m, op] of Object.entries(ops)) {
        for (const [status, response] of Object.entries(op.responses)) {
          const schema = (response.content?.['application/json'] as { schema?: Schema } | undefined)?.schema;
          if (!schema) continue;
          answers++;
          if (!status.startsWith('2')) {
            // POST /oauth/token's errors are the OAuth error body (RFC 6749 §5.2), but Node's 431.
            const error = p === '/oauth/token' && status !== '431' ? 'OAuthError' : 'ErrorEnvelope';
            if (schema.$ref !== `#/components/schemas/${error}`) anonymous.push(`${m} ${p} ${status}`);
            continue;
          }
          // An answer without data is a receipt ({ deleted }, { assigned_count }...), not a record.
          if (!named(schema) && schema.properties?.data && !named(schema.properties.data)) anonymous.push(`${m} ${p} ${status}`);
        }
      }
    }
    expect(anonymous).toEqual([]);
    expect(answers).toBeGreaterThan(300);
    // Every $ref resolves; the records of the contract are among the names.
    const refs = [...JSON.stringify(document).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    for (const name of new Set(refs)) expect(document.components.schemas, name).toHaveProperty([name]);
    for (const name of [
      'Key',
      'ManagedKey',
      'Model',
      'Workspace',
      'Budget',
      'Guardrail',
      'ByokCredential',
      'Preset',
      'Generation',
      'File',
      'ErrorEnvelope',
      'WorkspaceList',
    ]) {
      expect(document.components.schemas, name).toHaveProperty([name]);
    }
  });

  it('has every REST route of the server: the procedures and the express download routes', () => {
    // By shape: paths that differ only in a placeholder's name are one path in the document (openapi.ts).
    const served = new Set<string>();
    forEachOpenApiProcedure(proceduresOf(appRouter), ({ meta: { openapi } }) => void served.add(`${openapi.method} ${pathShape(openapi.path)}`));
    // The download routes as express has them (":param" -> "{param}").
    for (const route of BYTE_ROUTE_MOUNTS.filter((m) => m.prefix === API_PREFIX).flatMap((m) => m.routes))
      served.add(`${route.method.toUpperCase()} ${pathShape(route.path.replace(/:(\w+)/g, '{$1}'))}`);
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
    // Its declared statuses (raw-routes/contracts.ts): 403 for a platform key, 429 past a rate limit, 431 from Node's parser, 503 while the database is gone.
    expect(Object.keys(video.responses)).toEqual(['200', '206', '400', '401', '403', '404', '429', '431', '500', '502', '503']);
  });

  it('describes the upload (POST /files) beside the listing: a multipart body of one binary part, the File record on 200', () => {
    const files = document.paths['/files']!;
    expect(Object.keys(files).sort()).toEqual(['get', 'post']);
    const post = files.post! as Operation & { operationId: string; requestBody: { required: boolean; content: Record<string, { schema: unknown }> } };
    expect(post.operationId).toBe('files-upload');
    expect(post.parameters!.map((p) => `${p.in} ${p.name} ${p.required}`)).toEqual(['query workspace_id false', 'query provider false']);
    expect(post.requestBody.required).toBe(true);
    expect(post.requestBody.content['multipart/form-data']!.schema).toMatchObject({
      type: 'object',
      required: ['file'],
      properties: { file: { type: 'string', format: 'binary' } },
    });
    expect(post.responses['200']!.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/File' } } });
    expect(Object.keys(post.responses)).toEqual(['200', '400', '401', '403', '413', '429', '431', '500', '503']);
  });

  it('is the committed openapi.json (run `pnpm openapi` after changing the contract)', async () => {
    const committed = await fs.readFile(OPENAPI_FILE, 'utf8').catch(() => '(missing)');
    expect(committed === openApiText(document), `${OPENAPI_FILE} differs from the served document: run \`pnpm openapi\` and commit it`).toBe(true);
  });
});

describe('a client generated from the document', () => {
  it('compiles calls to every kind of operation, downloads included, and they work against the server', async () => {
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
import type { components, paths } from './paths.js';

// The records' named types.
type Key = components['schemas']['Key'];
type Workspace = components['schemas']['Workspace'];
type Budget = components['schemas']['Budget'];
type Model = components['schemas']['Model'];

const env = process.env as Record<string, string>;
const client = createClient<paths>({ baseUrl: env.BASE_URL, headers: { Authorization: \`Bearer \${env.API_KEY}\` } });
const key = await client.GET('/key');
const keyRecord: Key | undefined = key.data?.data;
// The catalog is public: no key.
const models = await createClient<paths>({ baseUrl: env.BASE_URL }).GET('/models', { params: { query: { limit: 1 } } });
const model: Model | undefined = models.data?.data[0];
// A write, then the budget through PUT's {workspace_ref}, which the document names {id} as GET does.
const created = await client.POST('/workspaces', { body: { name: 'Typed client', slug: env.SLUG } });
const workspace: Workspace | undefined = created.data?.data;
const budget = await client.PUT('/workspaces/{id}/budgets/{interval}', {
  params: { path: { id: env.SLUG, interval: 'monthly' } },
  body: { limit_usd: 25 },
});
const budgetRecord: Budget | undefined = budget.data?.data;
// @ts-expect-error a workspace needs a slug
void client.POST('/workspaces', { body: { name: 'no slug' } });
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
console.log(JSON.stringify({
  label: keyRecord?.label,
  model: { status: models.response.status, id: model?.id, total: models.data?.total_count },
  workspace: { status: created.response.status, slug: workspace?.slug },
  budget: { status: budget.response.status, workspace_id: budgetRecord?.workspace_id, limit_usd: budgetRecord?.limit_usd, reset_interval: budgetRecord?.reset_interval },
  file: { status: file.response.status, bytes: file.data?.byteLength, disposition: file.response.headers.get('content-disposition') },
  part: { status: part.response.status, bytes: part.data?.byteLength, range: part.response.headers.get('content-range') },
}));
`,
      );
      const tsc = path.join(apiDir, 'node_modules', 'typescript', 'bin', 'tsc');
      await exec(process.execPath, [tsc, '-p', dir]).catch((e: { stdout: string; stderr: string }) => {
        throw new Error(`the generated client does not compile:\n${e.stdout}${e.stderr}`);
      });

      const bytes = randomBytes(5000);
      const { containerId, fileId } = await platform.containerFile(bytes);
      const jobId = await platform.videoJob(SAMPLE_VIDEO_URL);
      await platform.catalog();
      const slug = `typed-${randomBytes(4).toString('hex')}`;
      const { stdout } = await exec(process.execPath, ['--import', 'tsx', path.join(dir, 'client.ts')], {
        cwd: apiDir,
        env: {
          ...process.env,
          BASE_URL: `${server.url}/api/v1`,
          API_KEY: server.managementKey,
          CONTAINER_ID: containerId,
          FILE_ID: fileId,
          JOB_ID: jobId,
          SLUG: slug,
        },
      });
      const answers = JSON.parse(stdout);
      const { data: workspace } = await ok(server, 'workspaces.get', { id: slug }, { query: true });
      const { data: catalog } = await ok(server, 'models.count', {}, { query: true });
      expect(answers).toEqual({
        label: expect.stringMatching(/^sk-sy-v1-/),
        model: { status: 200, id: expect.any(String), total: catalog.count },
        workspace: { status: 201, slug },
        budget: { status: 200, workspace_id: workspace.id, limit_usd: 25, reset_interval: 'monthly' },
        file: { status: 200, bytes: 5000, disposition: 'attachment; filename=report.bin' },
        part: { status: 206, bytes: 100, range: expect.stringMatching(/^bytes 0-99\/\d+$/) },
      });
      expect(demoCatalog.models.map((m) => m.id)).toContain(answers.model.id);
    } finally {
      if (!process.env.KEEP) await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
