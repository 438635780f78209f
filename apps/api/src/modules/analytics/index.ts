import { analyticsRouter } from './analytics.router.js';
import { defineModule } from '../manifest.js';

export const analyticsModule = defineModule({
  name: 'analytics',
  routers: { analytics: analyticsRouter },
});
