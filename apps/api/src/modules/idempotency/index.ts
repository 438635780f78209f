import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { expireIdempotencyKeys, IDEMPOTENCY_EXPIRY_INTERVAL_MS, IDEMPOTENCY_EXPIRY_LOCK } from './idempotency.js';

/** Idempotency-Key answers, which the other modules' routers replay: no router of its own. */
export const idempotencyModule = defineModule({
  name: 'idempotency',
  routers: {},
  create(_config: Config, { db, now, jobs }: ModuleShared) {
    // Idempotency-Key answers are replayed for 24 hours (docs/idempotency.md), then forgotten.
    jobs.periodic({
      name: 'idempotency answers expiry',
      intervalMs: IDEMPOTENCY_EXPIRY_INTERVAL_MS,
      lock: IDEMPOTENCY_EXPIRY_LOCK,
      run: () => expireIdempotencyKeys(db, now()),
    });
    return { deps: {} };
  },
});
