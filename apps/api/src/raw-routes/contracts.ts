// The shape of an operation served by a plain express route (byte streams in and out, not a
// procedure), declared like procedures are: method, path and input schema (path parameters and
// query as one object). Each module declares its operations beside their routes (its *.routes.ts,
// `routeOf(OPERATION, ...)`), which read their input through rawInputOf(); the operation list
// (http/operations.ts), and so the OpenAPI document, the status table and the hostile-input
// property test, read them from the routes, as they read the procedures' meta.
import type { Request } from 'express';
import type { OperationStatuses } from '@switchyard/schema';
import { z } from 'zod';
import type { OperationScope } from '../access/rules.js';
import { assertStorable } from '../lib/storable-input.js';

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
export const NoQuerySchema = z.object({}).strict();

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
