// The operations served by plain express routes (byte streams in and out, not procedures), declared
// like procedures are: method, path and input schema (path parameters and query as one object).
// The routes (the modules' *.routes.ts) read their input through rawInputOf(); the
// operation list (http/operations.ts), and so the OpenAPI document, the status table and the
// hostile-input property test, read these declarations, as they read the procedures' meta.
import type { Request } from 'express';
import {
  ContainerFilePathInputSchema,
  DocumentInputSchema,
  OrganizationQuerySchema,
  UploadDocumentQuerySchema,
  VideoContentInputSchema,
} from '@switchyard/schema';
import { z } from 'zod';
import type { OperationScope } from '../access/rules.js';
import { assertStorable } from '../lib/storable-input.js';
import { API_PREFIX, INTERNAL_PREFIX } from '@switchyard/schema';
import { answers, WHY, type OperationStatuses } from '@switchyard/schema';

export interface RawOperation<Input extends z.ZodObject = z.ZodObject> extends OperationStatuses {
  method: 'GET' | 'PUT' | 'POST';
  /** Where the route is mounted (/api/v1 or /internal). */
  prefix: string;
  /** Path under `prefix`, with `{name}` for each path parameter (OpenAPI's form). */
  path: string;
  /** Path parameters and query parameters, as one object. */
  input: Input;
  /** The request body: raw bytes of any type, a multipart/form-data form, a form (application/x-www-form-urlencoded), or none read. */
  body: 'bytes' | 'multipart' | 'form' | 'none';
  /** What its error answers are: the envelope (default), or the OAuth error body of RFC 6749 §5.2 (POST /oauth/token). */
  errorBody?: 'envelope' | 'oauth';
  /** The permission scope it needs (access/rules.ts). */
  scope?: OperationScope;
}

/** An operation that takes no query or path parameter (any given are refused as unknown). */
const NoQuerySchema = z.object({}).strict();

export const CONTAINER_FILE_CONTENT = {
  method: 'GET',
  prefix: API_PREFIX,
  path: '/containers/{container_id}/files/{file_id}/content',
  input: ContainerFilePathInputSchema,
  body: 'none',
  scope: 'files:read',
  statuses: answers({
    400: `container_id or file_id refused: file_id not "cfile_" + base64url of a clean relative path (no "..", ".", empty or absolute segments, backslashes, NUL), lengths; ${WHY.unstorable}`,
    403: WHY.scopedKey,
    404: 'no such container or file visible to the key (another workspace for a regular key, another organization)',
    503: 'the stored bytes cannot be read',
  }),
  listed: [400, 401, 403, 404, 429, 500, 503],
} as const satisfies RawOperation;

export const DOCUMENT_CONTENT = {
  method: 'GET',
  prefix: API_PREFIX,
  path: '/files/{file_id}/content',
  input: DocumentInputSchema,
  body: 'none',
  scope: 'files:read',
  statuses: answers({
    400: `file_id not a document id, workspace_id refused, provider given (only the platform's own storage), an uploaded file (not downloadable), a Range past the end; ${WHY.unstorable}`,
    403: WHY.scopedKey,
    404: 'no such document visible to the key (another workspace for a regular key, another organization)',
    503: 'the stored bytes cannot be read',
  }),
  listed: [400, 401, 403, 404, 429, 500, 502, 503],
} as const satisfies RawOperation;

export const VIDEO_CONTENT = {
  method: 'GET',
  prefix: API_PREFIX,
  path: '/videos/{jobId}/content',
  input: VideoContentInputSchema,
  body: 'none',
  scope: 'files:read',
  statuses: answers({
    400: `index not an integer >= 0 (or given twice), jobId over 200 characters, a Range past the end of the server's own sample; ${WHY.unstorable}`,
    403: WHY.scopedKey,
    404: 'no such job visible to the key, or no output at that index',
    502: 'the provider failed (an error status, a connection or idle timeout, a refused connection, a trickle below UPSTREAM_MIN_BYTES_PER_SECOND before the headers) or the upstream rules refused its address or redirect',
  }),
  listed: [400, 401, 404, 500, 502],
} as const satisfies RawOperation;

