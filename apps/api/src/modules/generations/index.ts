import { generationsRouter } from './generations.router.js';
import { defineModule } from '../manifest.js';

export const generationsModule = defineModule({
  name: 'generations',
  routers: { generations: generationsRouter },
});
