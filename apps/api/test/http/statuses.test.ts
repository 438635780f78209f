// The one declaration of each operation's statuses, and everything read from it: the REST adapter's
// substitutions, the OpenAPI document and the status table of docs/api.md.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_MESSAGES, ERROR_STATUSES, ErrorEnvelopeSchema, OAuthErrorBodySchema, WHY, type ErrorStatus } from '@switchyard/schema';
import { EVERY_KEY } from '../../src/access/rules.js';
import { BYTE_ROUTE_MOUNTS } from '../../src/modules.js';
import { openApiDocument, pathShape } from '../../src/http/openapi.js';
import { restOperations, STATUS_TABLE_BEGIN, STATUS_TABLE_END, statusTable } from '../../src/http/operations.js';
import { API_PREFIX } from '@switchyard/schema';
import { OAUTH_ROUTES } from '../../src/modules/auth/oauth-token.routes.js';
import { COMMON } from '@switchyard/schema';
import { declaredAnswer } from '../../src/lib/errors.js';
import { appRouter } from '../../src/router.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { accessRuleOf, routerProcedures, testServer } from '../fixtures.js';

const operations = restOperations(appRouter, BYTE_ROUTE_MOUNTS);

/** Raw routes that take no key (POST /oauth/token), as "<METHOD> <OpenAPI path>". */
const PUBLIC_RAW = new Set(
  OAUTH_ROUTES.filter((route) => route.access === 'public').map(
    (route) => `${route.method.toUpperCase()} ${API_PREFIX}${route.path.replace(/:(\w+)/g, '{$1}')}`,
  ),
);
const isPublic = (op: (typeof operations)[number]) =>
  op.procedure !== undefined ? accessRuleOf(op.procedure) === 'public' : PUBLIC_RAW.has(`${op.method} ${op.path}`);

/** The operations of platform-api.md served so far (D1-D21 as they are built). */
const PLATFORM_OPERATIONS = [
  'GET /api/v1/images/models',
  'GET /api/v1/images/models/{author}/{slug}/endpoints',
  'GET /api/v1/videos/models',
  'GET /api/v1/models/user',
  'GET /api/v1/endpoints/zdr',
  'POST /api/v1/auth/keys/code',
  'POST /api/v1/auth/keys',
  'POST /api/v1/presets/{slug}/chat/completions',
  'POST /api/v1/presets/{slug}/messages',
  'POST /api/v1/presets/{slug}/responses',
  'POST /api/v1/files',
  'GET /api/v1/scim/groups',
  'POST /api/v1/scim/sync-jobs',
  'GET /api/v1/scim/sync-jobs/{id}',
  'POST /api/v1/oauth/token',
  'GET /api/v1/oauth/jwks',
  'GET /api/v1/observability/destinations',
  'POST /api/v1/observability/destinations',
  'GET /api/v1/observability/destinations/{id}',
  'PATCH /api/v1/observability/destinations/{id}',
  'DELETE /api/v1/observability/destinations/{id}',
];

/** The operations the project's issues add beyond the specs (key rotation, the audit log, delivery status, the export). */
const ISSUE_OPERATIONS = [
  'POST /api/v1/keys/{hash}/rotate',
  'GET /api/v1/observability/destinations/{id}/status',
  'GET /api/v1/audit-logs',
  'GET /api/v1/export',
];

describe('declared statuses', () => {
  it("cover the 69 operations of the specs (management-api.md, admin-api.md), those of platform-api.md built, the issues' and the sandbox writer", () => {
    expect(operations).toHaveLength(70 + PLATFORM_OPERATIONS.length + ISSUE_OPERATIONS.length);
    const served = new Set(operations.map((op) => `${op.method} ${op.path}`));
    expect(served.size).toBe(operations.length);
    for (const operation of [...PLATFORM_OPERATIONS, ...ISSUE_OPERATIONS]) expect(served).toContain(operation);
  });

  it('every operation declares 401 (not the keyless ones), 431, 500 and 503, and only statuses the service has messages for', () => {
    for (const op of operations) {
      // Keyless operations (the shared catalog's reads, the code exchange) take no key: they answer no 401.
      const common = (Object.keys(COMMON).map(Number) as ErrorStatus[]).filter((status) => !(isPublic(op) && status === 401));
      // 503 (the database is unreachable) follows an operation's own reason for 503, when it has one.
      for (const status of common) {
        if (status === 503) expect(op.statuses[status]?.endsWith(COMMON[status]!), `${op.path}: ${op.statuses[status]}`).toBe(true);
        else expect(op.statuses[status], op.path).toBe(COMMON[status]);
      }
      // No 403 for a kind of key either, but a keyless operation's own (D11: a wrong verifier), where its spec lists one.
      if (isPublic(op)) {
        expect(op.statuses[401], op.path).toBeUndefined();
        if (op.statuses[403] !== undefined) expect(op.listed, op.path).toContain(403);
      }
      for (const status of Object.keys(op.statuses)) expect(ERROR_STATUSES, op.path).toContain(Number(status));
      for (const status of op.listed) expect(ERROR_STATUSES).toContain(status);
    }
  });

  it("declare the 403 of a scoped key lacking the operation's scope, and of an access token on a management operation", () => {
    const meta = new Map(routerProcedures().map((p) => [p.path, p.meta]));
    const raw = new Map(
      BYTE_ROUTE_MOUNTS.flatMap(({ prefix, routes }) =>
        routes.map((r) => [`${r.method.toUpperCase()} ${prefix}${r.path.replace(/:(\w+)/g, '{$1}')}`, r] as const),
      ),
    );
    let narrowed = 0;
    for (const op of operations) {
      const declared = op.procedure ? meta.get(op.procedure) : raw.get(`${op.method} ${op.path}`);
      const access = declared?.access;
      const scope = declared && 'scope' in declared ? declared.scope : undefined;
      if (access === 'management') expect(op.statuses[403]?.startsWith(WHY.managementOnly), `${op.method} ${op.path}`).toBe(true);
      if (access === 'tenant' && scope !== undefined && scope !== EVERY_KEY) {
        expect(op.statuses[403], `${op.method} ${op.path}`).toContain(WHY.scopedKey);
        narrowed++;
      }
    }
    // Every tenant operation but GET /key and the catalog as a key sees it (20 procedures, 4 byte routes, the code).
    expect(narrowed).toBe(25);
  });

  it('an undeclared status becomes the declared substitute a client handles best, else stays', () => {
    const statuses = { 400: 'bad', 404: 'none' };
    expect(declaredAnswer(statuses, { status: 413, message: ERROR_MESSAGES[413] })).toEqual({ status: 400, message: ERROR_MESSAGES[400] });
    expect(declaredAnswer(statuses, { status: 403, message: ERROR_MESSAGES[403] })).toEqual({ status: 404, message: ERROR_MESSAGES[404] });
    expect(declaredAnswer({ 404: 'none' }, { status: 400, message: ERROR_MESSAGES[400], metadata: { x: 1 } })).toEqual({
      status: 404,
      message: ERROR_MESSAGES[404],
      metadata: { x: 1 },
    });
    expect(declaredAnswer(statuses, { status: 400, message: ERROR_MESSAGES[400] }).status).toBe(400);
    expect(declaredAnswer({ 404: 'none' }, { status: 500, message: ERROR_MESSAGES[500] }).status).toBe(500);
  });
});

