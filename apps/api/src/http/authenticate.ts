// Plain express routes (byte streams in and out) declare their access rule like procedures do, and
// are mounted through rawRoutes(), which authenticates, applies the rule and the API's rate limits
// (tenant keys) before the handler runs.
// The access-matrix test reads the same declarations.
import { Router, type Request, type Response } from 'express';
import { authenticate, type Actor, type PlatformActor } from '../access/callers.js';
import { admitPlatform, admitTenant, type PermissionScope } from '../access/rules.js';
import { credentialOf } from '../access/credentials.js';
import type { AppDeps, ServiceDeps } from '../deps.js';
import { serviceDepsOf } from '../trpc/context.js';
import { labelRoute } from './request-metrics.js';

interface RawRouteBase {
  method: 'get' | 'put' | 'post';
  /** Express path, relative to where the routes are mounted. */
  path: string;
  /** Its entry in the OpenAPI document (routes under /api/v1). */
  doc?: RawRouteDoc;
  /** The permission it needs (access/rules.ts); every management route declares one. */
  scope?: PermissionScope;
}

export interface RawRouteDoc {
  /** Stable, like the procedures' (`<router>-<procedure>`): generated clients name their calls by it. */
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  /** Media type of a successful answer's bytes. */
  contentType: string;
  query?: Array<{ name: string; description: string; type: 'string' | 'integer' }>;
  /** A multipart/form-data body with one binary part, `file` (POST /files); the answer is a JSON File record. */
  multipart?: boolean;
}
export type RawRoute =
  | (RawRouteBase & { access: 'public'; handle(deps: ServiceDeps, req: Request, res: Response): Promise<void> })
  | (RawRouteBase & { access: 'tenant' | 'management'; handle(deps: ServiceDeps, req: Request, res: Response, actor: Actor): Promise<void> })
  | (RawRouteBase & { access: 'platform'; handle(deps: ServiceDeps, req: Request, res: Response, platform: PlatformActor): Promise<void> });

async function callerOf(deps: AppDeps, req: Request, res: Response) {
  const credential = credentialOf(req);
  // The request log names the key by its hash, never by the key.
  res.locals.keyHash = credential.keyHash;
  return authenticate(deps.db, deps.keys, credential.keyHash, deps.now(), credential.accessToken, deps.identity.tokens);
}

/** An express router serving `routes`, each behind its access rule (401 / 403 before the handler). */
export function rawRoutes(deps: AppDeps, routes: readonly RawRoute[]): Router {
  const router = Router();
  for (const route of routes) {
    router[route.method](route.path, async (req, res) => {
      labelRoute(req, res);
      // The handler's services see the request's id and client address, and whether its client is gone (serviceDepsOf).
      const served = serviceDepsOf(deps, req);
      // Its own input is its credential: no key is read (an Authorization header is ignored).
      if (route.access === 'public') return route.handle(served, req, res);
      const caller = await callerOf(deps, req, res);
      if (route.access === 'platform') return route.handle(served, req, res, admitPlatform(caller));
      const actor = admitTenant(caller, route.access, route.scope);
      await deps.apiRateLimits.admit(deps.db, actor);
      await route.handle(served, req, res, actor);
    });
  }
  return router;
}
