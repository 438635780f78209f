import { modelsRouter } from './models.router.js';
import { defineModule } from '../manifest.js';

export const modelsModule = defineModule({
  name: 'models',
  routers: { models: modelsRouter },
});
