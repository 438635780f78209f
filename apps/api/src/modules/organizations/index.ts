import { organizationsRouter } from './organizations.router.js';
import { defineModule } from '../manifest.js';

export const organizationsModule = defineModule({
  name: 'organizations',
  routers: { organizations: organizationsRouter },
});
