// The content retention sweep's statement (retention.service.ts sweepContentRetention): one
// organization's generation content older than a cut-off deleted, a batch per statement.
import { type Db, queryRows } from '@switchyard/db';
import { z } from 'zod';
import { tenantStatement, tenantValues, type Tenant } from '../../access/tenancy.js';

/** Generations looked at per statement: each batch is its own short transaction. */
const BATCH = 5000;

/**
 * One batch: the organization's next generations (in (created_at, id) order after the cursor
 * :after_created_at, :after_id) made before :before, and the content of those that have one deleted.
 * Answers how many contents went, how many generations it looked at and the last one's place (the
 * next cursor).
 */
const DELETE_EXPIRED_CONTENT = tenantStatement(
  'organization',
  (t) => `WITH batch AS (
       SELECT g.id, g.created_at FROM generations g
        WHERE ${t.where('g')} AND g.created_at < :before::timestamptz AND g.created_at >= :after_created_at::timestamptz
          AND (g.created_at, g.id) > (:after_created_at::timestamptz, :after_id::text)
        ORDER BY g.created_at, g.id LIMIT :batch_size
     ), last AS (
       SELECT id, created_at FROM batch ORDER BY created_at DESC, id DESC LIMIT 1
     ), gone AS (
       DELETE FROM generation_contents c USING batch WHERE c.generation_id = batch.id RETURNING 1
     )
     SELECT (SELECT count(*)::int FROM gone) AS deleted, (SELECT count(*)::int FROM batch) AS scanned,
            (SELECT created_at FROM last) AS last_created_at, (SELECT id FROM last) AS last_id`,
  z.object({ deleted: z.number(), scanned: z.number(), last_created_at: z.date().nullable(), last_id: z.string().nullable() }),
);

/** Deletes the content of the organization's generations made before `before`, a batch per statement; answers how many went. */
export async function sweepOrganizationContent(db: Db, tenant: Tenant, before: Date, batch = BATCH): Promise<number> {
  let cursor: { createdAt: Date; id: string } = { createdAt: new Date(0), id: '' };
  let total = 0;
  for (;;) {
    const [row] = await queryRows(
      db,
      DELETE_EXPIRED_CONTENT,
      tenantValues(DELETE_EXPIRED_CONTENT, tenant, {
        before: before.toISOString(),
        after_created_at: cursor.createdAt.toISOString(),
        after_id: cursor.id,
        batch_size: batch,
      }),
    );
    total += row?.deleted ?? 0;
    if (!row || row.scanned < batch || !row.last_created_at || row.last_id === null) return total;
    cursor = { createdAt: row.last_created_at, id: row.last_id };
  }
}
