// The REST surface: the router's procedures at their documented paths, served the way
// trpc-to-openapi's node-http adapter serves them (same routing, the same query/body/path input, the
// same coercion of query strings), and built from that library's own utilities and tRPC's public
// API: the procedures listed from the router's record (trpc/procedures.ts), each called through a
// caller of createCallerFactory. Its adapter does per request what can be done once (it re-derives
// each procedure's input schema and re-applies its coercion, and builds a whole Fetch Request just
// to get an abort signal), and answers errors with its own body, not the spec's envelope, and passes
// path parameters on still percent-encoded. Here routes are prepared at start-up, path parameters
// are decoded, errors get the envelope and the status of the shared mapping (narrowed to the
// statuses the operation declares), and successful answers are the procedure's output as JSON.
import type { AnyRouter } from '@trpc/server';
import { getTRPCErrorFromUnknown } from '@trpc/server';
import express, { type Request, type RequestHandler, type Response } from 'express';
import {
  acceptsRequestBody,
  forEachOpenApiProcedure,
  getInputOutputParsers,
  getPathParameters,
  getPathRegExp,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  instanceofZodTypeOptional,
  normalizePath,
  unwrapZodType,
} from 'trpc-to-openapi';
import { ZodArray, type ZodObject, type ZodType } from 'zod/v4';
import type { Logger } from 'pino';
import { declaredAnswer, envelopeOf, httpErrorOf, Invalid, logIfInternal } from '../lib/errors.js';
import type { AppDeps } from '../trpc/service-deps.js';
import { admitAhead, createCallerFactory, type ProcedureMeta } from '../trpc/init.js';
import { contextFactory } from '../trpc/context.js';
import { proceduresOf } from '../trpc/procedures.js';
import { requestErrorOf } from '../raw-routes/send-error.js';
import { loggerOf, requestIdOf } from '../lib/request-scope.js';
import { isSharedAnswer } from '../lib/shared-answers.js';

/** A procedure as its caller offers it: called with its input. */
type Call = (input: unknown) => Promise<unknown>;

interface Route {
  pattern: RegExp;
  /** The path parameters' names, in the template's order (author, slug). */
  paramNames: string[];
  /** The documented path, e.g. /model/{author}/{slug} (the metrics' route label). */
  template: string;
  /** The procedure's path in the router, e.g. keys.list. */
  path: string;
  /** The procedure's path in a caller: ['keys', 'list']. */
  segments: string[];
  meta: ProcedureMeta;
  /** The procedure declares no input, or z.void(): it is called with none. */
  voidInput: boolean;
  /** Query parameters that are arrays in the schema: a single value becomes [value]. */
  arrayParams: string[];
  /** The REST input's text (query string, path parameters) coerced to the schema's numbers, booleans, bigints and dates. */
  coerce: Coercion;
}

/** A method's routes: those without path parameters by their path (lowercased), the others in the routers' order. */
interface MethodRoutes {
  exact: Map<string, Route>;
  patterns: Route[];
}

function routesOf(router: AnyRouter): Map<string, MethodRoutes> {
  const routes = new Map<string, MethodRoutes>();
  forEachOpenApiProcedure(proceduresOf(router), ({ path, type, procedure, meta }) => {
    const { openapi } = meta;
    if (type === 'subscription') return;
    const { inputParser, hasInputsDefined } = getInputOutputParsers(procedure);
    const schema = unwrapZodType(inputParser, true);
    const arrayParams: string[] = [];
    let coerce: Coercion = (input) => input;
    if (instanceofZodTypeObject(schema)) {
      for (const [key, shape] of Object.entries(schema.shape)) {
        if (shape instanceof ZodArray || (instanceofZodTypeOptional(shape) && shape.unwrap() instanceof ZodArray)) arrayParams.push(key);
      }
      coerce = objectCoercionOf(schema) ?? coerce;
    }
    const template = normalizePath(openapi.path);
    const route: Route = {
      pattern: getPathRegExp(template),
      paramNames: getPathParameters(template),
      template,
      path,
      segments: path.split('.'),
      meta: meta as ProcedureMeta,
      voidInput: !hasInputsDefined || instanceofZodTypeLikeVoid(schema),
      arrayParams,
      coerce,
    };
    let method = routes.get(openapi.method);
    if (!method) routes.set(openapi.method, (method = { exact: new Map(), patterns: [] }));
    if (route.paramNames.length === 0) method.exact.set(template.toLowerCase(), route);
    else method.patterns.push(route);
  });
  return routes;
}

