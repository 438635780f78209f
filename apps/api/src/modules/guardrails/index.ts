import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { GuardrailCache } from './guardrail-cache.js';
import { guardrailsRouter } from './guardrails.router.js';

declare module '../../trpc/service-deps.js' {
  /** What the guardrails module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** The guardrails that apply to each key (GET /model's check), kept up to CACHE_TTL_MS. */
    guardrails: GuardrailCache;
  }
}

export const guardrailsModule = defineModule({
  name: 'guardrails',
  routers: { guardrails: guardrailsRouter },
  create(config: Config, { metrics }: ModuleShared) {
    return { deps: { guardrails: new GuardrailCache(config.cacheTtlMs, metrics.cache('guardrails')) } };
  },
});
