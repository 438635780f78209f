import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { CatalogCache } from './catalog-cache.js';
import { modelsRouter } from './models.router.js';

export const modelsModule = defineModule({
  name: 'models',
  routers: { models: modelsRouter },
  create(config: Config, { metrics }: ModuleShared) {
    return { deps: { catalog: new CatalogCache(config.cacheTtlMs, metrics.cache('catalog')) } };
  },
});
