// Errors answered outside tRPC, in the envelope: by the raw routes that answer their own (POST
// /files), by express's error handler and the REST adapter (http/error-response.ts, http/rest.ts).
import type { Response } from 'express';
import { envelopeOf, type HttpError } from '../lib/errors.js';
import { DomainError, Invalid, PayloadTooLarge } from '../lib/errors.js';
import { requestIdOf } from '../lib/request-scope.js';

export function sendError(res: Response, error: HttpError): void {
  if (error.retryAfterS !== undefined) res.setHeader('Retry-After', String(error.retryAfterS));
  res
    .status(error.status)
    .type('application/json')
    .send(JSON.stringify(envelopeOf(error, requestIdOf(res.req))));
}

/**
 * The domain error for what went wrong reading a request (body-parser and http-errors errors, a bad
 * percent-encoding): the client's fault is never a 500. A body over the limit is 413; anything
 * else a reader refused (malformed JSON, an unsupported Content-Encoding or charset, a body that
 * does not inflate) is 400. Other errors pass through unchanged.
 */
export function requestErrorOf(err: unknown): unknown {
  if (err instanceof DomainError) return err;
  if (err instanceof URIError) return new Invalid('malformed percent-encoding in the path', { reason: 'malformed percent-encoding in the path' });
  const { type, status } = (err ?? {}) as { type?: unknown; status?: unknown };
  if (type === 'entity.too.large') return new PayloadTooLarge('request body too large');
  if (type === 'entity.parse.failed') return new Invalid('malformed JSON body', { reason: 'malformed JSON body' });
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const what = typeof type === 'string' ? type : (err as Error).message;
    return new Invalid(`unreadable request body (${what})`, { reason: 'unreadable request body' });
  }
  return err;
}
