import {
  ContainerFileListSchema,
  ContainerFileRecordSchema,
  DocumentDeletionSchema,
  DocumentInputSchema,
  DocumentPageSchema,
  FileSchema,
  ListDocumentsInputSchema,
  GetContainerFileInputSchema,
  ListContainerFilesInputSchema,
  OpenContainerInputSchema,
  OpenContainerOutputSchema,
  PromoteFileInputSchema,
  PromoteFileOutputSchema,
} from '@switchyard/schema';
import { authedProcedure, platformProcedure, router } from '../../trpc/init.js';
import { deleteDocument, getDocument, listDocuments } from './documents.service.js';
import { fileShapeOf } from './file-shapes.js';
import { getContainerFile, listContainerFiles, openContainer, promoteFile } from './files.service.js';
import { answers, WHY } from '@switchyard/schema';

// GET /containers/{container_id}/files/{file_id}/content and GET /files/{file_id}/content stream
// bytes, so they are plain express routes (files.routes.ts), not procedures; the sandbox runner
// writes files through PUT /internal/containers/... (files.routes.ts).
export const filesRouter = router({
  containerFiles: authedProcedure
    .meta({
      scope: 'files:read',
      openapi: {
        method: 'GET',
        path: '/containers/{container_id}/files',
        protect: true,
        tags: ['Containers'],
        summary: "List a container's files",
        description: 'Files of the container in lexicographic order of path (bare list). While has_more is true, fetch the next page with after=<last_id>.',
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable}; after not a container file id; ${WHY.longId}; a container_id naming no container visible to the key (404 is not listed)`,
        403: WHY.scopedKey,
      }),
      listed: [400, 401, 403, 429, 500, 503],
    })
    .input(ListContainerFilesInputSchema)
    .output(ContainerFileListSchema)
    .query(({ ctx, input }) => listContainerFiles(ctx.deps, ctx.actor, input)),

  containerFile: authedProcedure
    .meta({
      scope: 'files:read',
      openapi: {
        method: 'GET',
        path: '/containers/{container_id}/files/{file_id}',
        protect: true,
        tags: ['Containers'],
        summary: 'Get a container file',
        description: 'One file of the container (bare). Its bytes: GET /containers/{container_id}/files/{file_id}/content.',
      },
      statuses: answers({
        400: `container_id or file_id refused; ${WHY.unstorable}`,
        403: WHY.scopedKey,
        404: 'no such container or file visible to the key',
      }),
      listed: [400, 401, 403, 404, 429, 500, 503],
    })
    .input(GetContainerFileInputSchema)
    .output(ContainerFileRecordSchema)
    .query(({ ctx, input }) => getContainerFile(ctx.deps, ctx.actor, input)),

  promote: authedProcedure
    .meta({
      scope: 'files:write',
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
        403: WHY.scopedKey,
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
    .mutation(({ ctx, input }) => promoteFile(ctx.deps, ctx.actor, { ...input, shape: fileShapeOf(ctx.headers) })),

  documents: authedProcedure
    .meta({
      scope: 'files:read',
      openapi: {
        method: 'GET',
        path: '/files',
        protect: true,
        tags: ['Files'],
        summary: 'List workspace documents',
        description:
          "The workspace's documents (those promote made), oldest first, as a bare page in the request's File shape. " +
          'Next page: `cursor` (native), or `after` / `after_id` = the last file id. Platform storage only: `provider`, ' +
          '`before_id` and `order=desc` answer 400.',
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable}; provider, before_id or order=desc (platform storage lists forward only); a cursor or after id that names no file of the workspace; ${WHY.unknownWorkspace}`,
        403: `a regular key asking for another workspace; ${WHY.scopedKey}`,
      }),
      listed: [400, 401, 403, 429, 500, 502, 503],
    })
    .input(ListDocumentsInputSchema)
    .output(DocumentPageSchema)
    .query(({ ctx, input }) => listDocuments(ctx.deps, ctx.actor, { ...input, shape: fileShapeOf(ctx.headers) })),

  document: authedProcedure
    .meta({
      scope: 'files:read',
      openapi: {
        method: 'GET',
        path: '/files/{file_id}',
        protect: true,
        tags: ['Files'],
        summary: 'Get a workspace document',
        description: "The File record itself (bare), in the request's shape. Its bytes: GET /files/{file_id}/content.",
      },
      statuses: answers({
        403: `a regular key asking for another workspace; ${WHY.scopedKey}`,
        404: `no such document in the workspace; ${WHY.namesNothing}`,
      }),
      listed: [401, 403, 404, 429, 500, 502, 503],
    })
    .input(DocumentInputSchema)
    .output(FileSchema)
    .query(({ ctx, input }) => getDocument(ctx.deps, ctx.actor, { ...input, shape: fileShapeOf(ctx.headers) })),

  deleteDocument: authedProcedure
    .meta({
      scope: 'files:write',
      openapi: {
        method: 'DELETE',
        path: '/files/{file_id}',
        protect: true,
        tags: ['Files'],
        summary: 'Delete a workspace document',
        description: "Irreversible. Frees the file's share of the workspace storage quota at once, and its stored bytes.",
      },
      statuses: answers({
        403: `a regular key asking for another workspace; ${WHY.scopedKey}`,
        404: `no such document in the workspace; ${WHY.namesNothing}`,
      }),
      listed: [401, 403, 404, 429, 500, 502, 503],
    })
    .input(DocumentInputSchema)
    .output(DocumentDeletionSchema)
    .mutation(({ ctx, input }) => deleteDocument(ctx.deps, ctx.actor, { ...input, shape: fileShapeOf(ctx.headers) })),

  // Internal (tRPC only, platform keys): the sandbox runner opens a session's container.
  openContainer: platformProcedure
    .input(OpenContainerInputSchema)
    .output(OpenContainerOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await openContainer(ctx.deps, ctx.platform, input) })),
});
