import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { CatalogCache } from './catalog-cache.js';
import { modelsRouter } from './models.router.js';

declare module '../../trpc/service-deps.js' {
  /** What the models module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** The model catalog in memory, reloaded after CACHE_TTL_MS. */
    catalog: CatalogCache;
  }
}

export const modelsModule = defineModule({
  name: 'models',
  routers: { models: modelsRouter },
  create(config: Config, { metrics }: ModuleShared) {
    return { deps: { catalog: new CatalogCache(config.cacheTtlMs, metrics.cache('catalog')) } };
  },
});
