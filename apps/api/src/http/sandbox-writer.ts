// The sandbox runner's way in (internal, platform key, not part of /api/v1):
//   PUT /internal/containers/{container_id}/files/{file_id}?organization_id=   body: the file's raw bytes
// streams the body into storage (never buffered whole) and answers { data: <ContainerFile> }.
// Container ids are unique within an organization, so the platform names the organization.
// Containers are opened with the tRPC procedure files.openContainer.
import { PassThrough } from 'node:stream';
import { Invalid } from '../errors.js';
import { writeContainerFile } from '../modules/files/files.service.js';
import type { RawRoute } from '../raw-routes/route.js';
import { CONTAINER_FILE_WRITE, expressPath, rawInputOf } from '../raw-routes/operations.js';

const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+$/;

export const SANDBOX_WRITER_ROUTES: readonly RawRoute[] = [
  {
    method: 'put',
    path: expressPath(CONTAINER_FILE_WRITE),
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
  },
];
