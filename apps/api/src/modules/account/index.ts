import type { Config } from '../../config.js';
import { FairShareLimit } from '../../lib/fair-share-limit.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { accountRouter } from './account.router.js';

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
