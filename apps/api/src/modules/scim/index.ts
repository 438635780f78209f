import { scimRouter } from './scim.router.js';
import { defineModule } from '../manifest.js';

export const scimModule = defineModule({
  name: 'scim',
  routers: { scim: scimRouter },
});
