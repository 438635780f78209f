import { API_PREFIX } from '@switchyard/schema';
import { EXPORT_ROUTES } from './export.routes.js';
import { defineModule } from '../manifest.js';

export const exportModule = defineModule({
  name: 'export',
  routers: {},
  byteRoutes: [{ prefix: API_PREFIX, routes: EXPORT_ROUTES }],
});