describe('the OpenAPI document', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await testServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  type Responses = Record<string, { description: string; content: Record<string, { schema: { $ref?: string }; example?: unknown }> }>;
  const served = async () =>
    (await (await server.request('/api/v1/openapi.json', { key: null })).json()) as {
      paths: Record<string, Record<string, { responses: Responses }>>;
      components: { schemas: Record<string, unknown> };
    };

  it('lists, for every operation, exactly its declared statuses, each with the envelope schema and an example', async () => {
    const doc = await served();
    expect(doc).toEqual(JSON.parse(JSON.stringify(openApiDocument(appRouter, API_PREFIX, BYTE_ROUTE_MOUNTS))));
    let documented = 0;
    // By shape: the document names a placeholder as the first path of its shape does (pathShape).
    const documentPath = new Map(Object.keys(doc.paths).map((path) => [pathShape(path), path]));
    for (const op of operations) {
      // The document is of /api/v1: the sandbox writer (/internal) is not in it.
      if (!op.path.startsWith(`${API_PREFIX}/`)) continue;
      const responses = doc.paths[documentPath.get(pathShape(op.path.slice(API_PREFIX.length))) ?? '']?.[op.method.toLowerCase()]?.responses;
      expect(responses, `${op.method} ${op.path} is missing from the document`).toBeDefined();
      if (!responses) continue;
      documented++;
      const errors = Object.keys(responses).filter((status) => !status.startsWith('2'));
      expect(errors.map(Number), `${op.method} ${op.path}`).toEqual(Object.keys(op.statuses).map(Number));
      for (const status of errors) {
        const response = responses[status]!;
        expect(response.description).toBe(op.statuses[Number(status) as ErrorStatus]);
        const json = response.content['application/json']!;
        if (op.errorBody === 'oauth' && status !== '431') {
          expect(json.schema).toEqual({ $ref: '#/components/schemas/OAuthError' });
          OAuthErrorBodySchema.strict().parse(json.example);
          continue;
        }
        expect(json.schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
        const example = ErrorEnvelopeSchema.parse(json.example);
        expect(example.error.code).toBe(Number(status));
        expect(example.error.message.startsWith(ERROR_MESSAGES[Number(status) as ErrorStatus])).toBe(true);
      }
    }
    expect(documented).toBe(69 + PLATFORM_OPERATIONS.length + ISSUE_OPERATIONS.length);
  });

  it("describes the real envelope (error.code, error.message, optional error.metadata), not trpc-to-openapi's body", async () => {
    const { components } = await served();
    expect(Object.keys(components.schemas).filter((name) => name.startsWith('error.'))).toEqual([]);
    const envelope = components.schemas.ErrorEnvelope as {
      required: string[];
      properties: { error: { required: string[]; properties: Record<string, { type: string }> } };
    };
    expect(envelope.required).toEqual(['error']);
    expect(envelope.properties.error.required).toEqual(['code', 'message']);
    expect(envelope.properties.error.properties.code!.type).toBe('integer');
    expect(envelope.properties.error.properties.message!.type).toBe('string');
    expect(envelope.properties.error.properties.metadata!.type).toBe('object');
  });
});

describe('the status table of docs/api.md', () => {
  it('is the one generated from the declarations (pnpm --filter @switchyard/api status-table)', () => {
    const page = readFileSync(fileURLToPath(new URL('../../../../docs/api.md', import.meta.url)), 'utf8');
    const begin = page.indexOf(STATUS_TABLE_BEGIN);
    const end = page.indexOf(STATUS_TABLE_END);
    expect(begin).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(begin);
    expect(page.slice(begin + STATUS_TABLE_BEGIN.length, end).trim()).toBe(statusTable(appRouter, BYTE_ROUTE_MOUNTS));
  });
});
