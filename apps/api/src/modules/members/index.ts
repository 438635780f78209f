import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { MemberOrderCache } from './member-order.js';
import { organizationRouter } from './members.router.js';

export const organizationModule = defineModule({
  name: 'organization',
  routers: { organization: organizationRouter },
  create(config: Config, { metrics }: ModuleShared) {
    return { deps: { memberOrder: new MemberOrderCache(config.cacheTtlMs, undefined, metrics.cache('member_order')) } };
  },
});
