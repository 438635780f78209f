// express's own error answers: unknown paths, and errors raised outside tRPC (raw routes, express
// itself), in the envelope (raw-routes/send-error.ts: sendError, requestErrorOf).
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { httpErrorOf, logIfInternal } from '../lib/errors.js';
import { NotFound } from '../lib/errors.js';
import { loggerOf } from '../lib/request-scope.js';
import { requestErrorOf, sendError } from '../raw-routes/send-error.js';

/** Unknown paths: 404 with the envelope. */
export const notFoundHandler: RequestHandler = (_req, res) => {
  sendError(res, httpErrorOf(new NotFound('no such route')));
};

/** Errors raised outside tRPC (raw routes, express itself): the envelope, with the shared mapping. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const error = httpErrorOf(requestErrorOf(err));
    logIfInternal(loggerOf(req, logger), error, { method: req.method, path: req.path });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(res, error);
  };
}
