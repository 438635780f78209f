import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type Express } from 'express';
import { httpErrorOf } from './errors.js';
import { downloadRoutes } from './http/downloads.js';
import { errorHandler, logIfInternal, notFoundHandler } from './http/error-response.js';
import { openApiDocument } from './http/openapi.js';
import { API_PREFIX } from './http/paths.js';
import { requestLog } from './http/request-log.js';
import { restHandler } from './http/rest.js';
import { sampleVideoRoutes } from './http/sample-video.js';
import { sandboxWriterRoutes } from './http/sandbox-writer.js';
import { appRouter } from './router.js';
import { contextFactory, type AppDeps } from './trpc/context.js';

export { API_PREFIX };

/** The whole HTTP surface as an express app; main.ts gives it a port, tests give it port 0. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Whose X-Forwarded-* headers req.protocol and req.host believe (links.next; see requestOrigin()).
  app.set('trust proxy', deps.trustProxy ?? false);
  app.use(requestLog(deps.logger));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await deps.db.$queryRaw`SELECT 1`;
      res.json({ status: 'ok' });
    } catch (error) {
      deps.logger.warn({ err: error }, 'readiness check failed');
      res.status(503).json({ status: 'unavailable' });
    }
  });

  let document: ReturnType<typeof openApiDocument> | undefined;
  app.get(`${API_PREFIX}/openapi.json`, (req, res) => {
    document ??= openApiDocument(appRouter, API_PREFIX);
    res.json(document);
  });

  app.use(
    '/trpc',
    createExpressMiddleware({
      router: appRouter,
      createContext: contextFactory(deps),
      maxBodySize: 1024 * 1024,
      onError({ error, path }) {
        logIfInternal(deps.logger, httpErrorOf(error), { procedure: path });
      },
      responseMeta({ errors }) {
        // Statuses tRPC has no code for (524, 529) and domain errors get the shared mapping.
        const first = errors[0];
        return first ? { status: httpErrorOf(first).status } : {};
      },
    }),
  );

  // Byte streams: their own express routes, before the JSON REST adapter (which answers only JSON).
  app.use(API_PREFIX, downloadRoutes(deps));
  app.use('/internal', sandboxWriterRoutes(deps));
  app.use(sampleVideoRoutes());
  app.use(API_PREFIX, restHandler(appRouter, deps));
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
