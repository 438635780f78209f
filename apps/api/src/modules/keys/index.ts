import { keysRouter } from './keys.router.js';
import { defineModule } from '../manifest.js';

export const keysModule = defineModule({
  name: 'keys',
  routers: { keys: keysRouter },
});
