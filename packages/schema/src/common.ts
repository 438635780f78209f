import { z } from 'zod';

/**
 * Every error status the service answers, with its message: the spec's Errors table word for word,
 * and two that only Node's HTTP parser gives, before any operation is known (the clientError
 * handler): 408 and 431 are not in the spec's table, so their text is ours.
 */
export const ERROR_MESSAGES = {
  400: 'Invalid request parameters',
  401: 'Missing Authentication header',
  402: 'Insufficient credits',
  403: 'Only management keys can perform this operation',
  404: 'Resource not found',
  408: 'Request timeout',
  409: 'Conflict with the stored state',
  413: 'Request payload too large',
  431: 'Request header fields too large',
  429: 'Rate limit exceeded',
  500: 'Internal Server Error',
  502: 'Provider returned error',
  503: 'Service temporarily unavailable',
  524: 'Request timed out. Please try again later.',
  529: 'Provider returned error',
} as const;

export type ErrorStatus = keyof typeof ERROR_MESSAGES;
export const ERROR_STATUSES = Object.keys(ERROR_MESSAGES).map(Number) as ErrorStatus[];

export const ErrorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.number().int().describe('Equals the HTTP status code'),
      message: z.string().describe("The spec's message text for the status"),
      metadata: z.record(z.string(), z.unknown()).optional().describe('Details, e.g. which inputs were invalid'),
    }),
    native_metadata: z.record(z.string(), z.unknown()).nullable().optional(),
    user_id: z.string().nullable().optional(),
  })
  .describe('Every non-2xx answer');
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

export const TimestampSchema = z.string().describe('ISO 8601 timestamp');

/**
 * An identifier sent by a client (a record id, slug, user id, key hash): 1 to 200 characters. Every
 * id the service makes or stores is far shorter; anything longer names nothing and is refused by
 * the schema, before any query.
 */
export const IdentifierSchema = z.string().min(1).max(200);

/** offset (>= 0) and limit (1..max) query parameters of a paginated list. */
export function paginationQuery(options: { defaultLimit: number; maxLimit: number }) {
  return {
    offset: z.number().int().min(0).default(0).describe('Number of records to skip'),
    limit: z.number().int().min(1).max(options.maxLimit).default(options.defaultLimit).describe(`Maximum records to return (1..${options.maxLimit})`),
  };
}

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), total_count: z.number().int() });
}

export function dataOf<T extends z.ZodType>(record: T) {
  return z.object({ data: record });
}

/** The bare answer of every deletion (admin-api.md convention 5): `{ "deleted": true }`. */
export const DeletedOutputSchema = z.object({ deleted: z.literal(true) }).strict();

/**
 * A boolean in a query string: `true` / `false` (the REST adapter would coerce any non-empty string
 * to true), or a boolean from tRPC clients. A pipe, so that the adapter neither coerces it nor refuses
 * it as a query parameter.
 */
export const QueryBooleanSchema = z.union([z.boolean(), z.enum(['true', 'false'])]).transform((value) => value === true || value === 'true');
