import { auditRouter } from './audit.router.js';
import { defineModule } from '../manifest.js';

export const auditModule = defineModule({
  name: 'audit',
  routers: { audit: auditRouter },
});
