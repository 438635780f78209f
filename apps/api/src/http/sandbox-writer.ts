// The sandbox runner's way in (internal, management key, not part of /api/v1):
//   PUT /internal/containers/{container_id}/files/{file_id}   body: the file's raw bytes
// streams the body into storage (never buffered whole) and answers { data: <ContainerFile> }.
// Containers are opened with the tRPC procedure files.openContainer.
import { Router } from 'express';
import { PassThrough } from 'node:stream';
import { Invalid } from '../errors.js';
import { writeContainerFile } from '../modules/files/files.service.js';
import type { AppDeps } from '../trpc/context.js';
import { actorOf } from './authenticate.js';
import { CONTAINER_FILE_WRITE, expressPath, rawInputOf } from './raw-operations.js';

const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+$/;

export function sandboxWriterRoutes(deps: AppDeps): Router {
  const routes = Router();
  routes.put(expressPath(CONTAINER_FILE_WRITE), async (req, res) => {
    const actor = await actorOf(deps, req, res, { management: true });
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
      const file = await writeContainerFile(deps.db, deps.media, actor, {
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
  });
  return routes;
}
