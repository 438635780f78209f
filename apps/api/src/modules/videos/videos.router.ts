import {
  CreateVideoJobInputSchema,
  CreateVideoJobOutputSchema,
  ListVideoJobsInputSchema,
  ListVideoJobsOutputSchema,
} from '@switchyard/schema';
import { managementProcedure, platformProcedure, router } from '../../trpc/init.js';
import { createVideoJob, listVideoJobs } from './videos.service.js';

// GET /videos/{jobId}/content proxies the provider's bytes, so it is a plain express route
// (src/http/downloads.ts), not a procedure.
export const videosRouter = router({
  // Internal (tRPC only, platform keys): the video service registers a job and its upstream URLs,
  // which this server later fetches: only the platform may name them.
  createJob: platformProcedure
    .input(CreateVideoJobInputSchema)
    .output(CreateVideoJobOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await createVideoJob(ctx.db, input) })),
  listJobs: managementProcedure
    .input(ListVideoJobsInputSchema)
    .output(ListVideoJobsOutputSchema)
    .query(({ ctx, input }) => listVideoJobs(ctx.db, ctx.actor, input)),
});
