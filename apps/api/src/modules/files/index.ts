import { API_PREFIX, INTERNAL_PREFIX } from '@switchyard/schema';
import { FILE_DOWNLOAD_ROUTES, SANDBOX_WRITER_ROUTES } from './files.routes.js';
import { UPLOAD_ROUTES } from './upload.routes.js';
import { filesRouter } from './files.router.js';
import { defineModule } from '../manifest.js';

export const filesModule = defineModule({
  name: 'files',
  routers: { files: filesRouter },
  byteRoutes: [
    { prefix: API_PREFIX, routes: [...FILE_DOWNLOAD_ROUTES, ...UPLOAD_ROUTES] },
    { prefix: INTERNAL_PREFIX, routes: SANDBOX_WRITER_ROUTES },
  ],
});
