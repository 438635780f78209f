import type { Config } from '../../config.js';
import { upstreamPolicyOf } from '../../upstream/index.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { DeliveryWorker, dispatchEvents, DISPATCH_LOCK, outboxState } from './delivery.js';
import { emitKeyExpiryNotices, KEY_EXPIRY_LOCK } from './key-expiry.js';
import { RefusalEvents } from './refusal-events.js';

declare module '../../trpc/service-deps.js' {
  /** What the events module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** routing.authorize's refusals as events in the outbox, written in batches off the request path. */
    refusalEvents: RefusalEvents;
  }
}

/** Delivery of events to destinations, as the server hands it to the tests (which run it with the poll off). */
export interface Deliveries {
  /** Makes the deliveries of new events (null: another replica holds the round's lock). */
  dispatch(): Promise<{ events: number; deliveries: number } | null>;
  /** Attempts the deliveries due now; answers how many. */
  deliverDue(): Promise<number>;
}

/** The outbox: events noted off the request path, and their delivery to destinations. It has no router of its own. */
export const eventsModule = defineModule({
  name: 'events',
  routers: {},
  create(config: Config, { db, now, logger, metrics, jobs, secrets, media }: ModuleShared) {
    jobs.periodic({
      name: 'key expiry notices',
      intervalMs: config.keyExpiryScanIntervalMs,
      lock: KEY_EXPIRY_LOCK,
      run: () => emitKeyExpiryNotices(db, now()),
    });
    // Events to destinations (decision 0025): one replica a round makes the deliveries of new events;
    // every replica attempts due deliveries, off the request and recording paths.
    const worker = new DeliveryWorker({
      db,
      secrets,
      policy: upstreamPolicyOf(media),
      now,
      logger: logger.child({ component: 'delivery' }),
      metrics,
      concurrency: config.deliveryConcurrency,
      timeoutMs: config.deliveryTimeoutMs,
      pollMs: config.deliveryPollMs,
    });
    const dispatchJob = {
      name: 'event dispatch',
      intervalMs: config.deliveryPollMs,
      lock: DISPATCH_LOCK,
      run: async () => {
        const made = await dispatchEvents(db, now());
        if (made.deliveries > 0) worker.wake();
        return made;
      },
    };
    jobs.periodic(dispatchJob);
    metrics.outbox(() => outboxState(db), now);
    // routing.authorize's refusals: closed after the drain, when no request notes one any more, and what is pending is written then.
    const refusalEvents = new RefusalEvents({ db, now, metrics, logger: logger.child({ component: 'refusal-events' }) });
    const deliveries: Deliveries = {
      dispatch: () => jobs.runPeriodic(dispatchJob) as Promise<{ events: number; deliveries: number } | null>,
      deliverDue: () => worker.deliverDue(),
    };
    return {
      deps: { refusalEvents, deliveries },
      start: () => worker.start(),
      pause: () => worker.stop(),
      stop: async () => {
        await refusalEvents.close();
        await worker.stop();
      },
    };
  },
});
