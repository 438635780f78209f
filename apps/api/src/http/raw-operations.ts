// The operations served by plain express routes (byte streams in and out, not procedures), declared
// like procedures are: method, path and input schema (path parameters and query as one object).
// The routes read their input through rawInputOf(); the hostile-input property test drives them
// from these declarations, as it drives procedures from the router.
import type { Request } from 'express';
import { ContainerFilePathInputSchema, VideoContentInputSchema } from '@switchyard/schema';
import type { z } from 'zod';
import { assertStorable } from '../storable-input.js';
import { API_PREFIX } from './paths.js';

export interface RawOperation<Input extends z.ZodObject = z.ZodObject> {
  method: 'GET' | 'PUT';
  /** Where the route is mounted (/api/v1 or /internal). */
  prefix: string;
  /** Path under `prefix`, with `{name}` for each path parameter (OpenAPI's form). */
  path: string;
  /** Path parameters and query parameters, as one object. */
  input: Input;
  /** The request body: raw bytes of any type, or none read. */
  body: 'bytes' | 'none';
}

export const CONTAINER_FILE_CONTENT = {
  method: 'GET',
  prefix: API_PREFIX,
  path: '/containers/{container_id}/files/{file_id}/content',
  input: ContainerFilePathInputSchema,
  body: 'none',
} as const satisfies RawOperation;

export const VIDEO_CONTENT = {
  method: 'GET',
  prefix: API_PREFIX,
  path: '/videos/{jobId}/content',
  input: VideoContentInputSchema,
  body: 'none',
} as const satisfies RawOperation;

export const CONTAINER_FILE_WRITE = {
  method: 'PUT',
  prefix: '/internal',
  path: '/containers/{container_id}/files/{file_id}',
  input: ContainerFilePathInputSchema,
  body: 'bytes',
} as const satisfies RawOperation;

export const RAW_OPERATIONS: readonly RawOperation[] = [CONTAINER_FILE_CONTENT, VIDEO_CONTENT, CONTAINER_FILE_WRITE];

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
