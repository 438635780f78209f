// Raw byte downloads under /api/v1. trpc-to-openapi always answers JSON, so these are plain express
// routes, mounted before the REST adapter: same key auth, and errors go through the same mapping
// (express's error handler -> sendError) as long as no byte has been sent. Once headers are out, a
// failure can only end the connection, which the client sees as a broken download (never as a
// complete one).
import { Router, type Request, type Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { VideoContentQuerySchema } from '@switchyard/schema';
import { Invalid, Upstream } from '../errors.js';
import { openContainerFile } from '../modules/files/files.service.js';
import { openUpstream } from '../modules/videos/upstream.js';
import { findVideoOutput } from '../modules/videos/videos.service.js';
import type { AppDeps } from '../trpc/context.js';
import { actorOf } from './authenticate.js';
import { loggerOf } from './request-log.js';
import { labelRoute } from './request-metrics.js';

/** Headers of the provider's answer that a player needs to seek and cache. */
const FORWARDED = ['content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'] as const;

export function downloadRoutes(deps: AppDeps): Router {
  const routes = Router();

  routes.get('/containers/:container_id/files/:file_id/content', async (req, res) => {
    labelRoute(req, res);
    const actor = await actorOf(deps, req, res);
    const download = await openContainerFile(deps.db, deps.media, actor, req.params.container_id!, req.params.file_id!);
    res.status(200);
    res.attachment(download.filename);
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Length', download.size);
    res.setHeader('Cache-Control', 'private, no-store');
    await stream(deps, req, res, download.stream);
  });

  routes.get('/videos/:jobId/content', async (req, res) => {
    labelRoute(req, res);
    const actor = await actorOf(deps, req, res);
    const query = VideoContentQuerySchema.safeParse(req.query);
    if (!query.success) {
      throw new Invalid('index must be an integer >= 0', { parameter: 'index', reason: 'must be an integer >= 0' });
    }
    const output = await findVideoOutput(deps.db, actor, req.params.jobId!, query.data.index);
    // The client leaving (before or after the provider answers) aborts the upstream request.
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const upstream = await openUpstream(output.upstream_url, {
      range: typeof req.headers.range === 'string' ? req.headers.range : undefined,
      signal: abort.signal,
      connectTimeoutMs: deps.media.upstreamConnectTimeoutMs,
      idleTimeoutMs: deps.media.upstreamIdleTimeoutMs,
    }).catch((error: unknown) => {
      if (error instanceof Upstream) deps.metrics.upstreamVideoFailures.inc({ stage: 'before_answer' });
      throw error;
    });
    upstream.on('data', (chunk: Buffer) => deps.metrics.upstreamVideoBytes.inc(chunk.length));
    res.status(upstream.statusCode === 206 ? 206 : 200);
    res.setHeader('Content-Type', upstream.headers['content-type'] ?? output.media_type);
    for (const name of FORWARDED) {
      const value = upstream.headers[name];
      if (value !== undefined) res.setHeader(name, value);
    }
    res.setHeader('Cache-Control', 'private, no-store');
    // The provider failing mid-stream (not the client leaving, which aborts first) is a failure.
    let upstreamFailed = false;
    upstream.once('error', () => (upstreamFailed ||= !abort.signal.aborted));
    await stream(deps, req, res, upstream);
    if (upstreamFailed) deps.metrics.upstreamVideoFailures.inc({ stage: 'mid_stream' });
  });

  return routes;
}

/** Pipes a body out with backpressure; on failure after the headers, cuts the connection. */
async function stream(deps: AppDeps, req: Request, res: Response, body: NodeJS.ReadableStream | IncomingMessage): Promise<void> {
  try {
    await pipeline(body, res);
  } catch (error) {
    res.destroy();
    loggerOf(req, deps.logger).warn({ err: error, path: req.path, client_gone: req.destroyed }, 'download ended before its last byte');
  }
}
