// The pieces a byte route's OpenAPI entry is written from, shared by the routes that write theirs
// out by hand (RawRouteDoc.operation) and the document (http/openapi.ts), which writes the others.
import { z } from 'zod';

export type Json = Record<string, unknown>;

/** The names of the document's own components (not in zod's registry). */
export const ERROR_ENVELOPE = 'ErrorEnvelope';
export const OAUTH_ERROR = 'OAuthError';
export const TOKEN_ANSWER = 'TokenAnswer';

/** A zod schema as the document's JSON Schema (2020-12, as OpenAPI 3.1 uses), in input form. */
export function jsonSchema(schema: z.ZodType): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return rest;
}

export function parameter(where: 'path' | 'query' | 'header', name: string, schema: Json, required: boolean, description?: string): Json {
  return {
    in: where,
    name,
    required,
    schema,
    ...((description ?? schema.description) ? { description: description ?? schema.description } : {}),
  };
}

export const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });

export const BINARY = { type: 'string', format: 'binary' };
