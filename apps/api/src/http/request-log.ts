// Request ids and the request log, through pino-http: every request gets an id (a sane incoming
// X-Request-Id, else a new UUID), echoed in X-Request-Id; req.log is a child logger that writes the
// id into every line logged for that request; and one line per request gives method, path, status,
// latency and the key's hash (never the key). Health probes log at debug.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** What an incoming id may look like to be kept: printable, no spaces or quotes, at most 128 characters. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

const PROBES = new Set(['/healthz', '/readyz']);

/** The id pino-http gave the request (set before any route runs). */
export function requestIdOf(req: IncomingMessage): string | undefined {
  return req.id === undefined ? undefined : String(req.id);
}

/** The logger for what happens while serving `req`: the request's child logger, with its id. */
export function loggerOf(req: IncomingMessage, fallback: Logger): Logger {
  return req.log ?? fallback;
}

function pathOf(req: IncomingMessage): string {
  return ((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/').split('?', 1)[0]!;
}

export function requestLog(logger: Logger): RequestHandler {
  const line = (req: IncomingMessage, res: ServerResponse, val: { latency_ms: number }) => ({
    method: req.method,
    path: pathOf(req),
    status: res.statusCode,
    latency_ms: val.latency_ms,
    key_hash: (res as { locals?: { keyHash?: string | null } }).locals?.keyHash ?? null,
  });
  return pinoHttp({
    logger,
    genReqId(req, res) {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader(REQUEST_ID_HEADER, id);
      return id;
    },
    // req.log carries only the id; the request itself is summarised once, by the line below.
    quietReqLogger: true,
    quietResLogger: true,
    customAttributeKeys: { reqId: 'request_id', responseTime: 'latency_ms' },
    customLogLevel: (req) => (PROBES.has(pathOf(req)) ? 'debug' : 'info'),
    customSuccessObject: line,
    // A 5xx is summarised like any answer; its cause is logged where it happened (logIfInternal).
    customErrorObject: (req, res, _error, val) => line(req, res, val),
    customSuccessMessage: () => 'request',
    customErrorMessage: () => 'request',
  }) as RequestHandler;
}