/**
 * The route of a request's path, and its path parameters, still percent-encoded: a path without
 * parameters by lookup, then the templates with parameters in the routers' order. Paths match
 * regardless of case, as trpc-to-openapi's patterns do. No template with parameters matches the path
 * of a template without that the routers list after it (test/http/rest-adapter.test.ts), so looking those
 * up first changes no answer.
 */
function routeOf(routes: MethodRoutes | undefined, path: string): { route: Route; params: Record<string, string> } | undefined {
  if (!routes) return undefined;
  const exact = routes.exact.get(path.toLowerCase());
  if (exact) return { route: exact, params: {} };
  for (const route of routes.patterns) {
    const groups = route.pattern.exec(path)?.groups;
    if (!groups) continue;
    const params: Record<string, string> = {};
    for (const name of route.paramNames) params[name] = groups[name]!;
    return { route, params };
  }
  return undefined;
}

type Coercion = (value: unknown) => unknown;

// REST inputs arrive as strings (query, path) where the schema wants numbers, booleans, bigints or
// dates. trpc-to-openapi's coerceSchema sets `coerce` on the procedure's own input schema, which
// tRPC callers share: they too would then be coerced from strings. Here the same fields, found the
// same way (unwrapZodType without pipes), get the same conversions as zod's coerce, applied to a
// copy of the REST input only; the procedure's schema then validates the result.
// Only strings (what query strings and path parameters carry) are converted: any other value goes
// to the schema as it came, so that an array or object where a number belongs is a 400, however
// deep (Number() of a deeply nested array recursed until the stack overflowed: a 500). A boolean is
// `true` or `false` and nothing else (zod's coerce would take "false", like any non-empty string,
// as true); any other text goes to the schema, which refuses it.
const fromString =
  (convert: (text: string) => unknown): Coercion =>
  (value) =>
    typeof value === 'string' ? convert(value) : value;
const coercions: Record<string, Coercion> = {
  number: fromString(Number),
  boolean: fromString((text) => (text === 'true' ? true : text === 'false' ? false : text)),
  bigint: fromString((text) => {
    try {
      return BigInt(text);
    } catch {
      return text;
    }
  }),
  date: fromString((text) => new Date(text)),
};

/** The coercion of one field's values (undefined: none); null and undefined are left to the schema. */
function coercionOf(type: ZodType): Coercion | undefined {
  // unwrapZodType looks through optional, nullable, default and arrays (to their element).
  const inner = unwrapZodType(type, false);
  const leaf = instanceofZodTypeObject(inner) ? objectCoercionOf(inner) : coercions[inner._zod.def.type];
  if (!leaf) return undefined;
  const one: Coercion = (value) => (value === null || value === undefined ? value : leaf(value));
  return (value) => (Array.isArray(value) ? value.map(one) : one(value));
}

/** The coercion of an object's fields, into a copy (undefined: no field coerces). */
function objectCoercionOf(schema: ZodObject): Coercion | undefined {
  const fields = Object.entries(schema.shape).flatMap(([key, shape]) => {
    const coercion = coercionOf(shape as ZodType);
    return coercion ? [[key, coercion] as const] : [];
  });
  if (fields.length === 0) return undefined;
  return (input) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
    const copy: Record<string, unknown> = { ...input };
    for (const [key, coercion] of fields) if (key in copy) copy[key] = coercion(copy[key]);
    return copy;
  };
}

