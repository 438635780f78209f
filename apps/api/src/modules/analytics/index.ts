import type { Config } from '../../config.js';
import { FairShareLimit } from '../../lib/fair-share-limit.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { analyticsRouter } from './analytics.router.js';
import { AnalyticsWorkers } from './analytics-workers.js';

declare module '../../trpc/service-deps.js' {
  /** What the analytics module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** The time limit of one analytics query statement (ANALYTICS_QUERY_TIMEOUT_MS); unset: 10 s. */
    analyticsQueryTimeoutMs?: number;
    /** How many analytics queries run at once (ANALYTICS_CONCURRENCY); unset: no limit. */
    analyticsLimit?: FairShareLimit;
    /** The worker threads analytics statements run in, with their shaping (ANALYTICS_WORKER_THREADS). */
    analyticsWorkers: AnalyticsWorkers;
  }
}

export const analyticsModule = defineModule({
  name: 'analytics',
  routers: { analytics: analyticsRouter },
  create(config: Config, { databaseUrl, metrics }: ModuleShared) {
    const analyticsLimit = new FairShareLimit(config.analyticsConcurrency);
    metrics.slots('analytics', () => analyticsLimit.state);
    // Analytics statements and their shaping, in worker threads on connections of their own (decision 0034).
    const analyticsWorkers = new AnalyticsWorkers(databaseUrl, config.analyticsConcurrency, config.analyticsWorkerThreads);
    return {
      deps: { analyticsLimit, analyticsWorkers, analyticsQueryTimeoutMs: config.analyticsQueryTimeoutMs },
      stop: () => analyticsWorkers.close().catch(() => undefined),
    };
  },
});
