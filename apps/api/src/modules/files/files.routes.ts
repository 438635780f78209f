// The files module's byte streams (plain express routes: trpc-to-openapi always answers JSON), mounted
// by app.ts through rawRoutes(): same key auth, and errors go through the same mapping (express's
// error handler -> sendError) as long as no byte has been sent (raw-routes/stream.ts).
// - GET /api/v1/containers/{container_id}/files/{file_id}/content and GET /api/v1/files/{file_id}/content:
//   a container file's and a document's bytes, all of them or one range.
// - The sandbox runner's way in (internal, platform key, not part of /api/v1):
//   PUT /internal/containers/{container_id}/files/{file_id}?organization_id=   body: the file's raw bytes
//   streams the body into storage (never buffered whole) and answers { data: <ContainerFile> }.
//   Container ids are unique within an organization, so the platform names the organization.
//   Containers are opened with the tRPC procedure files.openContainer.
import {
  answers,
  API_PREFIX,
  ContainerFileIdSchema,
  ContainerFilePathInputSchema,
  ContainerIdSchema,
  DocumentInputSchema,
  INTERNAL_PREFIX,
  OrganizationQuerySchema,
  WHY,
} from '@switchyard/schema';
import type { Request, Response } from 'express';
import { PassThrough } from 'node:stream';
import { Invalid } from '../../lib/errors.js';
import type { AppDeps } from '../../trpc/service-deps.js';
import { routeOf, type RawRoute, type RawRouteDoc } from '../../raw-routes/route.js';
import { rawInputOf, type RawOperation } from '../../raw-routes/contracts.js';
import { BINARY, header, jsonSchema, parameter } from '../../raw-routes/openapi-parts.js';
import { requestedRange } from '../../raw-routes/range.js';
import { streamAnswer } from '../../raw-routes/stream.js';
import { openDocument } from './documents.service.js';
import { openContainerFile, writeContainerFile, type Download } from './files.service.js';

/** The query of the routes of a workspace's documents (the download, the upload): which workspace, and the storage provider. */
export const WORKSPACE_QUERY: NonNullable<RawRouteDoc['query']> = [
  { name: 'workspace_id', description: "The workspace (UUID or slug); default: the key's own", type: 'string' },
  { name: 'provider', description: "Not supported: only the platform's own storage (400)", type: 'string' },
];

export const CONTAINER_FILE_CONTENT = {
  method: 'GET',
  prefix: API_PREFIX,
  path: '/containers/{container_id}/files/{file_id}/content',
  input: ContainerFilePathInputSchema,
  body: 'none',
  scope: 'files:read',
  statuses: answers({
    400: `container_id or file_id refused: file_id not "cfile_" + base64url of a clean relative path (no "..", ".", empty or absolute segments, backslashes, NUL), lengths; ${WHY.unstorable}`,
    403: WHY.scopedKey,
    404: 'no such container or file visible to the key (another workspace for a regular key, another organization)',
    503: 'the stored bytes cannot be read',
  }),
  listed: [400, 401, 403, 404, 429, 500, 503],
} as const satisfies RawOperation;

export const DOCUMENT_CONTENT = {
  method: 'GET',
  prefix: API_PREFIX,
  path: '/files/{file_id}/content',
  input: DocumentInputSchema,
  body: 'none',
  scope: 'files:read',
  statuses: answers({
    400: `file_id not a document id, workspace_id refused, provider given (only the platform's own storage), an uploaded file (not downloadable), a Range past the end; ${WHY.unstorable}`,
    403: WHY.scopedKey,
    404: 'no such document visible to the key (another workspace for a regular key, another organization)',
    503: 'the stored bytes cannot be read',
  }),
  listed: [400, 401, 403, 404, 429, 500, 502, 503],
} as const satisfies RawOperation;

