import { CreateVideoJobInputSchema, CreateVideoJobOutputSchema } from '@switchyard/schema';
import { managementProcedure, router } from '../../trpc/init.js';
import { createVideoJob } from './videos.service.js';

// GET /videos/{jobId}/content proxies the provider's bytes, so it is a plain express route
// (src/http/downloads.ts), not a procedure.
export const videosRouter = router({
  // Internal (tRPC only): record a video job and its outputs.
  createJob: managementProcedure
    .input(CreateVideoJobInputSchema)
    .output(CreateVideoJobOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await createVideoJob(ctx.db, ctx.actor, input) })),
});
