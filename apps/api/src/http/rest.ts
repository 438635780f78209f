// The REST surface: trpc-to-openapi serves the router's procedures at their documented paths.
// Its own error body is not the spec's envelope and has no option to change it, so its onError
// hook (called before it writes the response) re-points this one response's end() to write the
// envelope instead, with the status from the shared mapping. Successful responses are untouched.
import type { Request, RequestHandler } from 'express';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { envelopeOf, httpErrorOf } from '../errors.js';
import type { AnyRouter } from '@trpc/server';
import type { AppDeps } from '../trpc/context.js';
import { contextFactory } from '../trpc/context.js';
import { logIfInternal } from './error-response.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

export function restHandler(router: AnyRouter, deps: AppDeps & { logger: Logger }): RequestHandler {
  const handler = createOpenApiNodeHttpHandler({
    router,
    createContext: contextFactory(deps, 'rest') as never,
    maxBodySize: 1024 * 1024,
    onError({ error, req, path }) {
      const http = httpErrorOf(error);
      logIfInternal(deps.logger, http, { procedure: path });
      const res = (req as Request).res as ServerResponse | undefined;
      if (!res) return;
      const body = JSON.stringify(envelopeOf(http));
      const end = res.end.bind(res);
      res.end = ((..._ignored: unknown[]) => {
        res.statusCode = http.status;
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.setHeader('Content-Length', Buffer.byteLength(body));
        return end(body);
      }) as ServerResponse['end'];
    },
  });
  return (req, res, next) => {
    // Clients of body-less operations (e.g. promote) send neither a body nor a Content-Type;
    // trpc-to-openapi would refuse that as an unsupported media type. An empty body is {}.
    if (BODY_METHODS.has(req.method) && req.headers['content-type'] === undefined && !hasBody(req)) {
      req.headers['content-type'] = 'application/json';
      req.body = {};
    }
    handler(req, res, next).catch(next);
  };
}
