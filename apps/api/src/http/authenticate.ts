// The mount of the plain express routes (raw-routes/route.ts: RawRoute, declared by the modules
// beside their routers): rawRoutes() authenticates, applies each route's rule and the API's rate
// limits (tenant keys) before the handler runs.
import { Router, type Request, type Response } from 'express';
import { authenticate } from '../access/callers.js';
import { admitPlatform, admitTenant } from '../access/rules.js';
import { credentialOf } from '../access/credentials.js';
import type { AppDeps } from '../trpc/service-deps.js';
import { requestDepsFactory } from '../trpc/context.js';
import type { RawRoute } from '../raw-routes/route.js';
import { labelRoute } from '../raw-routes/route-label.js';

async function callerOf(deps: AppDeps, req: Request, res: Response) {
  const credential = credentialOf(req);
  // The request log names the key by its hash, never by the key.
  res.locals.keyHash = credential.keyHash;
  return authenticate(deps.db, deps.keys, credential.keyHash, deps.now(), credential.accessToken, deps.accessTokens);
}

/** An express router serving `routes`, each behind its access rule (401 / 403 before the handler). */
export function rawRoutes(deps: AppDeps, routes: readonly RawRoute[]): Router {
  const router = Router();
  const depsOf = requestDepsFactory(deps);
  for (const route of routes) {
    router[route.method](route.path, async (req, res) => {
      labelRoute(req, res);
      // The handler's services see the request's id, client address and logger, and whether its client is gone.
      const served = depsOf(req);
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
