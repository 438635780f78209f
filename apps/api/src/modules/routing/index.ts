import { routingRouter } from './routing.router.js';
import { defineModule } from '../manifest.js';

export const routingModule = defineModule({
  name: 'routing',
  routers: { routing: routingRouter },
});
