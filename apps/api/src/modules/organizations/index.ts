import { SERVER_ACTOR, withoutRequest } from '../../access/callers.js';
import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { ORGANIZATION_DELETE, organizationDeletionHandler } from './offboarding.service.js';
import { organizationsRouter } from './organizations.router.js';

export const organizationsModule = defineModule({
  name: 'organizations',
  routers: { organizations: organizationsRouter },
  create(_config: Config, { db, now, jobs, media }: ModuleShared) {
    jobs.handle(ORGANIZATION_DELETE, organizationDeletionHandler(withoutRequest({ db, media, now }), SERVER_ACTOR));
    return { deps: {} };
  },
});
