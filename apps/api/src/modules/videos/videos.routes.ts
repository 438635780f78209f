// GET /api/v1/videos/{jobId}/content: a video job's output, proxied from the provider as it streams
// (a plain express route: trpc-to-openapi always answers JSON), mounted by app.ts through
// rawRoutes(). Errors go through the shared mapping (express's error handler -> sendError) as long
// as no byte has been sent (raw-routes/stream.ts). The demo's sample output is served from the
// server's own file (sample-video.ts).
import { answers, API_PREFIX, VideoContentInputSchema, VideoContentQuerySchema, WHY } from '@switchyard/schema';
import type { Response } from 'express';
import { Invalid, Upstream } from '../../lib/errors.js';
import { loggerOf } from '../../lib/request-scope.js';
import { routeOf, type RawRoute } from '../../raw-routes/route.js';
import { rawInputOf, type RawOperation } from '../../raw-routes/contracts.js';
import { BINARY, header, parameter } from '../../raw-routes/openapi-parts.js';
import { streamAnswer } from '../../raw-routes/stream.js';
import { serverAddresses } from '../../upstream/index.js';
import { sampleFileOf } from './sample-video.js';
import { openUpstream, RefusedUpstream } from './upstream.js';
import { findVideoOutput } from './videos.service.js';

/** Headers of the provider's answer that a player needs to seek and cache. */
const FORWARDED = ['content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'] as const;

export const VIDEO_CONTENT = {
  method: 'GET',
  prefix: API_PREFIX,
  path: '/videos/{jobId}/content',
  input: VideoContentInputSchema,
  body: 'none',
  scope: 'files:read',
  statuses: answers({
    400: `index not an integer >= 0 (or given twice), jobId over 200 characters, a Range past the end of the server's own sample; ${WHY.unstorable}`,
    403: WHY.scopedKey,
    404: 'no such job visible to the key, or no output at that index',
    502: 'the provider failed (an error status, a connection or idle timeout, a refused connection, a trickle below UPSTREAM_MIN_BYTES_PER_SECOND before the headers) or the upstream rules refused its address or redirect',
  }),
  listed: [400, 401, 404, 500, 502],
} as const satisfies RawOperation;

export const VIDEO_CONTENT_ROUTES: readonly RawRoute[] = [
  routeOf(VIDEO_CONTENT, {
    access: 'tenant',
    doc: {
      operation: {
        operationId: 'videos-content',
        summary: 'Download a generated video',
        description:
          "Streams an output of a video job from the provider's URL, unbuffered, with the provider's media type. A Range header is forwarded: the provider's partial answer comes back as 206.",
        tags: ['Videos'],
        security: [{ bearerAuth: [] }],
        parameters: [
          parameter('path', 'jobId', { type: 'string', minLength: 1 }, true, 'The video job id'),
          parameter('query', 'index', { type: 'integer', minimum: 0, default: 0 }, false, VideoContentQuerySchema.shape.index.description ?? ''),
          parameter(
            'header',
            'Range',
            { type: 'string', example: 'bytes=0-1048575' },
            false,
            'A byte range of the video (RFC 9110), forwarded to the provider',
          ),
        ],
        responses: {
          200: {
            description: 'The whole video',
            headers: {
              'Content-Length': header('Size in bytes, when the provider gives it', { type: 'integer', minimum: 0 }),
              'Accept-Ranges': header('bytes, when the provider accepts ranges'),
            },
            content: { 'video/*': { schema: BINARY }, 'application/octet-stream': { schema: BINARY } },
          },
          206: {
            description: 'The requested range of the video',
            headers: {
              'Content-Range': header('The range sent and the full size: bytes 0-1048575/7340032'),
              'Content-Length': header('Size of the range in bytes', { type: 'integer', minimum: 0 }),
            },
            content: { 'video/*': { schema: BINARY }, 'application/octet-stream': { schema: BINARY } },
          },
        },
      },
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
  }),
];

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
