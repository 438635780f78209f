import { KEY_USES_FLUSH_MS, recordSecretUses } from '../../access/callers.js';
import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { keysRouter } from './keys.router.js';
import { UsageCache } from './usage-cache.js';

declare module '../../trpc/service-deps.js' {
  /** What the keys module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** Each key's spend figures for GET /key, kept up to USAGE_CACHE_MS; forgotten when this process records for the key. */
    usage: UsageCache;
  }
}

export const keysModule = defineModule({
  name: 'keys',
  routers: { keys: keysRouter },
  create(config: Config, { db, logger, metrics, databaseHealth, keys }: ModuleShared) {
    // Secrets' last uses (noted in memory by authentication, at most once a minute per secret), written off the request path.
    const secretUses = recordSecretUses(db, keys, KEY_USES_FLUSH_MS, (error) => {
      if (!databaseHealth.report(error)) logger.warn({ err: error }, "could not record keys' last uses; the next uses are recorded");
    });
    const usage = new UsageCache(config.usageCacheMs, metrics.cache('key_usage'));
    return { deps: { usage }, stop: () => secretUses.stop() };
  },
});
