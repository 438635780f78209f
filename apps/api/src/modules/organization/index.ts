import { organizationRouter } from './organization.router.js';
import { defineModule } from '../manifest.js';

export const organizationModule = defineModule({
  name: 'organization',
  routers: { organization: organizationRouter },
});
