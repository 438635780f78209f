import { settingsRouter } from './settings.router.js';
import { defineModule } from '../manifest.js';

export const settingsModule = defineModule({
  name: 'settings',
  routers: { settings: settingsRouter },
});
