import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { auditRouter } from './audit.router.js';
import { ByokReveals } from './byok-reveals.js';
import { AUDIT_RETENTION_LOCK, sweepAuditLog } from './retention.js';

declare module '../../trpc/service-deps.js' {
  /** What the audit module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** BYOK secrets revealed by routing.authorize, audited one entry per credential per hour (off the request path). */
    byokReveals: ByokReveals;
  }
}

export const auditModule = defineModule({
  name: 'audit',
  routers: { audit: auditRouter },
  create(config: Config, { db, now, logger, jobs }: ModuleShared) {
    // The audit log's entries past AUDIT_RETENTION_DAYS go (docs/audit.md; one replica a round).
    if (config.auditRetentionDays > 0) {
      jobs.periodic({
        name: 'audit log retention',
        intervalMs: config.auditSweepIntervalMs,
        lock: AUDIT_RETENTION_LOCK,
        run: () => sweepAuditLog(db, now(), config.auditRetentionDays),
      });
    }
    // BYOK secrets revealed by routing.authorize: one audit entry per credential per hour, written off the request path.
    const byokReveals = new ByokReveals({ db, now, logger: logger.child({ component: 'byok-reveals' }) });
    return { deps: { byokReveals }, stop: () => byokReveals.close() };
  },
});
