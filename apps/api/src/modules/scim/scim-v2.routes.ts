// The SCIM 2.0 service provider (RFC 7643, RFC 7644) at /scim/v2: the organization's identity
// provider provisions its users and groups here. It speaks SCIM, not the /api/v1 conventions:
// application/scim+json bodies, the SCIM error format, ListResponse lists with startIndex / count.
// Only a SCIM token of the organization (scim.createToken) authenticates here; API keys do not, and
// a SCIM token authenticates nothing else. app.ts mounts the router scimRoutes() builds at SCIM_PREFIX.
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { ANONYMOUS } from '../../access/callers.js';
import { httpErrorOf, Invalid } from '../../lib/errors.js';
import { assertStorable } from '../../lib/storable-input.js';
import {
  createGroup,
  createUser,
  deleteGroup,
  deleteUser,
  getGroup,
  getUser,
  listGroups,
  listUsers,
  patchGroup,
  patchUser,
  replaceGroup,
  replaceUser,
  type ScimQuery,
} from './directory.service.js';
import { groupResource, userResource, type ScimLinks } from './directory-resources.js';
import { resourceTypes, SCIM_CONTENT_TYPE, schemas, scimErrorBody, scimErrorOf, ScimError, listResponse, serviceProviderConfig } from './scim-protocol.js';
import { scimCallerOf, type ScimCaller } from './scim-tokens.service.js';
import { hashApiKey } from '../../access/key-format.js';
import { requestDepsFactory, requestOrigin } from '../../trpc/context.js';
import type { AppDeps, ServiceDeps } from '../../trpc/service-deps.js';
import { logIfInternal } from '../../lib/errors.js';
import { loggerOf } from '../../lib/request-scope.js';
import { labelRoute } from '../../raw-routes/route-label.js';

export const SCIM_PREFIX = '/scim/v2';

/** The largest request body accepted (a Group with its members list). */
const MAX_BODY = '1mb';

function send(res: Response, status: number, body?: unknown): void {
  if (body === undefined) {
    res.status(status).end();
    return;
  }
  res.status(status).type(SCIM_CONTENT_TYPE).send(JSON.stringify(body));
}