export const CONTAINER_FILE_WRITE = {
  method: 'PUT',
  prefix: INTERNAL_PREFIX,
  path: '/containers/{container_id}/files/{file_id}',
  // The platform names the organization the container belongs to (?organization_id=).
  input: ContainerFilePathInputSchema.extend(OrganizationQuerySchema.shape),
  body: 'bytes',
  statuses: answers(
    {
      400: `container_id or file_id refused (as for the download), organization_id missing or not an organization id, or an upload the client aborted; ${WHY.unstorable}`,
      404: 'no such organization, or no such container in it',
      413: 'the file exceeds CONTAINER_FILE_MAX_BYTES (nothing stored)',
      503: 'storage cannot be written (nothing stored)',
    },
    'platform',
  ),
  // Not an operation of the spec: these are the statuses the sandbox runner is told to expect.
  listed: [400, 401, 403, 404, 413, 500, 503],
} as const satisfies RawOperation;

export const DOCUMENT_UPLOAD = {
  method: 'POST',
  prefix: API_PREFIX,
  path: '/files',
  input: UploadDocumentQuerySchema,
  body: 'multipart',
  scope: 'files:write',
  statuses: answers({
    400:
      'not a multipart/form-data body, or not exactly one part named "file" with a filename (no part, two parts, a form field, a malformed or cut-off body, ' +
      `a filename with control characters or over 255 bytes); an empty file; content of no supported type; the upload aborted by the client; provider given (only the platform's own storage); ${WHY.unknownWorkspace}; ${WHY.unstorable}`,
    403: `a regular key asking for another workspace; ${WHY.scopedKey}`,
    413: 'the file exceeds MAX_FILE_BYTES (100 MiB by default), or the workspace storage quota would be exceeded (nothing stored)',
    503: 'storage cannot be written (nothing stored)',
  }),
  listed: [400, 401, 403, 413, 429, 500, 502, 503],
} as const satisfies RawOperation;

export const TOKEN_EXCHANGE = {
  method: 'POST',
  prefix: API_PREFIX,
  path: '/oauth/token',
  input: NoQuerySchema,
  body: 'form',
  errorBody: 'oauth',
  statuses: answers(
    {
      400:
        'invalid_request: not an application/x-www-form-urlencoded body (UTF-8, at most 64 KiB), a field missing, given twice or not the exact value; ' +
        'unsupported_grant_type: another grant_type; invalid_scope: a scope other than inference; ' +
        "invalid_grant: an unknown federation policy, a subject token whose signature, iss, aud, sub, exp or nbf fails the policy, issuer keys that cannot be fetched, or the policy's key deleted, disabled or expired",
      429: 'temporarily_unavailable: more than TOKEN_EXCHANGES_PER_MINUTE exchanges from the address in a minute (Retry-After)',
      503: 'temporarily_unavailable: the signing key cannot be used (not made, or sealed with a secret key this server lacks); the counter store is unreachable and COUNTER_STORE_FAILURE_TOKEN_EXCHANGE is closed (Retry-After)',
    },
    'public',
  ),
  listed: [400, 429, 500, 503],
} as const satisfies RawOperation;

export const ORGANIZATION_EXPORT = {
  method: 'GET',
  prefix: API_PREFIX,
  path: '/export',
  input: NoQuerySchema,
  body: 'none',
  scope: 'export:read',
  statuses: answers({
    400: `a query parameter (it takes none); ${WHY.unstorable}`,
    403: WHY.managementOnly,
  }),
  // Not an operation of the spec (docs/export.md): the statuses it answers are the ones it lists.
  listed: [400, 401, 403, 500],
} as const satisfies RawOperation;

export const RAW_OPERATIONS: readonly RawOperation[] = [
  CONTAINER_FILE_CONTENT,
  DOCUMENT_CONTENT,
  VIDEO_CONTENT,
  CONTAINER_FILE_WRITE,
  DOCUMENT_UPLOAD,
  TOKEN_EXCHANGE,
  ORGANIZATION_EXPORT,
];

/** The express form of an operation's path (`:name` parameters). */
export function expressPath(operation: RawOperation): string {
  return operation.path.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * A raw route's input: its path parameters (express decoded them) and query, checked like a
 * procedure's input (storable, then the schema; a ZodError is a 400 naming the fields).
 */
export function rawInputOf<Input extends z.ZodObject>(operation: RawOperation<Input>, req: Request): z.infer<Input> {
  const raw = { ...(req.query as Record<string, unknown>), ...req.params };
  assertStorable(raw);
  return operation.input.parse(raw);
}
