import { queryRows } from '@switchyard/db';
import { SERVER_ACTOR, withoutRequest } from '../../access/callers.js';
import type { Config } from '../../config.js';
import { CounterStoreUnavailable } from '../../limits/limits.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { FreeModelQuota } from './free-quota.js';
import { ReservationQueue } from './reservation-queue.js';
import { routingRouter } from './routing.router.js';
import { expireReservations, openReservations, RESERVATION_SWEEP_LOCK, WorkspaceRoutingCache } from './routing.service.js';
import { SpendCache } from './spend.js';

declare module '../../trpc/service-deps.js' {
  /** What the routing module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** Each workspace's budgets, BYOK credentials and settings for routing decisions, kept up to CACHE_TTL_MS. */
    workspaceRouting: WorkspaceRoutingCache;
    /** Limits' remaining amounts for decisions that hold nothing, kept up to USAGE_CACHE_MS. */
    spend: SpendCache;
    /** The free-model quota per minute (through `limits`), with organizations' settings kept up to CACHE_TTL_MS. */
    freeQuota: FreeModelQuota;
    /** This process's reservations, one statement at a time per organization, those waiting together. */
    reservations: ReservationQueue;
    /** How long a routing reservation holds its amount (RESERVATION_TTL_MS). */
    reservationTtlMs: number;
  }
}

export const routingModule = defineModule({
  name: 'routing',
  routers: { routing: routingRouter },
  create(config: Config, { db, now, logger, metrics, jobs, limits, limitSettings }: ModuleShared) {
    // Expired reservations count against no limit; deleting them keeps the table small (one replica a round).
    // The sweep and the open reservations' figure are work no request started.
    const reservationsDeps = withoutRequest({ db, now });
    jobs.periodic({
      name: 'reservation expiry',
      intervalMs: config.reservationSweepIntervalMs,
      lock: RESERVATION_SWEEP_LOCK,
      run: async () => metrics.reservationsExpired.inc(await expireReservations(reservationsDeps, SERVER_ACTOR)),
    });
    metrics.reservations(() => openReservations(reservationsDeps, SERVER_ACTOR));
    const limitLog = logger.child({ component: 'limits' });
    return {
      deps: {
        workspaceRouting: new WorkspaceRoutingCache(config.cacheTtlMs, metrics.cache('workspace_routing')),
        spend: new SpendCache(config.usageCacheMs, metrics.cache('spend')),
        // A store away is logged once, by its state (the server's limits); anything else here once per refund.
        freeQuota: new FreeModelQuota(limits, config.freeModelRequestsPerMinute, limitSettings, (error) => {
          if (!(error instanceof CounterStoreUnavailable)) limitLog.warn({ err: error }, 'could not give back a free-model request refused by a later rule');
        }),
        reservations: new ReservationQueue((statement, values) => queryRows(db, statement, values), {
          observe: (size) => metrics.reservationBatchSize.observe(size),
        }),
        reservationTtlMs: config.reservationTtlMs,
      },
    };
  },
});
