import {
  CreateVideoJobInputSchema,
  CreateVideoJobOutputSchema,
  ListVideoJobsInputSchema,
  GetVideoJobInputSchema,
  ListVideoJobsOutputSchema,
  VideoJobStatusRecordSchema,
  type VideoJobStatusRecord,
} from '@switchyard/schema';
import { API_PREFIX } from '@switchyard/schema';
import { authedProcedure, managementProcedure, platformProcedure, router } from '../../trpc/init.js';
import { createVideoJob, getVideoJob, listVideoJobs, type PolledVideoJob } from './videos.service.js';
import { answers, WHY } from '@switchyard/schema';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

// GET /videos/{jobId}/content proxies the provider's bytes, so it is a plain express route
// (videos.routes.ts), not a procedure.

/**
 * A polled job's status record, with its links (the job's own URL; once completed, its content
 * URLs). `apiBaseUrl`: the absolute URL of /api/v1 as the client reached it.
 */
function statusRecordOf(job: PolledVideoJob, apiBaseUrl: string): VideoJobStatusRecord {
  const self = `${apiBaseUrl}/videos/${encodeURIComponent(job.id)}`;
  return {
    id: job.id,
    polling_url: self,
    status: job.status,
    ...(job.outputs ? { unsigned_urls: job.outputs.map((index) => `${self}/content?index=${index}`) } : {}),
  };
}

export const videosRouter = router({
  get: authedProcedure
    .meta({
      scope: 'files:read',
      openapi: {
        method: 'GET',
        path: '/videos/{jobId}',
        protect: true,
        tags: ['Videos'],
        summary: 'Poll a video job',
        description:
          'The status of a video job (bare, no data wrapper); once completed, the URLs of its content. ' +
          'Regular keys see the jobs of their own workspace, management keys those of the whole organization.',
      },
      statuses: answers({
        403: WHY.scopedKey,
        404: `no video job with that id visible to the key; ${WHY.namesNothing}`,
      }),
      listed: [401, 403, 404, 500],
    })
    .input(GetVideoJobInputSchema)
    .output(VideoJobStatusRecordSchema)
    .query(async ({ ctx, input }) => statusRecordOf(await getVideoJob(ctx.deps, ctx.actor, input), `${ctx.origin()}${API_PREFIX}`)),
  // Internal (tRPC only, platform keys): the video service registers a job and its upstream URLs,
  // which this server later fetches: only the platform may name them.
  createJob: platformProcedure
    .input(CreateVideoJobInputSchema.extend(IdempotencyField))
    .output(CreateVideoJobOutputSchema)
    .mutation(idempotent('videos.createJob', async ({ ctx, input }) => ({ data: await createVideoJob(ctx.deps, ctx.platform, input) }))),
  listJobs: managementProcedure
    .meta({ scope: 'files:read' })
    .input(ListVideoJobsInputSchema)
    .output(ListVideoJobsOutputSchema)
    .query(({ ctx, input }) => listVideoJobs(ctx.deps, ctx.actor, input)),
});
