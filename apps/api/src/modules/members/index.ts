import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { MemberOrderCache } from './member-order.js';
import { organizationRouter } from './members.router.js';

declare module '../../trpc/service-deps.js' {
  /** What the members module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** Organizations' member order for GET /organization/members, kept up to CACHE_TTL_MS. */
    memberOrder: MemberOrderCache;
  }
}

export const organizationModule = defineModule({
  name: 'organization',
  routers: { organization: organizationRouter },
  create(config: Config, { metrics }: ModuleShared) {
    return { deps: { memberOrder: new MemberOrderCache(config.cacheTtlMs, undefined, metrics.cache('member_order')) } };
  },
});
