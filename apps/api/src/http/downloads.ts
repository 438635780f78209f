// Raw byte downloads under /api/v1. trpc-to-openapi always answers JSON, so these are plain express
// routes, mounted before the REST adapter: same key auth, and errors go through the same mapping
// (express's error handler -> sendError) as long as no byte has been sent. Once headers are out, a
// failure can only end the connection, which the client sees as a broken download (never as a
// complete one).
import { Router, type Request, type Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { openContainerFile } from '../modules/files/files.service.js';
import { openUpstream } from '../modules/videos/upstream.js';
import { findVideoOutput } from '../modules/videos/videos.service.js';
import type { AppDeps } from '../trpc/context.js';
import { actorOf } from './authenticate.js';
import { CONTAINER_FILE_CONTENT, expressPath, rawInputOf, VIDEO_CONTENT } from './raw-operations.js';

/** Headers of the provider's answer that a player needs to seek and cache. */
const FORWARDED = ['content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'] as const;

export function downloadRoutes(deps: AppDeps): Router {
  const routes = Router();

  routes.get(expressPath(CONTAINER_FILE_CONTENT), async (req, res) => {
    const actor = await actorOf(deps, req, res);
    const input = rawInputOf(CONTAINER_FILE_CONTENT, req);
    const download = await openContainerFile(deps.db, deps.media, actor, input.container_id, input.file_id);
    res.status(200);
    res.attachment(download.filename);
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Length', download.size);
    res.setHeader('Cache-Control', 'private, no-store');
    await stream(deps, req, res, download.stream);
  });

  routes.get(expressPath(VIDEO_CONTENT), async (req, res) => {
    const actor = await actorOf(deps, req, res);
    const input = rawInputOf(VIDEO_CONTENT, req);
    const output = await findVideoOutput(deps.db, actor, input.jobId, input.index);
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
    });
    res.status(upstream.statusCode === 206 ? 206 : 200);
    res.setHeader('Content-Type', upstream.headers['content-type'] ?? output.media_type);
    for (const name of FORWARDED) {
      const value = upstream.headers[name];
      if (value !== undefined) res.setHeader(name, value);
    }
    res.setHeader('Cache-Control', 'private, no-store');
    await stream(deps, req, res, upstream);
  });

  return routes;
}

/** Pipes a body out with backpressure; on failure after the headers, cuts the connection. */
async function stream(deps: AppDeps, req: Request, res: Response, body: NodeJS.ReadableStream | IncomingMessage): Promise<void> {
  try {
    await pipeline(body, res);
  } catch (error) {
    res.destroy();
    deps.logger.warn({ err: error, path: req.path, client_gone: req.destroyed }, 'download ended before its last byte');
  }
}
