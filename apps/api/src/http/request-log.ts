import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

/** One structured line per request: method, path, status, latency and the key's hash (never the key). */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info(
        {
          method: req.method,
          path: req.originalUrl.split('?', 1)[0],
          status: res.statusCode,
          latency_ms: Number(process.hrtime.bigint() - start) / 1e6,
          key_hash: res.locals.keyHash ?? null,
        },
        'request',
      );
    });
    next();
  };
}
