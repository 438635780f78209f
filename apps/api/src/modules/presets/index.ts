import { presetsRouter } from './presets.router.js';
import { defineModule } from '../manifest.js';

export const presetsModule = defineModule({
  name: 'presets',
  routers: { presets: presetsRouter },
});
