import { organizationRouter } from './members.router.js';
import { defineModule } from '../manifest.js';

export const organizationModule = defineModule({
  name: 'organization',
  routers: { organization: organizationRouter },
});
