import {
  OpenContainerInputSchema,
  OpenContainerOutputSchema,
  PromoteFileInputSchema,
  PromoteFileOutputSchema,
} from '@switchyard/schema';
import { authedProcedure, platformProcedure, router } from '../../trpc/init.js';
import { fileShapeOf } from './file-shapes.js';
import { openContainer, promoteFile } from './files.service.js';
import { answers, WHY } from '../../http/statuses.js';

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
      statuses: answers({
        400: `container_id or file_id refused: file_id not "cfile_" + base64url of a clean relative path (no "..", ".", empty or absolute segments, backslashes, NUL), lengths; ${WHY.unstorable}; a body that is not a JSON object`,
        404: 'no such container or file visible to the key (another workspace for a regular key, another organization)',
        413: 'the file exceeds MAX_FILE_BYTES, the workspace storage quota would be exceeded, or a body over 1 MB',
        503: 'storage cannot be read or written, or the copy failed its checksum (nothing stored, nothing charged)',
      }),
      listed: [400, 401, 403, 404, 413, 429, 500, 503],
    })
    .input(PromoteFileInputSchema)
    .output(PromoteFileOutputSchema)
    // The File record itself, no { data } wrapper: the endpoint lists none, and existing clients
    // read _shape, id and downloadable at the top level (compat.md).
    .mutation(({ ctx, input }) => promoteFile(ctx.db, ctx.media, ctx.actor, input, fileShapeOf(ctx.headers))),

  // Internal (tRPC only, platform keys): the sandbox runner opens a session's container.
  openContainer: platformProcedure
    .input(OpenContainerInputSchema)
    .output(OpenContainerOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await openContainer(ctx.db, input) })),
});
