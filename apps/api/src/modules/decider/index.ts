import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { ChangeFeed } from './change-feed.js';
import { deciderRouter } from './decider.router.js';

declare module '../../trpc/service-deps.js' {
  /** What the decider module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** The deciders' change stream: cache announcements as events with ids (cache-events.ts publishes into it). */
    deciderChanges: ChangeFeed;
    /** How often the change stream says it is alive when nothing changes (DECIDER_HEARTBEAT_MS). */
    deciderHeartbeatMs: number;
  }
}

export const deciderModule = defineModule({
  name: 'decider',
  routers: { decider: deciderRouter },
  create(config: Config, { now }: ModuleShared) {
    const deciderChanges = new ChangeFeed(config.deciderChangeBuffer, now);
    return {
      deps: { deciderChanges, deciderHeartbeatMs: config.deciderHeartbeatMs },
      // Open streams would hold the server's drain: they end before it.
      endStreams: () => deciderChanges.close(),
      stop: async () => deciderChanges.close(),
    };
  },
});