/**
 * Path parameters arrive percent-encoded (`gpt-4%3Afree`; `%2F` must not split a segment), and the
 * library passes them on raw: they are decoded here. Malformed encodings are a 400.
 */
function decodedParams(route: Route, params: Record<string, string>): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const name of route.paramNames) {
    const value = params[name]!;
    // Most parameters hold no escape: decodeURIComponent and its try block showed in GET /model's CPU profile.
    if (!value.includes('%')) {
      decoded[name] = value;
      continue;
    }
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
  // Express parses the query string on each read of req.query; most reads of one record send none.
  if (!req.url.includes('?')) return query;
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

/** The media type of a Content-Type header, lowercased (media types are case-insensitive). */
function mediaTypeOf(contentType: string): string {
  return (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
}

// body-parser's JSON reader (limit, Content-Encoding, charset); whether the body is JSON at all is
// decided here, from the media type.
const parseJson = express.json({ limit: '1mb', strict: false, type: () => true });

/**
 * The JSON object a body operation was sent. Clients of body-less operations (e.g. promote) send
 * neither a body nor a Content-Type: an empty body is {}. Read once the caller is admitted
 * (admitAhead): a request without a valid key never has its body parsed.
 */
function readJsonBody(req: Request, res: Response): Promise<Record<string, unknown>> {
  const contentType = req.headers['content-type'];
  if (!hasBody(req)) return Promise.resolve({});
  if (contentType === undefined || mediaTypeOf(contentType) !== 'application/json') {
    return Promise.reject(new Invalid('the body must be application/json', { reason: 'unsupported content type' }));
  }
  return new Promise((resolve, reject) => {
    parseJson(req, res, (error?: unknown) => {
      if (error) return reject(requestErrorOf(error));
      const body: unknown = req.body;
      if (body === undefined) return resolve({});
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        return reject(new Invalid('the body must be a JSON object', { reason: 'the body must be a JSON object' }));
      }
      resolve(body as Record<string, unknown>);
    });
  });
}

/** The JSON of shared answers (shared-answers.ts), which never change. */
const sharedJson = new WeakMap<object, Buffer>();

/** Answers whose data is a list at least this long are encoded in pieces (listJson). */
const LONG_LIST = 256;
/** Items per piece: pieces of a few tens of KB, far below V8's large-object size (128 KB). */
const ITEMS_PER_PIECE = 64;

/**
 * JSON.stringify(body) for an answer holding a long list in `data`, encoded ITEMS_PER_PIECE items
 * at a time, so that no string of the whole answer is made (GET /activity's are hundreds of KB): a
 * lower peak RSS at the same CPU per answer (docs/decisions/0005-long-lists-encoded-in-pieces.md). JSON.stringify still encodes every
 * value; streaming serializers would answer in chunks, without a Content-Length, and encode values
 * themselves.
 */
function listJson(body: Record<string, unknown>, data: unknown[]): Buffer {
  const pieces: Buffer[] = [];
  let separator = '{';
  for (const key of Object.keys(body)) {
    if (key === 'data') {
      pieces.push(Buffer.from(`${separator}"data":[`));
      for (let i = 0; i < data.length; i += ITEMS_PER_PIECE) {
        const items = JSON.stringify(data.slice(i, i + ITEMS_PER_PIECE)).slice(1, -1);
        pieces.push(Buffer.from(i === 0 ? items : `,${items}`));
      }
      pieces.push(Buffer.from(']'));
    } else {
      // As a member of an object: a toJSON is given its key, and undefined leaves the member out.
      const member = JSON.stringify({ [key]: body[key] }).slice(1, -1);
      if (member === '') continue;
      pieces.push(Buffer.from(`${separator}${member}`));
    }
    separator = ',';
  }
  pieces.push(Buffer.from(separator === '{' ? '{}' : '}'));
  return Buffer.concat(pieces);
}

/** A plain object or array (its prototype `proto`) without its own toJSON. */
const plain = (value: unknown, proto: object): boolean =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === proto && !Object.hasOwn(value, 'toJSON');
const isPlainObject = (value: unknown): value is Record<string, unknown> => plain(value, Object.prototype);
const isPlainArray = (value: unknown): value is unknown[] => plain(value, Array.prototype);

/**
 * An answer's JSON, byte for byte JSON.stringify's. A shared answer's is made once; a plain answer
 * holding a long plain list in `data` is encoded in pieces (listJson; an item's toJSON, which no
 * answer has but Date's, which ignores it, would be given its index within its piece).
 */
export function jsonOf(body: unknown): Buffer {
  if (isSharedAnswer(body)) {
    let json = sharedJson.get(body);
    if (!json) sharedJson.set(body, (json = Buffer.from(JSON.stringify(body))));
    return json;
  }
  if (isPlainObject(body)) {
    const { data } = body;
    if (isPlainArray(data) && data.length >= LONG_LIST) return listJson(body, data);
  }
  return Buffer.from(JSON.stringify(body));
}

function send(res: Response, status: number, body: unknown): void {
  const json = jsonOf(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', json.length);
  res.end(json);
}

export function restHandler(router: AnyRouter, deps: AppDeps & { logger: Logger }): RequestHandler {
  const routes = routesOf(router);
  // The REST face is for keys: a session cookie is not read there (docs/sessions.md).
  const createContext = contextFactory(deps, { sessions: false });
  const createCaller = createCallerFactory(router);

  return (req, res, next) => {
    const matched = routeOf(routes.get(req.method), normalizePath((req.url.split('?', 1)[0] ?? '/') || '/'));
    if (!matched) return next();
    const { route: found, params } = matched;
    res.locals.route = `${req.baseUrl}${found.template}`;

    void (async () => {
      try {
        const ctx = createContext({ req, res });
        // The caller first (401, 403 and 429 come before anything about the input), then its input.
        const admission = admitAhead(ctx, found.meta);
        if (admission) await admission;
        let call: unknown = createCaller(ctx);
        for (const segment of found.segments) call = (call as Record<string, unknown>)[segment];
        const data = await (call as Call)(await inputOf(found, params, req, res));
        // meta.location: the Location header of a successful answer, from its output; meta.successStatus: 201 for creates.
        const { location, successStatus = 200 } = found.meta;
        if (location) res.setHeader('Location', (location as (output: unknown) => string)(data));
        send(res, successStatus, data);
      } catch (cause) {
        const natural = httpErrorOf(getTRPCErrorFromUnknown(cause));
        logIfInternal(loggerOf(req, deps.logger), natural, { procedure: found.path });
        // A status the operation does not declare becomes the declared one a client handles best.
        const http = found.meta.statuses ? declaredAnswer(found.meta.statuses, natural) : natural;
        if (http.retryAfterS !== undefined) res.setHeader('Retry-After', String(http.retryAfterS));
        send(res, http.status, envelopeOf(http, requestIdOf(req)));
      }
    })().catch(next);
  };
}

/**
 * A REST request's input: the JSON body with the path parameters, or the query with them. Only what
 * arrives as text is converted: the query string and path parameters. A JSON body carries its own
 * types: "3" where a number belongs is the schema's 400.
 */
async function inputOf(route: Route, params: Record<string, string>, req: Request, res: Response): Promise<unknown> {
  if (route.voidInput) return undefined;
  const path = decodedParams(route, params);
  if (acceptsRequestBody(req.method as Parameters<typeof acceptsRequestBody>[0])) {
    return { ...(await readJsonBody(req, res)), ...(route.coerce(path) as Record<string, unknown>) };
  }
  return route.coerce({ ...queryOf(req, route.arrayParams), ...path });
}
