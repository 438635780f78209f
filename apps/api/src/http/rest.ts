// The REST surface: the router's procedures at their documented paths, served the way
// trpc-to-openapi's node-http adapter serves them (same routing, the same query/body/path input, the
// same coercion of query strings), and built from that library's own utilities. Its adapter does
// per request what can be done once (it re-derives each procedure's input schema and re-applies its
// coercion, and builds a whole Fetch Request just to get an abort signal), and answers errors with
// its own body, not the spec's envelope, and passes path parameters on still percent-encoded. Here
// routes are prepared at start-up, path parameters are decoded, errors get the envelope and the
// status of the shared mapping, and successful answers are the procedure's output as JSON.
import type { AnyProcedure, AnyRouter } from '@trpc/server';
import { getTRPCErrorFromUnknown, TRPCError } from '@trpc/server';
import type { Request, RequestHandler, Response } from 'express';
import {
  acceptsRequestBody,
  coerceSchema,
  forEachOpenApiProcedure,
  getInputOutputParsers,
  getPathRegExp,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  instanceofZodTypeOptional,
  normalizePath,
  unwrapZodType,
  zodSupportsCoerce,
} from 'trpc-to-openapi';
import { ZodArray } from 'zod/v4';
import type { Logger } from 'pino';
import { envelopeOf, httpErrorOf, Invalid } from '../errors.js';
import type { AppDeps } from '../trpc/context.js';
import type { ProcedureMeta } from '../trpc/init.js';
import { contextFactory } from '../trpc/context.js';
import { logIfInternal } from './error-response.js';
import { loggerOf, requestIdOf } from './request-log.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface Route {
  pattern: RegExp;
  /** The documented path, e.g. /model/{author}/{slug} (the metrics' route label). */
  template: string;
  path: string;
  type: 'query' | 'mutation';
  procedure: AnyProcedure;
  /** The input is z.void(): no input at all. */
  voidInput: boolean;
  /** Query parameters that are arrays in the schema: a single value becomes [value]. */
  arrayParams: string[];
  /** The status of a successful answer (meta.successStatus; 201 for creates). */
  successStatus: number;
}

function routesOf(router: AnyRouter): Map<string, Route[]> {
  const routes = new Map<string, Route[]>();
  forEachOpenApiProcedure(router._def.procedures, ({ path, procedure, meta }) => {
    const { openapi } = meta;
    const type = procedure._def.type;
    if (type === 'subscription') return;
    const { inputParser } = getInputOutputParsers(procedure);
    const schema = unwrapZodType(inputParser, true);
    const arrayParams: string[] = [];
    if (zodSupportsCoerce && instanceofZodTypeObject(schema)) {
      for (const [key, shape] of Object.entries(schema.shape)) {
        if (shape instanceof ZodArray || (instanceofZodTypeOptional(shape) && shape.unwrap() instanceof ZodArray)) arrayParams.push(key);
      }
      // Query strings arrive as strings: numbers, booleans and dates coerce (the library does this
      // on every request; the schema keeps it once done).
      coerceSchema(schema);
    }
    const list = routes.get(openapi.method) ?? [];
    list.push({
      pattern: getPathRegExp(normalizePath(openapi.path)),
      template: normalizePath(openapi.path),
      path,
      type,
      procedure: procedure as AnyProcedure,
      voidInput: instanceofZodTypeLikeVoid(schema),
      arrayParams,
      successStatus: (meta as ProcedureMeta).successStatus ?? 200,
    });
    routes.set(openapi.method, list);
  });
  return routes;
}

/**
 * Path parameters arrive percent-encoded (`gpt-4%3Afree`; `%2F` must not split a segment), and the
 * library passes them on raw: they are decoded here. Malformed encodings are a 400.
 */
function decodedParams(params: Record<string, string>): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    try {
      decoded[name] = decodeURIComponent(value);
    } catch {
      throw new Invalid(`malformed percent-encoding in path parameter ${name}`, { parameter: name });
    }
  }
  return decoded;
}

/** Query parameters as trpc-to-openapi reads them: a parameter given once is a string. */
function queryOf(req: Request, arrayParams: string[]): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(req.query as Record<string, unknown>)) {
    if (!value) continue;
    query[key] = Array.isArray(value) && value.length === 1 ? value[0] : value;
  }
  for (const key of arrayParams) {
    if (query[key] !== undefined && !Array.isArray(query[key])) query[key] = [query[key]];
  }
  return query;
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

function send(res: Response, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

export function restHandler(router: AnyRouter, deps: AppDeps & { logger: Logger }): RequestHandler {
  const routes = routesOf(router);
  const createContext = contextFactory(deps);

  return (req, res, next) => {
    const path = normalizePath((req.url.split('?', 1)[0] ?? '/') || '/');
    let route: Route | undefined;
    let params: Record<string, string> = {};
    for (const candidate of routes.get(req.method) ?? []) {
      const match = candidate.pattern.exec(path);
      if (match) {
        route = candidate;
        params = match.groups ?? {};
        break;
      }
    }
    if (!route) return next();
    const found = route;
    res.locals.route = `${req.baseUrl}${found.template}`;

    void (async () => {
      try {
        const useBody = acceptsRequestBody(req.method as Parameters<typeof acceptsRequestBody>[0]);
        let input: Record<string, unknown> | undefined;
        if (useBody) {
          const contentType = req.headers['content-type'];
          // Clients of body-less operations (e.g. promote) send neither a body nor a Content-Type:
          // an empty body is {}.
          const empty = BODY_METHODS.has(req.method) && contentType === undefined && !hasBody(req);
          if (!empty && !contentType?.startsWith('application/json')) {
            throw new TRPCError({
              code: 'UNSUPPORTED_MEDIA_TYPE',
              message: contentType ? `Unsupported content-type "${contentType}` : 'Missing content-type header',
            });
          }
          if (!found.voidInput) input = empty ? {} : (req.body as Record<string, unknown>);
        } else if (!found.voidInput) {
          input = queryOf(req, found.arrayParams);
        }
        const data = await found.procedure({
          ctx: createContext({ req, res }),
          path: found.path,
          type: found.type,
          // Decoded when the procedure reads its input, i.e. after authentication (401 comes first).
          getRawInput: async () => (input === undefined ? undefined : { ...input, ...decodedParams(params) }),
          input: undefined,
          signal: undefined,
          batchIndex: 0,
        });
        send(res, found.successStatus, data);
      } catch (cause) {
        const http = httpErrorOf(getTRPCErrorFromUnknown(cause));
        logIfInternal(loggerOf(req, deps.logger), http, { procedure: found.path });
        send(res, http.status, envelopeOf(http, requestIdOf(req)));
      }
    })().catch(next);
  };
}
