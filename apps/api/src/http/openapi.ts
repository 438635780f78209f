// The OpenAPI document: every REST route. trpc-to-openapi generates the procedures' operations from
// the router; the byte-stream downloads are plain express routes (the modules' *.routes.ts), so
// their operations are written here, from the same zod schemas, with their binary media types,
// Range / 206 and Content-Disposition. The document is committed as openapi.json at the repository root
// (`pnpm openapi` rewrites it; a test compares it with the served one).
import {
  ContainerFileIdSchema,
  ContainerIdSchema,
  ERROR_MESSAGES,
  ErrorEnvelopeSchema,
  OAuthErrorBodySchema,
  TokenAnswerSchema,
  VideoContentQuerySchema,
  type ErrorStatus,
} from '@switchyard/schema';
import { TOKEN_EXCHANGE } from '../raw-routes/contracts.js';
import { forEachOpenApiProcedure, generateOpenApiDocument, getInputOutputParsers } from 'trpc-to-openapi';
import { z } from 'zod';
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
type Json = Record<string, unknown>;

/** A zod schema as the document's JSON Schema (2020-12, as OpenAPI 3.1 uses), in input form. */
function jsonSchema(schema: z.ZodType): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return rest;
}

function parameter(where: 'path' | 'query' | 'header', name: string, schema: Json, required: boolean, description?: string): Json {
  return {
    in: where,
    name,
    required,
    schema,
    ...((description ?? schema.description) ? { description: description ?? schema.description } : {}),
  };
}

const ERROR_ENVELOPE = 'ErrorEnvelope';
const OAUTH_ERROR = 'OAuthError';
const TOKEN_ANSWER = 'TokenAnswer';

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

/** POST /oauth/token (D12): a form in, the Token answer or the OAuth error body out, no key. */
function tokenExchangePaths(): Record<string, Json> {
  const exact = (value: string) => ({ type: 'string', enum: [value] });
  return {
    [TOKEN_EXCHANGE.path]: {
      post: {
        operationId: 'oauth-token',
        summary: 'Exchange a workload identity token for an access token',
        description:
          "RFC 8693 token exchange. A JWT signed by an identity provider that a federation policy of the organization trusts (signature, iss, aud, sub, exp and nbf checked) is exchanged for an ES256 access token valid for at most 900 seconds, and never beyond the subject token's expiry. The access token is a bearer on /api/v1 and /trpc with exactly the rights of the policy's key, until it expires; a key disabled or deleted refuses its tokens too. No key needed (an Authorization header is not read). Errors are the OAuth error body, not the envelope.",
        tags: ['Authorization'],
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                type: 'object',
                properties: {
                  grant_type: exact('urn:ietf:params:oauth:grant-type:token-exchange'),
                  subject_token: { type: 'string', description: 'The JWT issued by the trusted identity provider' },
                  subject_token_type: exact('urn:ietf:params:oauth:token-type:jwt'),
                  federation_policy_id: { type: 'string', description: 'The federation policy to evaluate; it binds the exchange to one organization' },
                  requested_token_type: exact('urn:ietf:params:oauth:token-type:access_token'),
                  scope: exact('inference'),
                },
                required: ['grant_type', 'subject_token', 'subject_token_type', 'federation_policy_id'],
              },
            },
          },
        },
        responses: {
          200: {
            description: 'The access token',
            headers: { 'Cache-Control': header('no-store') },
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${TOKEN_ANSWER}` } } },
          },
        },
      },
    },
  };
}

const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });
const BINARY = { type: 'string', format: 'binary' };

function downloadPaths(): Record<string, Json> {
  const containerParameters = [
    parameter('path', 'container_id', jsonSchema(ContainerIdSchema), true),
    parameter('path', 'file_id', jsonSchema(ContainerFileIdSchema), true),
  ];
  const index = (jsonSchema(VideoContentQuerySchema).properties as Record<string, Json>).index!;
  return {
    '/containers/{container_id}/files/{file_id}/content': {
      get: {
        operationId: 'files-content',
        summary: 'Download a container file',
        description: "Streams the exact bytes of a file in a container of the caller's workspace (a management key: any workspace of its organization).",
        tags: ['Containers'],
        security: [{ bearerAuth: [] }],
        parameters: containerParameters,
        responses: {
          200: {
            description: "The file's bytes",
            headers: {
              'Content-Disposition': header('attachment, with the file name (RFC 6266): attachment; filename=report.md'),
              'Content-Length': header('Size of the file in bytes', { type: 'integer', minimum: 0 }),
            },
            content: { 'application/octet-stream': { schema: BINARY } },
          },
        },
      },
    },
    '/videos/{jobId}/content': {
      get: {
        operationId: 'videos-content',
        summary: 'Download a generated video',
        description:
          "Streams an output of a video job from the provider's URL, unbuffered, with the provider's media type. A Range header is forwarded: the provider's partial answer comes back as 206.",
        tags: ['Videos'],
        security: [{ bearerAuth: [] }],
        parameters: [
          parameter('path', 'jobId', { type: 'string', minLength: 1 }, true, 'The video job id'),
          parameter('query', 'index', { type: 'integer', minimum: 0, default: 0 }, false, String(index.description ?? '')),
          parameter(
            'header',
            'Range',
            { type: 'string', example: 'bytes=0-1048575' },
            false,
            'A byte range of the video (RFC 9110), forwarded to the provider',
          ),
        ],
        responses: {
          200: {
            description: 'The whole video',
            headers: {
              'Content-Length': header('Size in bytes, when the provider gives it', { type: 'integer', minimum: 0 }),
              'Accept-Ranges': header('bytes, when the provider accepts ranges'),
            },
            content: { 'video/*': { schema: BINARY }, 'application/octet-stream': { schema: BINARY } },
          },
          206: {
            description: 'The requested range of the video',
            headers: {
              'Content-Range': header('The range sent and the full size: bytes 0-1048575/7340032'),
              'Content-Length': header('Size of the range in bytes', { type: 'integer', minimum: 0 }),
            },
            content: { 'video/*': { schema: BINARY }, 'application/octet-stream': { schema: BINARY } },
          },
        },
      },
    },
  };
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
    ...downloadPaths(),
    ...tokenExchangePaths(),
  }))
    paths[path] = { ...paths[path], ...item };
  document.paths = paths as Document['paths'];
  // Every operation lists exactly the error statuses it declares (@switchyard/schema: statuses.ts), each with the
  // error envelope's schema, not trpc-to-openapi's own error body.
  const declared = new Map(restOperations(router).map((op) => [`${op.method.toLowerCase()} ${op.path}`, op]));
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
 * Raw download routes that describe themselves (RawRoute.doc), for those downloadPaths() does not
 * write out by hand: bearer key, path and query parameters, bytes on 200, the envelope otherwise.
 */
function rawRoutePaths(routes: readonly RawRoute[]): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    if (!route.doc) continue;
    const doc = route.doc;
    const path = route.path.replace(/:(\w+)/g, '{$1}');
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
