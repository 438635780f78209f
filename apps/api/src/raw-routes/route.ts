// Plain express routes (byte streams in and out, a form) declare their access rule like procedures
// do: a RawRoute is the route's contract (method, path, access rule, scope, its OpenAPI entry) with
// its handler. The modules declare theirs beside their routers; http/authenticate.ts mounts them
// (rawRoutes()), authenticating, applying the rule and the API's rate limits (tenant keys) before
// the handler runs. The access-matrix test reads the same declarations.
import type { Request, Response } from 'express';
import type { Actor, PlatformActor } from '../access/callers.js';
import type { OperationScope } from '../access/rules.js';
import type { ServiceDeps } from '../trpc/service-deps.js';
import { expressPath, type RawOperation } from './contracts.js';
import type { Json } from './openapi-parts.js';

interface RawRouteBase {
  method: 'get' | 'put' | 'post';
  /** Express path, relative to where the routes are mounted. */
  path: string;
  /**
   * Its entry in the OpenAPI document (routes under /api/v1): written from these fields, or the
   * whole OpenAPI operation written out by hand, where the fields cannot say it (response headers,
   * Range and 206, a form body); the document adds the declared error answers to either.
   */
  doc?: RawRouteDoc | { operation: Json };
  /** The permission it needs (access/rules.ts); every management route declares one. */
  scope?: OperationScope;
  /** The operation it serves, as the REST face declares it (its statuses; the operation list reads it). */
  operation?: RawOperation;
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

type WithoutContract<R> = R extends RawRouteBase ? Omit<R, 'method' | 'path' | 'scope' | 'operation'> : never;

/** The route of a declared operation: its method, path and scope are the operation's. */
export function routeOf(operation: RawOperation, route: WithoutContract<RawRoute>): RawRoute {
  return {
    ...route,
    method: operation.method.toLowerCase() as RawRoute['method'],
    path: expressPath(operation),
    ...(operation.scope ? { scope: operation.scope } : {}),
    operation,
  } as RawRoute;
}
