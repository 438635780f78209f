// Every REST operation with what it declares about its answers: the router's procedures (their
// meta) and the modules' byte routes (each RawRoute's operation). The OpenAPI document, the status table of
// docs/api.md and the hostile-input property test read this list.
import type { AnyRouter } from '@trpc/server';
import { proceduresOf } from '../trpc/procedures.js';
import { acceptsRequestBody, forEachOpenApiProcedure, getInputOutputParsers, normalizePath } from 'trpc-to-openapi';
import type { ZodType } from 'zod';
import type { ErrorStatus } from '@switchyard/schema';
import { API_PREFIX } from '@switchyard/schema';
import type { ByteRouteMount } from '../modules/manifest.js';
import { COMMON, TENANT_COMMON, type OperationStatuses } from '@switchyard/schema';

export interface OperationEntry extends OperationStatuses {
  method: string;
  /** The full path, with its prefix (/api/v1 or /internal), `{name}` for parameters. */
  path: string;
  /** The procedure's name, for procedures. */
  procedure?: string;
  /** Its input schema: path parameters with the query (or the JSON body's fields). */
  input: ZodType;
  /** What its body is: a JSON object, raw bytes, a multipart form, or none (the input is in the path and query). */
  body: 'json' | 'bytes' | 'multipart' | 'form' | 'none';
  /** What its error answers are: the envelope, or the OAuth error body (POST /oauth/token). */
  errorBody: 'envelope' | 'oauth';
}

/** Every REST operation with its declared statuses: the router's procedures, then the byte routes' operations. */
export function restOperations(router: AnyRouter, byteRoutes: readonly ByteRouteMount[]): OperationEntry[] {
  const entries: OperationEntry[] = [];
  forEachOpenApiProcedure(proceduresOf(router), ({ path, procedure, meta }) => {
    const { openapi, statuses, listed } = meta as typeof meta & Partial<OperationStatuses>;
    if (!statuses || !listed) throw new Error(`${path} (${openapi.method} ${openapi.path}) declares no statuses in its meta`);
    entries.push({
      method: openapi.method,
      path: `${API_PREFIX}${normalizePath(openapi.path)}`,
      procedure: path,
      statuses,
      listed,
      input: getInputOutputParsers(procedure).inputParser as ZodType,
      body: acceptsRequestBody(openapi.method) ? 'json' : 'none',
      errorBody: 'envelope',
    });
  });
  for (const raw of byteRoutes.flatMap((mount) => mount.routes.flatMap((route) => (route.operation ? [route.operation] : [])))) {
    entries.push({
      method: raw.method,
      path: `${raw.prefix}${raw.path}`,
      statuses: raw.statuses,
      listed: raw.listed,
      input: raw.input,
      body: raw.body,
      errorBody: raw.errorBody ?? 'envelope',
    });
  }
  return entries;
}

/** The markers around the status table in docs/api.md (scripts/status-table.ts writes between them). */
export const STATUS_TABLE_BEGIN = '<!-- status-table:begin (generated: pnpm --filter @switchyard/api status-table) -->';
export const STATUS_TABLE_END = '<!-- status-table:end -->';

/**
 * The status table of docs/api.md: one row per operation, the statuses it answers (marked * where
 * the spec does not list them for its endpoint), the reasons for those that are not the common
 * ones, and the listed statuses it never answers.
 */
export function statusTable(router: AnyRouter, byteRoutes: readonly ByteRouteMount[]): string {
  const rows = restOperations(router, byteRoutes)
    .sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))
    .map((op) => {
      const answered = Object.keys(op.statuses).map(Number) as ErrorStatus[];
      const mark = (status: ErrorStatus) => (op.listed.includes(status) ? `${status}` : `${status}*`);
      const reasons = answered
        .filter((status) => op.statuses[status] !== COMMON[status] && op.statuses[status] !== TENANT_COMMON[status])
        .map((status) => `**${mark(status)}** ${op.statuses[status]}`);
      const never = op.listed.filter((status) => !answered.includes(status));
      return `| \`${op.method} ${op.path}\` | ${answered.map(mark).join(', ')} | ${reasons.join('<br>')} | ${never.length ? never.join(', ') : '-'} |`;
    });
  const common = (Object.keys(COMMON).map(Number) as ErrorStatus[]).map((status) => `${status}: ${COMMON[status]}`).join('; ');
  const tenant = (Object.keys(TENANT_COMMON).map(Number) as ErrorStatus[]).map((status) => `${status}: ${TENANT_COMMON[status]}`).join('; ');
  return [
    `Every operation can answer ${common}. Every operation a tenant key calls can also answer ${tenant}.`,
    '',
    '| operation | error statuses (* not listed for it by the spec) | why (besides the five above) | listed, never answered |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}
