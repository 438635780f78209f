// The OpenAPI document: every REST route. trpc-to-openapi generates the procedures' operations from
// the router; the byte routes are plain express routes (the modules' *.routes.ts), whose entries
// are written from their RawRoute.doc: from its fields here, or as the route wrote it out by hand. The document is committed as openapi.json at the repository root
// (`pnpm openapi` rewrites it; a test compares it with the served one).
import { ERROR_MESSAGES, ErrorEnvelopeSchema, OAuthErrorBodySchema, TokenAnswerSchema, type ErrorStatus } from '@switchyard/schema';
import { BINARY, ERROR_ENVELOPE, header, OAUTH_ERROR, parameter, TOKEN_ANSWER, type Json } from '../raw-routes/openapi-parts.js';
import { forEachOpenApiProcedure, generateOpenApiDocument, getInputOutputParsers } from 'trpc-to-openapi';
import type { AnyRouter } from '@trpc/server';
import type { ByteRouteMount } from '../modules/manifest.js';
import type { RawRoute } from '../raw-routes/route.js';
import { publicProcedure, router as routerOf, type ProcedureMeta } from '../trpc/init.js';
import { proceduresOf } from '../trpc/procedures.js';
import { InsufficientCredits } from '../lib/errors.js';
import { ADD_CREDITS_URL } from '../modules/generations/credits.service.js';
import { restOperations } from './operations.js';
import type { Statuses } from '@switchyard/schema';
import { VERSION } from '../lib/version.js';

type Document = ReturnType<typeof generateOpenApiDocument>;

/** The message an answer with this status carries (402's adds the link to add credits). */
function messageOf(status: ErrorStatus): string {
  return status === 402 ? new InsufficientCredits(ADD_CREDITS_URL).publicMessage! : ERROR_MESSAGES[status];
}

/**
 * Each declared status, answered with the spec's envelope (not trpc-to-openapi's own error body), or
 * with the OAuth error body for POST /oauth/token (but its 431).
 */
function errorResponses(statuses: Statuses, errorBody: 'envelope' | 'oauth') {
  return Object.fromEntries(
    Object.entries(statuses).map(([key, why]) => {
      const status = Number(key) as ErrorStatus;
      // 431 is Node's, answered before any operation runs: always the envelope.
      const content =
        errorBody === 'oauth' && status !== 431
          ? {
              schema: { $ref: `#/components/schemas/${OAUTH_ERROR}` },
              example: { error: status === 400 ? 'invalid_grant' : status === 500 ? 'server_error' : 'temporarily_unavailable', error_description: why },
            }
          : { schema: { $ref: `#/components/schemas/${ERROR_ENVELOPE}` }, example: { error: { code: status, message: messageOf(status) } } };
      return [key, { description: why, content: { 'application/json': content } }];
    }),
  );
}

/** Never called: a procedure made only to be documented. */
const documentationOnly = (): never => {
  throw new Error('documentation only');
};

/**
 * The REST procedures as trpc-to-openapi documents them. A procedure whose meta names its answer
 * (ProcedureMeta.answer) declares no output, and the generator wants one: it is described again,
 * with the same meta, kind and input, and the answer as its output. The others are themselves.
 */
function documentedRouter(router: AnyRouter) {
  const record: Record<string, unknown> = {};
  forEachOpenApiProcedure(proceduresOf(router), ({ path, type, procedure, meta }) => {
    const { answer } = meta as ProcedureMeta;
    let documented: unknown = procedure;
    if (answer) {
      const { inputParser, hasInputsDefined } = getInputOutputParsers(procedure);
      const described = (hasInputsDefined ? publicProcedure.input(inputParser) : publicProcedure).meta(meta as ProcedureMeta).output(answer);
      documented = type === 'mutation' ? described.mutation(documentationOnly) : described.query(documentationOnly);
    }
    const segments = path.split('.');
    let level = record;
    for (const segment of segments.slice(0, -1)) level = (level[segment] ??= {}) as Record<string, unknown>;
    level[segments.at(-1)!] = documented;
  });
  return routerOf(record as Parameters<typeof routerOf>[0]);
}

