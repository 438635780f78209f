import { filesRouter } from './modules/files/files.router.js';
import { keysRouter } from './modules/keys/keys.router.js';
import { videosRouter } from './modules/videos/videos.router.js';
import { router } from './trpc/init.js';

export const appRouter = router({
  keys: keysRouter,
  files: filesRouter,
  videos: videosRouter,
});

export type AppRouter = typeof appRouter;
