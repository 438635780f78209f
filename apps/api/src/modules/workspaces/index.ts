import { SERVER_ACTOR, withoutRequest } from '../../access/callers.js';
import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { workspaceDeletionHandler } from './workspace-deletion.service.js';
import { WORKSPACE_DELETE } from './workspace-deletion-job.js';
import { workspacesRouter } from './workspaces.router.js';

export const workspacesModule = defineModule({
  name: 'workspaces',
  routers: { workspaces: workspacesRouter },
  create(_config: Config, { db, jobs, media }: ModuleShared) {
    jobs.handle(WORKSPACE_DELETE, workspaceDeletionHandler(withoutRequest({ db, media }), SERVER_ACTOR));
    return { deps: {} };
  },
});
