import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type Express } from 'express';
import { httpErrorOf } from './lib/errors.js';
import { VERSION } from './lib/version.js';
import { rawRoutes } from './http/authenticate.js';
import { logIfInternal } from './lib/errors.js';
import { errorHandler, notFoundHandler } from './http/error-response.js';
import { openApiDocument } from './http/openapi.js';
import { API_PREFIX } from '@switchyard/schema';
import { requireHost } from './http/client-error.js';
import { corsFor } from './http/cors.js';
import { consoleRoutes } from './http/console.js';
import { docsRoutes } from './http/docs.js';
import { requestLog } from './http/request-log.js';
import { loggerOf } from './lib/request-scope.js';
import { requestMetrics } from './http/request-metrics.js';
import { restHandler } from './http/rest.js';
import { SCIM_PREFIX, SCIM_ROUTES, scimRoutes, type ScimRoute } from './modules/scim/scim-v2.routes.js';
import { sampleVideoRoutes } from './modules/videos/sample-video.js';
import { appRouter } from './router.js';
import { BYTE_ROUTE_MOUNTS } from './modules.js';
import { contextFactory } from './trpc/context.js';
import type { AppDeps } from './trpc/service-deps.js';
import { proceduresOf } from './trpc/procedures.js';

export { API_PREFIX };

/** The most calls one tRPC batch request may carry. */
export const TRPC_MAX_BATCH_SIZE = 100;

/** The SCIM 2.0 endpoints (their own credential: SCIM tokens), mounted at SCIM_PREFIX. */
export const SCIM_ROUTE_MOUNT: { prefix: string; routes: readonly ScimRoute[] } = { prefix: SCIM_PREFIX, routes: SCIM_ROUTES };

export interface AppOptions {
  /** Origins a browser may call from (CORS, preflights included); empty: no CORS headers at all. */
  corsOrigins?: string[];
}

/** The whole HTTP surface as an express app; main.ts gives it a port, tests give it port 0. */
export function createApp(deps: AppDeps, options: AppOptions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Whose X-Forwarded-* headers req.protocol and req.host believe (links.next; see requestOrigin()).
  app.set('trust proxy', deps.trustProxy ?? false);
  app.use(requestLog(deps.logger));
  app.use(requestMetrics(deps.metrics, new Set(Object.keys(proceduresOf(appRouter)))));
  app.use(requireHost);
  if (options.corsOrigins?.length) app.use(corsFor(options.corsOrigins));

  let document: ReturnType<typeof openApiDocument> | undefined;
  app.get(`${API_PREFIX}/openapi.json`, (_req, res) => {
    document ??= openApiDocument(appRouter, API_PREFIX, BYTE_ROUTE_MOUNTS);
    res.json(document);
  });

  // The JSON REST operations, the most requested, before the other routes: express tries each mounted
  // layer in turn. A path none of them has goes on to the byte streams below, which share the prefix
  // (no operation's path matches one of theirs: test/http/rest-adapter.test.ts).
  app.use(API_PREFIX, restHandler(appRouter, deps));

  // Alive unless the database has been gone longer than DATABASE_UNHEALTHY_AFTER_MS (docs/operations.md,
  // "When the database goes away"): a supervisor restarts a server that cannot heal by itself.
  app.get('/healthz', (_req, res) => {
    const health = deps.databaseHealth?.health();
    if (!health || health.database === 'up') {
      res.json({ status: 'ok', version: VERSION });
      return;
    }
    res.status(health.healthy ? 200 : 503).json({
      status: health.healthy ? 'ok' : 'unavailable',
      version: VERSION,
      database: health.database,
      database_down_since: health.downSince,
    });
  });
  // Ready: the database answers now. A database known to be gone is not asked (nor logged per probe).
  app.get('/readyz', async (req, res) => {
    if (deps.databaseHealth && !deps.databaseHealth.up) {
      res.status(503).json({ status: 'unavailable' });
      return;
    }
    try {
      await deps.db.$executeRaw`SELECT 1`;
      res.json({ status: 'ok' });
    } catch (error) {
      if (!deps.databaseHealth?.report(error)) loggerOf(req, deps.logger).warn({ err: error }, 'readiness check failed');
      res.status(503).json({ status: 'unavailable' });
    }
  });

  app.use(
    '/trpc',
    createExpressMiddleware({
      router: appRouter,
      createContext: contextFactory(deps),
      maxBodySize: 1024 * 1024,
      // A batch larger than this is refused whole (400) before any call runs; @switchyard/client
      // splits its batches at the same size.
      maxBatchSize: TRPC_MAX_BATCH_SIZE,
      onError({ error, path, req }) {
        logIfInternal(loggerOf(req, deps.logger), httpErrorOf(error), { procedure: path });
      },
      responseMeta({ errors }) {
        // Statuses tRPC has no code for (524, 529) and domain errors get the shared mapping.
        const first = errors[0];
        if (!first) return {};
        const http = httpErrorOf(first);
        return http.retryAfterS === undefined ? { status: http.status } : { status: http.status, headers: { 'Retry-After': String(http.retryAfterS) } };
      },
    }),
  );

  // Byte streams: their own express routes.
  for (const { prefix, routes } of BYTE_ROUTE_MOUNTS) app.use(prefix, rawRoutes(deps, routes));
  // The SCIM 2.0 service provider: its own credential (SCIM tokens), formats and errors.
  app.use(SCIM_ROUTE_MOUNT.prefix, scimRoutes(deps));
  app.use(sampleVideoRoutes());
  app.use(docsRoutes());
  app.use(consoleRoutes());
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
