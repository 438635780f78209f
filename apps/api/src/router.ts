import { generationsRouter } from './modules/generations/generations.router.js';
import { keysRouter } from './modules/keys/keys.router.js';
import { modelsRouter } from './modules/models/models.router.js';
import { router } from './trpc/init.js';

export const appRouter = router({
  keys: keysRouter,
  models: modelsRouter,
  generations: generationsRouter,
});

export type AppRouter = typeof appRouter;
