import { destinationsRouter } from './destinations.router.js';
import { defineModule } from '../manifest.js';

export const destinationsModule = defineModule({
  name: 'destinations',
  routers: { destinations: destinationsRouter },
});