export const CONTAINER_FILE_WRITE = {
  method: 'PUT',
  prefix: INTERNAL_PREFIX,
  path: '/containers/{container_id}/files/{file_id}',
  // The platform names the organization the container belongs to (?organization_id=).
  input: ContainerFilePathInputSchema.extend(OrganizationQuerySchema.shape),
  body: 'bytes',
  statuses: answers(
    {
      400: `container_id or file_id refused (as for the download), organization_id missing or not an organization id, or an upload the client aborted; ${WHY.unstorable}`,
      404: 'no such organization, or no such container in it',
      413: 'the file exceeds CONTAINER_FILE_MAX_BYTES (nothing stored)',
      503: 'storage cannot be written (nothing stored)',
    },
    'platform',
  ),
  // Not an operation of the spec: these are the statuses the sandbox runner is told to expect.
  listed: [400, 401, 403, 404, 413, 500, 503],
} as const satisfies RawOperation;

export const FILE_DOWNLOAD_ROUTES: readonly RawRoute[] = [
  routeOf(CONTAINER_FILE_CONTENT, {
    access: 'tenant',
    doc: {
      operation: {
        operationId: 'files-content',
        summary: 'Download a container file',
        description: "Streams the exact bytes of a file in a container of the caller's workspace (a management key: any workspace of its organization).",
        tags: ['Containers'],
        security: [{ bearerAuth: [] }],
        parameters: [
          parameter('path', 'container_id', jsonSchema(ContainerIdSchema), true),
          parameter('path', 'file_id', jsonSchema(ContainerFileIdSchema), true),
        ],
        responses: {
          200: {
            description: "The file's bytes",
            headers: {
              'Content-Disposition': header('attachment, with the file name (RFC 6266): attachment; filename=report.md'),
              'Content-Length': header('Size of the file in bytes', { type: 'integer', minimum: 0 }),
            },
            content: { 'application/octet-stream': { schema: BINARY } },
          },
        },
      },
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
  }),
  routeOf(DOCUMENT_CONTENT, {
    access: 'tenant',
    doc: {
      operationId: 'files-documentContent',
      summary: "Download a workspace document's bytes",
      description:
        'The exact bytes of a document promote made, streamed, with Content-Length and Content-Disposition. ' +
        "Regular keys: their own workspace's documents only.",
      tags: ['Files'],
      contentType: 'application/octet-stream',
      query: WORKSPACE_QUERY,
    },
    async handle(deps, req, res, actor) {
      const input = rawInputOf(DOCUMENT_CONTENT, req);
      const download = await openDocument(deps, actor, { ...input, range: (size, sha256) => requestedRange(req.headers, size, `"${sha256}"`) });
      await sendDownload(deps, req, res, download);
    },
  }),
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

const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+$/;

export const SANDBOX_WRITER_ROUTES: readonly RawRoute[] = [
  routeOf(CONTAINER_FILE_WRITE, {
    access: 'platform',
    async handle(deps, req, res, platform) {
      // organization_id (query) names the organization the container belongs to.
      const input = rawInputOf(CONTAINER_FILE_WRITE, req);
      const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
      // The storage consumes (and on failure destroys) what it is given: give it a pipe, so that a
      // refused upload (413, 503) still leaves the socket able to carry the error answer.
      const body = new PassThrough();
      req.pipe(body);
      // pipe() does not pass an aborted upload on: fail the write, so the temp file goes too. (A
      // client error, not an internal one: nobody is left to answer.)
      req.once('close', () => {
        if (!req.complete) body.destroy(new Invalid('upload aborted by the client'));
      });
      try {
        const file = await writeContainerFile(deps, platform, {
          organization_id: input.organization_id,
          container_id: input.container_id,
          file_id: input.file_id,
          mime_type: MEDIA_TYPE.test(type) && type.length <= 200 ? type : 'application/octet-stream',
          body,
        });
        res.status(201).json({ data: file });
      } catch (error) {
        req.unpipe(body);
        body.destroy();
        // The rest of a refused body is not read: close the connection after the answer.
        res.setHeader('Connection', 'close');
        throw error;
      }
    },
  }),
];
