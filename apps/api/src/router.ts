import { moduleRouters } from './modules.js';
import { router } from './trpc/init.js';

/** The whole tRPC router: every module's routers (modules.ts). */
export const appRouter = router(moduleRouters());

export type AppRouter = typeof appRouter;
