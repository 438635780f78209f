import { keysRouter } from './modules/keys/keys.router.js';
import { router } from './trpc/init.js';

export const appRouter = router({
  keys: keysRouter,
});

export type AppRouter = typeof appRouter;
