import type { Request, Response } from 'express';
import { authenticate, type Actor } from '../modules/keys/auth.service.js';
import { keyHashOf, type AppDeps } from '../trpc/context.js';

/** The caller of a plain express route, authenticated exactly as procedures are (401 otherwise). */
export async function actorOf(deps: AppDeps, req: Request, res: Response, options: { management?: boolean } = {}): Promise<Actor> {
  const keyHash = keyHashOf(req);
  res.locals.keyHash = keyHash;
  return authenticate(deps.db, deps.keys, keyHash, deps.now(), options);
}
