import { byokRouter } from './byok.router.js';
import { defineModule } from '../manifest.js';

export const byokModule = defineModule({
  name: 'byok',
  routers: { byok: byokRouter },
});
