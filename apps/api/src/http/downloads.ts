// Raw byte downloads under /api/v1. trpc-to-openapi always answers JSON, so these are plain express
// routes, mounted before the REST adapter: same key auth, and errors go through the same mapping
// (express's error handler -> sendError) as long as no byte has been sent (raw-routes/stream.ts).
import type { Request, Response } from 'express';
import { Invalid, Upstream } from '../errors.js';
import { openDocument } from '../modules/files/documents.service.js';
import { openContainerFile, type Download } from '../modules/files/files.service.js';
import { openUpstream, RefusedUpstream } from '../modules/videos/upstream.js';
import { serverAddresses } from '../upstream/index.js';
import { findVideoOutput } from '../modules/videos/videos.service.js';
import type { AppDeps } from '../deps.js';
import type { RawRoute } from '../raw-routes/route.js';
import { CONTAINER_FILE_CONTENT, DOCUMENT_CONTENT, expressPath, rawInputOf, VIDEO_CONTENT } from '../raw-routes/operations.js';
import { requestedRange } from '../raw-routes/range.js';
import { streamAnswer } from '../raw-routes/stream.js';
import { loggerOf } from '../lib/request-scope.js';
import { sampleFileOf } from './sample-video.js';

/** Headers of the provider's answer that a player needs to seek and cache. */
const FORWARDED = ['content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'] as const;

export const DOWNLOAD_ROUTES: readonly RawRoute[] = [
  {
    method: 'get',
    path: expressPath(CONTAINER_FILE_CONTENT),
    access: 'tenant',
    doc: {
      operationId: 'files-content',
      summary: "Download a container file's bytes",
      description: 'The exact bytes, streamed, with Content-Length and Content-Disposition.',
      tags: ['Containers'],
      contentType: 'application/octet-stream',
    },
    async handle(deps, req, res, actor) {
      const input = rawInputOf(CONTAINER_FILE_CONTENT, req);
      const download = await openContainerFile(deps, actor, {
        container_id: input.container_id,
        file_id: input.file_id,
        range: (size, sha256) => requestedRange(req.headers, size, `"${sha256}"`),
      });
      await sendDownload(deps, req, res, download);
    },
  },
  {
    method: 'get',
    path: expressPath(DOCUMENT_CONTENT),
    access: 'tenant',
    doc: {
      operationId: 'files-documentContent',
      summary: "Download a workspace document's bytes",
      description:
        'The exact bytes of a document promote made, streamed, with Content-Length and Content-Disposition. ' +
        "Regular keys: their own workspace's documents only.",
      tags: ['Files'],
      contentType: 'application/octet-stream',
      query: [
        { name: 'workspace_id', description: "The workspace (UUID or slug); default: the key's own", type: 'string' },
        { name: 'provider', description: "Not supported: only the platform's own storage (400)", type: 'string' },
      ],
    },
    async handle(deps, req, res, actor) {
      const input = rawInputOf(DOCUMENT_CONTENT, req);
      const download = await openDocument(deps, actor, { ...input, range: (size, sha256) => requestedRange(req.headers, size, `"${sha256}"`) });
      await sendDownload(deps, req, res, download);
    },
  },
  {
    method: 'get',
    path: expressPath(VIDEO_CONTENT),
    access: 'tenant',
    doc: {
      operationId: 'videos-content',
      summary: "Download a video job's output",
      description: 'Output `index` of the job, proxied from the provider with its Content-Type; Range is forwarded.',
      tags: ['Videos'],
      contentType: 'video/mp4',
      query: [{ name: 'index', description: 'Which output (default 0)', type: 'integer' }],
    },
    async handle(deps, req, res, actor) {
      const input = rawInputOf(VIDEO_CONTENT, req);
      const output = await findVideoOutput(deps, actor, input);
      const sample = sampleFileOf(output.upstream_url);
      if (sample) {
        await sendSample(res, sample);
        return;
      }
      // The client leaving (before or after the provider answers) aborts the upstream request.
      const abort = new AbortController();
      res.once('close', () => {
        if (!res.writableFinished) abort.abort();
      });
      const { media } = deps;
      const upstream = await openUpstream(output.upstream_url, {
        range: typeof req.headers.range === 'string' ? req.headers.range : undefined,
        signal: abort.signal,
        connectTimeoutMs: media.upstreamConnectTimeoutMs,
        idleTimeoutMs: media.upstreamIdleTimeoutMs,
        minBytesPerSecond: media.upstreamMinBytesPerSecond,
        rateWindowMs: media.upstreamRateWindowMs,
        allowedHosts: media.upstreamAllowedHosts,
        ownAddresses: serverAddresses(media.listenHost),
      }).catch((error: unknown) => {
        // The caller sees only 502; the operator sees why (and that UPSTREAM_ALLOWED_HOSTS exists).
        if (error instanceof RefusedUpstream) {
          loggerOf(req, deps.logger).warn({ video_job_id: output.video_job_id, reason: error.message }, 'upstream refused');
        }
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
      await streamAnswer(deps, req, res, upstream);
      if (upstreamFailed) deps.metrics.upstreamVideoFailures.inc({ stage: 'mid_stream' });
    },
  },
];

/** A stored file's bytes as a download: application/octet-stream, its name, all of it or the range asked for. */
async function sendDownload(deps: AppDeps, req: Request, res: Response, download: Download): Promise<void> {
  const { range } = download;
  res.status(range ? 206 : 200);
  res.attachment(download.filename);
  res.setHeader('Content-Type', 'application/octet-stream');
  res.setHeader('Content-Length', range ? range.end - range.start + 1 : download.size);
  if (range) res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${download.size}`);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('ETag', `"${download.sha256}"`);
  res.setHeader('Cache-Control', 'private, no-store');
  await streamAnswer(deps, req, res, download.stream);
}

/**
 * Serves the server's own sample file as a provider would (Range answered, Content-Type from the
 * extension). A Range past its end is a bad parameter, as when a provider answers 416.
 */
function sendSample(res: Response, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    res.sendFile(file, { headers: { 'Cache-Control': 'private, no-store' } }, (error?: Error & { status?: number }) => {
      if (!error) resolve();
      else if (res.headersSent) resolve();
      else if (error.status === 416) {
        res.removeHeader('Content-Range');
        reject(new Invalid('range not satisfiable', { parameter: 'Range', reason: 'range not satisfiable' }));
      } else reject(error);
    });
  });
}
