import { SERVER_ACTOR, withoutRequest } from '../../access/callers.js';
import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { CONTENT_RETENTION_LOCK, sweepContentRetention } from './retention.service.js';
import { settingsRouter } from './settings.router.js';

export const settingsModule = defineModule({
  name: 'settings',
  routers: { settings: settingsRouter },
  create(config: Config, { db, now, jobs }: ModuleShared) {
    // Generation content past its organization's content_retention_days goes (docs/operations.md#retention; one replica a round).
    jobs.periodic({
      name: 'content retention',
      intervalMs: config.contentRetentionSweepIntervalMs,
      lock: CONTENT_RETENTION_LOCK,
      run: () => sweepContentRetention(withoutRequest({ db, now }), SERVER_ACTOR),
    });
    return { deps: {} };
  },
});
