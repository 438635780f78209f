import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { GuardrailCache } from './guardrail-cache.js';
import { guardrailsRouter } from './guardrails.router.js';

export const guardrailsModule = defineModule({
  name: 'guardrails',
  routers: { guardrails: guardrailsRouter },
  create(config: Config, { metrics }: ModuleShared) {
    return { deps: { guardrails: new GuardrailCache(config.cacheTtlMs, metrics.cache('guardrails')) } };
  },
});
