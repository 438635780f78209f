// The sandbox runner's way in (internal, platform key, not part of /api/v1):
//   PUT /internal/containers/{container_id}/files/{file_id}?organization_id=   body: the file's raw bytes
// streams the body into storage (never buffered whole) and answers { data: <ContainerFile> }.
// Container ids are unique within an organization, so the platform names the organization.
// Containers are opened with the tRPC procedure files.openContainer.
import { PassThrough } from 'node:stream';
import { OrganizationQuerySchema } from '@switchyard/schema';
import { Invalid } from '../errors.js';
import { writeContainerFile } from '../modules/files/files.service.js';
import type { RawRoute } from './authenticate.js';

const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+$/;

export const SANDBOX_WRITER_ROUTES: readonly RawRoute[] = [
  {
    method: 'put',
    path: '/containers/:container_id/files/:file_id',
    access: 'platform',
    async handle(deps, req, res) {
      const query = OrganizationQuerySchema.safeParse(req.query);
      if (!query.success) {
        throw new Invalid('organization_id names the organization the container belongs to', {
          parameter: 'organization_id',
          reason: 'required: the id of the organization the container belongs to',
        });
      }
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
        const file = await writeContainerFile(deps.db, deps.media, query.data.organization_id, {
          container_id: String(req.params.container_id),
          file_id: String(req.params.file_id),
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
