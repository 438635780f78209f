import type { Config } from '../../config.js';
import { FairShareLimit } from '../../lib/fair-share-limit.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { accountRouter } from './account.router.js';

declare module '../../trpc/service-deps.js' {
  /** What the account module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** How many GET /activity statements run at once (ANALYTICS_CONCURRENCY, slots of their own); unset: no limit. */
    activityLimit?: FairShareLimit;
  }
}

export const accountModule = defineModule({
  name: 'account',
  routers: { account: accountRouter },
  create(config: Config, { metrics }: ModuleShared) {
    // GET /activity's statements take slots of their own, beside the analytics queries' (config.ts says how many).
    const activityLimit = new FairShareLimit(config.activityConcurrency, 'GET /activity statement');
    metrics.slots('activity', () => activityLimit.state);
    return { deps: { activityLimit } };
  },
});
