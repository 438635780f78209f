// Per-request metrics: the latency histogram by method, route template and status. The template
// (never the raw path, whose ids would make a series per resource) is the REST operation's path,
// the express route's (raw-routes/route-label.ts), /trpc/<procedure> for a single tRPC call
// (/trpc/{batch} for several), or "unmatched" for a path no route knows.
import type { Request, RequestHandler, Response } from 'express';
import type { Metrics } from '../lib/metrics.js';
import { templateOf } from '../raw-routes/route-label.js';

export function requestMetrics(metrics: Metrics, procedures: ReadonlySet<string>): RequestHandler {
  const trpcRoute = (url: string): string => {
    const names = url
      .split('?', 1)[0]!
      .replace(/^\/trpc\//, '')
      .split(',');
    if (names.length > 1) return names.every((n) => procedures.has(n)) ? '/trpc/{batch}' : 'unmatched';
    return procedures.has(names[0]!) ? `/trpc/${names[0]}` : 'unmatched';
  };
  const routeOf = (req: Request, res: Response): string => {
    if (typeof res.locals.route === 'string') return res.locals.route;
    if (req.route) return templateOf(req);
    if (req.originalUrl.startsWith('/trpc/')) return trpcRoute(req.originalUrl);
    return 'unmatched';
  };
  // One labelled series per method, route and status, looked up by a string key (prom-client
  // would hash the label object on every observation).
  const series = new Map<string, { observe(seconds: number): void }>();
  const seriesOf = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let found = series.get(key);
    if (!found) series.set(key, (found = metrics.httpRequestDuration.labels({ method, route, status: String(status) })));
    return found;
  };
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.once('close', () => {
      seriesOf(req.method, routeOf(req, res), res.statusCode).observe(Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}