function sendError(res: Response, error: ScimError): void {
  if (error.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="SCIM"');
  send(res, error.status, scimErrorBody(error.status, error.message, error.scimType));
}

/** One query parameter as a single string (given twice: 400). */
function queryParam(req: Request, name: string): string | undefined {
  const value = (req.query as Record<string, unknown>)[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ScimError(400, 'invalidValue', `${name} given more than once`);
  return value;
}

function integerParam(req: Request, name: string, fallback: number): number {
  const raw = queryParam(req, name);
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d{1,9}$/.test(raw)) throw new ScimError(400, 'invalidValue', `${name} must be an integer`);
  return Number(raw);
}

/** filter, startIndex (1-based; below 1 means 1) and count (0..100, default 100), RFC 7644 §3.4.2; and whether members are left out of Groups. */
function listQuery(req: Request): ScimQuery & { excludeMembers: boolean } {
  const excluded = queryParam(req, 'excludedAttributes');
  return {
    filter: queryParam(req, 'filter') || undefined,
    startIndex: Math.max(1, integerParam(req, 'startIndex', 1)),
    count: Math.min(100, Math.max(0, integerParam(req, 'count', 100))),
    excludeMembers: excluded?.split(',').some((name) => name.trim().toLowerCase() === 'members') ?? false,
  };
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The SHA-256 of the request's bearer token (a SCIM token is kept only as its hash), or null. */
function bearerHash(req: Request): string | null {
  const token = req.headers.authorization ? BEARER.exec(req.headers.authorization)?.[1] : undefined;
  return token ? hashApiKey(token) : null;
}

/** The links of the request's representations: where the client reached /scim/v2, and the resource there. */
function linksOf(req: Request): ScimLinks {
  const base = `${requestOrigin(req)}${SCIM_PREFIX}`;
  return { resource: (kind, id) => `${base}/${kind}s/${id}` };
}

type Handler = (deps: ServiceDeps, req: Request, res: Response, caller: ScimCaller) => Promise<void>;

/** A create's answer: 201 with the resource, and its location in the Location header. */
function created(res: Response, resource: Record<string, unknown>): void {
  res.setHeader('Location', String((resource as { meta: { location: string } }).meta.location));
  send(res, 201, resource);
}

export interface ScimRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  handle: Handler;
}

/**
 * The /scim/v2 endpoints, declared: method, path (express's, under SCIM_PREFIX) and handler. The
 * audit coverage test reads the writes (every method but GET) from here. The services answer rows;
 * their representations (and the links in them) are made here.
 */
export const SCIM_ROUTES: readonly ScimRoute[] = [
  {
    method: 'get',
    path: '/ServiceProviderConfig',
    handle: async (_deps, _req, res) => send(res, 200, await serviceProviderConfig()),
  },
  {
    method: 'get',
    path: '/ResourceTypes',
    handle: async (_deps, _req, res) => send(res, 200, await resourceTypes()),
  },
  {
    method: 'get',
    path: '/ResourceTypes/:id',
    handle: async (_deps, req, res) => send(res, 200, await resourceTypes(String(req.params.id))),
  },
  {
    method: 'get',
    path: '/Schemas',
    handle: async (_deps, _req, res) => send(res, 200, await schemas()),
  },
  {
    method: 'get',
    path: '/Schemas/:id',
    handle: async (_deps, req, res) => send(res, 200, await schemas(String(req.params.id))),
  },
  {
    method: 'get',
    path: '/Users',
    handle: async (deps, req, res, caller) => {
      const query = listQuery(req);
      const { users, total } = await listUsers(deps, caller, query);
      const links = linksOf(req);
      const resources = users.map((user) => userResource(user, links));
      send(res, 200, listResponse(resources, total, query.startIndex));
    },
  },
  {
    method: 'post',
    path: '/Users',
    handle: async (deps, req, res, caller) => created(res, userResource(await createUser(deps, caller, { body: req.body }), linksOf(req))),
  },
  {
    method: 'get',
    path: '/Users/:id',
    handle: async (deps, req, res, caller) => send(res, 200, userResource(await getUser(deps, caller, { id: String(req.params.id) }), linksOf(req))),
  },
  {
    method: 'put',
    path: '/Users/:id',
    handle: async (deps, req, res, caller) =>
      send(res, 200, userResource(await replaceUser(deps, caller, { id: String(req.params.id), body: req.body }), linksOf(req))),
  },
  {
    method: 'patch',
    path: '/Users/:id',
    handle: async (deps, req, res, caller) =>
      send(res, 200, userResource(await patchUser(deps, caller, { id: String(req.params.id), body: req.body }), linksOf(req))),
  },
  {
    method: 'delete',
    path: '/Users/:id',
    handle: async (deps, req, res, caller) => {
      await deleteUser(deps, caller, { id: String(req.params.id) });
      send(res, 204);
    },
  },
  {
    method: 'get',
    path: '/Groups',
    handle: async (deps, req, res, caller) => {
      const query = listQuery(req);
      const { groups, total } = await listGroups(deps, caller, query);
      const links = linksOf(req);
      const resources = groups.map((group) => groupResource(group, links, query.excludeMembers));
      send(res, 200, listResponse(resources, total, query.startIndex));
    },
  },
  {
    method: 'post',
    path: '/Groups',
    handle: async (deps, req, res, caller) => created(res, groupResource(await createGroup(deps, caller, { body: req.body }), linksOf(req))),
  },
  {
    method: 'get',
    path: '/Groups/:id',
    handle: async (deps, req, res, caller) => {
      // The query is read first: a malformed one is 400 whether or not the group exists.
      const { excludeMembers } = listQuery(req);
      send(res, 200, groupResource(await getGroup(deps, caller, { id: String(req.params.id) }), linksOf(req), excludeMembers));
    },
  },
  {
    method: 'put',
    path: '/Groups/:id',
    handle: async (deps, req, res, caller) =>
      send(res, 200, groupResource(await replaceGroup(deps, caller, { id: String(req.params.id), body: req.body }), linksOf(req))),
  },
  {
    method: 'patch',
    path: '/Groups/:id',
    handle: async (deps, req, res, caller) => {
      const links = linksOf(req);
      send(res, 200, groupResource(await patchGroup(deps, caller, { id: String(req.params.id), body: req.body, links }), links));
    },
  },
  {
    method: 'delete',
    path: '/Groups/:id',
    handle: async (deps, req, res, caller) => {
      await deleteGroup(deps, caller, { id: String(req.params.id) });
      send(res, 204);
    },
  },
];

/** The /scim/v2 routes: authenticated by SCIM token, answered in SCIM's formats. */
export function scimRoutes(deps: AppDeps): Router {
  const router = Router();
  router.use(express.json({ type: ['application/scim+json', 'application/json'], limit: MAX_BODY }));

  const depsOf = requestDepsFactory(deps);
  const route = (handler: Handler) => async (req: Request, res: Response) => {
    labelRoute(req, res);
    const hash = bearerHash(req);
    res.locals.keyHash = hash;
    const caller = hash ? await scimCallerOf(deps, ANONYMOUS, { hash }) : null;
    if (!caller) throw new ScimError(401, undefined, 'a SCIM token of the organization is required (Authorization: Bearer <token>)');
    // What PostgreSQL cannot store (NUL, lone surrogates) or nesting too deep: 400 before any query.
    try {
      assertStorable({ query: req.query, params: req.params, body: req.body });
    } catch (error) {
      if (error instanceof Invalid) throw new ScimError(400, 'invalidValue', error.message);
      throw error;
    }
    await handler(depsOf(req), req, res, caller);
  };
  for (const { method, path, handle } of SCIM_ROUTES) router[method](path, route(handle));

  router.use((req: Request, res: Response) => {
    sendError(res, new ScimError(404, undefined, `no SCIM endpoint ${req.method} ${req.path}`));
  });
  // Every error, malformed JSON and oversized bodies included, in the SCIM error format.
  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const scim = scimErrorOf(error);
    if (scim) return sendError(res, scim);
    const bodyError = error as { type?: string; status?: number };
    if (bodyError.type === 'entity.parse.failed') return sendError(res, new ScimError(400, 'invalidSyntax', 'the request body is not valid JSON'));
    if (error instanceof URIError) return sendError(res, new ScimError(400, 'invalidValue', 'a malformed percent-encoding in the path'));
    if (bodyError.type === 'entity.too.large') return sendError(res, new ScimError(413, undefined, `the request body exceeds ${MAX_BODY}`));
    if (bodyError.type === 'encoding.unsupported' || bodyError.type === 'charset.unsupported') {
      return sendError(res, new ScimError(415, undefined, 'unsupported request body encoding'));
    }
    const http = httpErrorOf(error);
    logIfInternal(loggerOf(req, deps.logger), http, { route: `${SCIM_PREFIX}${req.path}` });
    sendError(res, new ScimError(http.status, undefined, http.message));
  });
  return router;
}
