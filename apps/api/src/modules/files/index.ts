import { API_PREFIX, INTERNAL_PREFIX } from '@switchyard/schema';
import { FILE_DOWNLOAD_ROUTES, SANDBOX_WRITER_ROUTES } from './files.routes.js';
import { UPLOAD_ROUTES } from './upload.routes.js';
import { filesRouter } from './files.router.js';
import type { Config } from '../../config.js';
import { StorageSweeper } from '../../storage/sweep.js';
import { defineModule, type ModuleShared } from '../manifest.js';

export const filesModule = defineModule({
  name: 'files',
  routers: { files: filesRouter },
  byteRoutes: [
    { prefix: API_PREFIX, routes: [...FILE_DOWNLOAD_ROUTES, ...UPLOAD_ROUTES] },
    { prefix: INTERNAL_PREFIX, routes: SANDBOX_WRITER_ROUTES },
  ],
  create(config: Config, { db, now, logger, media }: ModuleShared) {
    // Bytes no row points at (an upload cut short, a crash before the row's commit) go, every STORAGE_SWEEP_INTERVAL_MS (storage/sweep.ts).
    const storageSweeper = new StorageSweeper({ db, storage: media.storage, now }, config.storageSweepIntervalMs, logger);
    return {
      deps: { storageSweeper },
      start: () => storageSweeper.start(),
      pause: () => storageSweeper.stop(),
      stop: () => storageSweeper.stop(),
    };
  },
});
