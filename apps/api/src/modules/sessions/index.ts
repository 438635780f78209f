import { SESSION_PREFIX } from '@switchyard/schema';
import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { SESSION_SWEEP_LOCK, sweepSessions } from './sweep.js';
import { sessionsRouter } from './sessions.router.js';
import { OIDC_ROUTES } from './oidc.routes.js';
import { SIGN_IN_ROUTES } from './sign-in.routes.js';

export const sessionsModule = defineModule({
  name: 'sessions',
  routers: { sessions: sessionsRouter },
  byteRoutes: [{ prefix: SESSION_PREFIX, routes: [...SIGN_IN_ROUTES, ...OIDC_ROUTES] }],
  create(config: Config, { db, now, jobs }: ModuleShared) {
    // Ended and expired sessions go (docs/sessions.md; one replica a round). A session is refused
    // from its end on; the sweep only keeps the table small.
    if (config.sessionSweepIntervalMs > 0) {
      jobs.periodic({
        name: 'sessions sweep',
        intervalMs: config.sessionSweepIntervalMs,
        lock: SESSION_SWEEP_LOCK,
        run: () => sweepSessions(db, now()),
      });
    }
    return { deps: { sessionLifetimes: { idleMs: config.sessionIdleTimeoutMs, maxAgeMs: config.sessionMaxAgeMs } } };
  },
});
