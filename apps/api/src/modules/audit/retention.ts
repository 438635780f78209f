// The audit log's retention sweep (docs/audit.md): entries older than AUDIT_RETENTION_DAYS go, as a
// periodic job of the job runner (one replica a round). The only delete the table allows: its
// trigger refuses every other (decision 0024), so the sweep says who it is with a setting of its
// own transaction.
import type { Db } from '@switchyard/db';

/** The sweep's advisory lock (jobs/runner.ts). */
export const AUDIT_RETENTION_LOCK = 0x4155_4454; // "AUDT"

/** At most this many entries go per statement, so that no one statement holds a long lock. */
const BATCH = 10_000;

/**
 * Deletes the entries made before `now` minus `days` days; `days` 0 keeps everything. Answers how
 * many went. Each batch is one transaction, which alone may delete (SET LOCAL).
 */
export async function sweepAuditLog(db: Db, now: Date, days: number): Promise<number> {
  if (days <= 0) return 0;
  const before = new Date(now.getTime() - days * 86_400_000).toISOString();
  let total = 0;
  for (;;) {
    const deleted = await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT set_config('switchyard.audit_retention', 'on', true)`;
      return tx.$executeRaw`
        DELETE FROM audit_log WHERE id IN (
          SELECT id FROM audit_log WHERE created_at < ${before}::timestamptz ORDER BY created_at LIMIT ${BATCH})`;
    });
    total += deleted;
    if (deleted < BATCH) return total;
  }
}
