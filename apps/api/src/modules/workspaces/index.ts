import { workspacesRouter } from './workspaces.router.js';
import { defineModule } from '../manifest.js';

export const workspacesModule = defineModule({
  name: 'workspaces',
  routers: { workspaces: workspacesRouter },
});