/** The OpenAPI document of every REST route, generated once from the router. */
export function openApiDocument(router: AnyRouter, baseUrl: string, byteRoutes: readonly ByteRouteMount[]): Document {
  const document = generateOpenApiDocument(documentedRouter(router), {
    title: 'Switchyard management and catalog API',
    version: VERSION,
    baseUrl,
    license: { name: 'MIT', identifier: 'MIT' },
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    // The records are named components through their ids in zod's registry (@switchyard/schema's
    // openapi-names.ts); the envelope is listed here too, as only the error responses written
    // below refer to it.
    defs: { [ERROR_ENVELOPE]: ErrorEnvelopeSchema, [OAUTH_ERROR]: OAuthErrorBodySchema, [TOKEN_ANSWER]: TokenAnswerSchema },
  });
  // The catalog's public reads take no key (a key, if sent, is not read): `security: []` says so
  // on each. trpc-to-openapi leaves security out of them, which says nothing (Redocly's
  // security-defined rule wants every operation to say whether it needs a key).
  forEachOpenApiProcedure(proceduresOf(router), ({ meta }) => {
    const { openapi } = meta as ProcedureMeta & { openapi: NonNullable<ProcedureMeta['openapi']> };
    const operation = document.paths?.[openapi.path]?.[openapi.method.toLowerCase() as 'get'];
    if (operation && openapi.protect === false) operation.security = [];
  });
  // trpc-to-openapi always documents success as 200; an operation whose meta.successStatus is 201
  // (the creates) gets its success response under 201 instead, as it answers.
  forEachOpenApiProcedure(proceduresOf(router), ({ meta }) => {
    const { openapi, successStatus } = meta as ProcedureMeta & { openapi: NonNullable<ProcedureMeta['openapi']> };
    if (!successStatus || successStatus === 200) return;
    const method = openapi.method.toLowerCase() as 'post';
    const operation = document.paths?.[openapi.path]?.[method];
    if (!operation?.responses?.['200']) return;
    const { '200': success, ...others } = operation.responses;
    operation.responses = { [String(successStatus)]: success, ...others };
  });
  // An operation that answers a Location (D15: the job it started) says so on its success response.
  forEachOpenApiProcedure(proceduresOf(router), ({ meta }) => {
    const { openapi, successStatus, location } = meta as ProcedureMeta & { openapi: NonNullable<ProcedureMeta['openapi']> };
    const success = document.paths?.[openapi.path]?.[openapi.method.toLowerCase() as 'post']?.responses?.[String(successStatus ?? 200)];
    if (location && success && !('$ref' in success)) success.headers = { Location: header('Where the resource answered can be read') };
  });
  // Raw routes join the procedures' paths method by method (POST /files sits beside GET /files).
  const paths: Record<string, Json> = { ...(document.paths as Record<string, Json>) };
  for (const [path, item] of Object.entries({
    ...rawRoutePaths(byteRoutes.filter((m) => m.prefix === baseUrl).flatMap((m) => m.routes)),
  }))
    paths[path] = { ...paths[path], ...item };
  document.paths = paths as Document['paths'];
  // Every operation lists exactly the error statuses it declares (@switchyard/schema: statuses.ts), each with the
  // error envelope's schema, not trpc-to-openapi's own error body.
  const declared = new Map(restOperations(router, byteRoutes).map((op) => [`${op.method.toLowerCase()} ${op.path}`, op]));
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, { responses?: Record<string, unknown> }>)) {
      const op = declared.get(`${method} ${baseUrl}${path}`);
      if (!op) throw new Error(`${method.toUpperCase()} ${path} declares no statuses`);
      const success = Object.fromEntries(Object.entries(operation.responses ?? {}).filter(([status]) => status.startsWith('2')));
      operation.responses = { ...success, ...errorResponses(op.statuses, op.errorBody) };
    }
  }
  // trpc-to-openapi's own error bodies are no longer referenced.
  const schemas = document.components?.schemas ?? {};
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  document.paths = mergeIdenticalPaths(document.paths ?? {}) as Document['paths'];
  return document;
}

/** A path's shape: its placeholders without their names ("/workspaces/{}/budgets/{}"). */
export const pathShape = (path: string) => path.replace(/\{[^}]*\}/g, '{}');

/**
 * OpenAPI forbids two paths that differ only in their placeholders' names: /workspaces/{id}/budgets/{interval}
 * (management-api.md's GET) and /workspaces/{workspace_ref}/budgets/{interval} (admin-api.md's PUT
 * and DELETE) are one path. The procedures keep the specs' input fields (tRPC clients send them by
 * name), and the URL is the same whatever the placeholder is called, so the document merges such
 * paths under the name of the first one: its placeholders, and the names of the path parameters.
 * Look an operation up by pathShape() to find it whichever name its procedure uses.
 */
function mergeIdenticalPaths(paths: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>> = {};
  const byShape = new Map<string, string>();
  for (const [path, item] of Object.entries(paths) as [string, (typeof merged)[string]][]) {
    const first = byShape.get(pathShape(path));
    if (!first) {
      byShape.set(pathShape(path), path);
      merged[path] = item;
      continue;
    }
    const names = [...first.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]!);
    const renamed = new Map([...path.matchAll(/\{([^}]*)\}/g)].map((m, i) => [m[1]!, names[i]!]));
    for (const [method, operation] of Object.entries(item)) {
      if (merged[first]![method]) throw new Error(`${method.toUpperCase()} ${path} and ${first} are the same operation`);
      const parameters = operation.parameters?.map((p) => (p.in === 'path' ? { ...p, name: renamed.get(p.name) ?? p.name } : p));
      merged[first]![method] = { ...operation, ...(parameters ? { parameters } : {}) };
    }
  }
  return merged;
}

/**
 * The byte routes' entries (RawRoute.doc): the operation a route wrote out by hand, or one written
 * from its fields: bearer key, path and query parameters, bytes on 200 (a multipart upload: the
 * File record).
 */
function rawRoutePaths(routes: readonly RawRoute[]): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    if (!route.doc) continue;
    const doc = route.doc;
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    if ('operation' in doc) {
      paths[path] = { ...paths[path], [route.method]: doc.operation };
      continue;
    }
    const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => parameter('path', m[1]!, { type: 'string' }, true));
    const query = (doc.query ?? []).map((q) => parameter('query', q.name, { type: q.type }, false, q.description));
    paths[path] = {
      ...paths[path],
      [route.method]: {
        operationId: doc.operationId,
        summary: doc.summary,
        description: doc.description,
        tags: doc.tags,
        security: [{ bearerAuth: [] }],
        parameters: [...pathParams, ...query],
        ...(doc.multipart
          ? {
              requestBody: {
                required: true,
                content: {
                  'multipart/form-data': {
                    schema: {
                      type: 'object',
                      properties: { file: { ...BINARY, description: 'The bytes, with a filename; the only part' } },
                      required: ['file'],
                      additionalProperties: false,
                    },
                  },
                },
              },
              responses: {
                200: {
                  description: "The new File record, bare, in the request's File shape",
                  content: { [doc.contentType]: { schema: { $ref: '#/components/schemas/File' } } },
                },
              },
            }
          : { responses: { 200: { description: 'The bytes', content: { [doc.contentType]: { schema: BINARY } } } } }),
      },
    };
  }
  return paths;
}
