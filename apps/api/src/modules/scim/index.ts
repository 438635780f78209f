import { SERVER_ACTOR, withoutRequest } from '../../access/callers.js';
import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { scimRouter } from './scim.router.js';
import { SCIM_SYNC, scimSyncHandler } from './sync-jobs.service.js';

export const scimModule = defineModule({
  name: 'scim',
  routers: { scim: scimRouter },
  create(_config: Config, { db, now, jobs, keys }: ModuleShared) {
    jobs.handle(SCIM_SYNC, scimSyncHandler(withoutRequest({ db, keys, now }), SERVER_ACTOR));
    return { deps: {} };
  },
});
