// The route template a request's metrics are labelled with (http/request-metrics.ts): the matched
// express route's path under its mount, never the raw path (whose ids would make a series per
// resource). Every route of a mounted router (rawRoutes(), the /scim/v2 router) names itself first.
import type { Request, Response } from 'express';

/** The matched express route as a template: /api/v1/videos/{jobId}/content. */
export function templateOf(req: Request): string {
  return `${req.baseUrl}${String((req.route as { path: string }).path)}`.replace(/:(\w+)/g, '{$1}');
}

/**
 * Called first by a route of a mounted router: names the route while its mount path is known
 * (express forgets it when the handler fails and the error leaves the router).
 */
export function labelRoute(req: Request, res: Response): void {
  res.locals.route = templateOf(req);
}
