import {
  OpenContainerInputSchema,
  OpenContainerOutputSchema,
  PromoteFileInputSchema,
  PromoteFileOutputSchema,
} from '@switchyard/schema';
import { authedProcedure, managementProcedure, router } from '../../trpc/init.js';
import { fileShapeOf } from './file-shapes.js';
import { openContainer, promoteFile } from './files.service.js';

// GET /containers/{container_id}/files/{file_id}/content streams bytes, so it is a plain express
// route (src/http/downloads.ts), not a procedure; the sandbox runner writes files through
// PUT /internal/containers/... (src/http/sandbox-writer.ts).
export const filesRouter = router({
  promote: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/containers/{container_id}/files/{file_id}/promote',
        protect: true,
        tags: ['Containers'],
        summary: 'Promote a container file to a workspace document',
        description:
          "Copies a file from the container's sandbox into the workspace's durable document storage, " +
          'counted against the workspace storage quota. Promoting an unchanged file again returns the first document.',
      },
    })
    .input(PromoteFileInputSchema)
    .output(PromoteFileOutputSchema)
    // The File record itself, no { data } wrapper: the endpoint lists none, and existing clients
    // read _shape, id and downloadable at the top level (compat.md).
    .mutation(({ ctx, input }) => promoteFile(ctx.db, ctx.media, ctx.actor, input, fileShapeOf(ctx.headers))),

  // Internal (tRPC only): the sandbox runner opens a session's container.
  openContainer: managementProcedure
    .input(OpenContainerInputSchema)
    .output(OpenContainerOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await openContainer(ctx.db, ctx.actor, input) })),
});
