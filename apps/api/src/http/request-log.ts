// Request ids and the request log. Every request gets an id (a sane incoming X-Request-Id, else a
// new UUID), echoed in X-Request-Id and bound to the request (lib/request-scope.ts: requestIdOf(req),
// and loggerOf(req), a pino child logger that writes the id into every line logged for it); and one
// line per request gives method, path, status, latency and the key's hash (never the key). Health
// probes log at debug.
//
// Hand-written rather than pino-http, on measurement (docs/decisions/0001-own-request-log-middleware.md): pino-http
// cost more server CPU per request, in an express app answering a constant and on GET /key in
// `pnpm bench`: its middleware adds several properties and two child loggers to every request (one of
// them binding the whole request, used only when quietReqLogger is off). Here: one 'close'
// listener, and a child logger only for a request that logs more than its line.
import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { bindRequestScope } from '../lib/request-scope.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** What an incoming id may look like to be kept: printable, no spaces or quotes, at most 128 characters. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

const PROBES = new Set(['/healthz', '/readyz']);

export function requestLog(logger: Logger): RequestHandler {
  // The request line is made here of six known fields, none of them a credential: it skips the
  // redaction every other line goes through (a child's `redact: []` drops the parent's paths), a
  // visible share of GET /key's server CPU in `node --cpu-prof`.
  const lines = logger.child({}, { redact: [] });
  return (req: Request, res, next) => {
    const start = process.hrtime.bigint();
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader(REQUEST_ID_HEADER, id);
    bindRequestScope(req, id, logger);
    // 'close' comes after the answer was sent, or when the client left before it: both are logged.
    res.once('close', () => {
      const path = req.originalUrl.split('?', 1)[0]!;
      lines[PROBES.has(path) ? 'debug' : 'info'](
        {
          request_id: id,
          method: req.method,
          path,
          status: res.statusCode,
          latency_ms: Number(process.hrtime.bigint() - start) / 1e6,
          key_hash: (res.locals.keyHash as string | null | undefined) ?? null,
        },
        'request',
      );
    });
    next();
  };
}
