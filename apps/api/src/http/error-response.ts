import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { envelopeOf, httpErrorOf, type HttpError } from '../errors.js';
import { NotFound, DomainError, Invalid, PayloadTooLarge } from '../errors.js';
import { loggerOf, requestIdOf } from './request-log.js';

export function sendError(res: Response, error: HttpError): void {
  res.status(error.status).type('application/json').send(JSON.stringify(envelopeOf(error, requestIdOf(res.req))));
}

/** Logs the cause of an internal error; the client sees only the spec's text. */
export function logIfInternal(logger: Logger, error: HttpError, context: Record<string, unknown>): void {
  if (error.status === 500) logger.error({ err: error.cause, ...context }, 'internal error');
}

/** Unknown paths: 404 with the envelope. */
export const notFoundHandler: RequestHandler = (_req, res) => {
  sendError(res, httpErrorOf(new NotFound('no such route')));
};

/** Errors raised outside tRPC (body parsing, express itself): malformed JSON, oversized bodies. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const type = (err as { type?: string }).type;
    const domain =
      err instanceof DomainError
        ? err
        : type === 'entity.parse.failed'
          ? new Invalid('malformed JSON body', { reason: 'malformed JSON body' })
          : err instanceof URIError
            ? new Invalid('malformed percent-encoding in the path', { reason: 'malformed percent-encoding in the path' })
            : type === 'entity.too.large'
            ? new PayloadTooLarge('request body too large')
            : typeof type === 'string' && (err as { status?: number }).status === 400
              ? new Invalid(`unreadable request body (${type})`)
              : err;
    const error = httpErrorOf(domain);
    logIfInternal(loggerOf(req, logger), error, { method: req.method, path: req.path });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(res, error);
  };
}
