// How long an organization's stored generation content is kept (issue 42 item 2;
// docs/operations.md#retention): content_retention_days in its settings row, set by its own
// management keys (settings.retention, settings.updateRetention) and by the platform
// (organizations.settings, organizations.updateSettings). null, the default, keeps content for good.
// A periodic job of the job runner (one replica a round) deletes the generation_contents rows of
// generations older than that; the generations' rows, their spend and every rollup stay, so
// GET /generation answers as before and GET /generation/content answers 404 "not stored", as for
// a generation whose content was never stored. Content holds no stored bytes (it is all in its row).
import { type Db, queryRows } from '@switchyard/db';
import type { OrganizationRetention, RetentionSettings, UpdateRetentionInput } from '@switchyard/schema';
import { z } from 'zod';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantStatement, tenantValues, tenantWhere, type Tenant } from '../../access/tenancy.js';
import { appendAudit, changedFields, type Audit } from '../audit/audit.js';

/** The sweep's advisory lock (jobs/runner.ts). */
export const CONTENT_RETENTION_LOCK = 0x434f_4e54; // "CONT"

/** Generations looked at per statement: each batch is its own short transaction. */
const BATCH = 5000;

/** The field an answer shows: a missing row keeps content for good. */
export function retentionSettingsOf(row: { content_retention_days: number | null } | null): RetentionSettings {
  return { content_retention_days: row?.content_retention_days ?? null };
}

const retentionOf = (row: { content_retention_days: number | null; updated_at: Date } | null): OrganizationRetention => ({
  ...retentionSettingsOf(row),
  updated_at: row?.updated_at.toISOString() ?? null,
});

/** settings.retention: the caller's organization's content retention. */
export async function getRetention(db: Db, actor: Actor): Promise<{ data: OrganizationRetention }> {
  const row = await db.organizationSettings.findUnique({ where: tenantWhere(actor) });
  return { data: retentionOf(row) };
}

/** settings.updateRetention: sets it in the caller's organization's settings row (audited in the same transaction). */
export async function updateRetention(db: Db, actor: Actor, input: UpdateRetentionInput, audit: Audit): Promise<{ data: OrganizationRetention }> {
  const data = { content_retention_days: input.content_retention_days };
  const row = await db.$transaction(async (tx) => {
    const before = await tx.organizationSettings.findUnique({ where: tenantWhere(actor) });
    const row = await tx.organizationSettings.upsert({
      where: tenantWhere(actor),
      create: { ...tenantData(actor), ...data },
      update: data,
    });
    await appendAudit(tx, audit, {
      action: 'settings.updateRetention',
      targetType: 'organization',
      targetId: actor.organizationId,
      organizationId: actor.organizationId,
      changes: changedFields(retentionOf(before), retentionOf(row), ['content_retention_days']),
    });
    return row;
  });
  return { data: retentionOf(row) };
}

/**
 * One batch: the organization's next generations (in (created_at, id) order after the cursor $3,
 * $4) made before $2, and the content of those that have one deleted. Answers how many contents
 * went, how many generations it looked at and the last one's place (the next cursor).
 */
const DELETE_EXPIRED_CONTENT = tenantStatement(
  'organization',
  (t) => `WITH batch AS (
       SELECT g.id, g.created_at FROM generations g
        WHERE ${t.where('g')} AND g.created_at < $2::timestamptz AND g.created_at >= $3::timestamptz
          AND (g.created_at, g.id) > ($3::timestamptz, $4::text)
        ORDER BY g.created_at, g.id LIMIT $5
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
      tenantValues(DELETE_EXPIRED_CONTENT, tenant, before.toISOString(), cursor.createdAt.toISOString(), cursor.id, batch),
    );
    total += row?.deleted ?? 0;
    if (!row || row.scanned < batch || !row.last_created_at || row.last_id === null) return total;
    cursor = { createdAt: row.last_created_at, id: row.last_id };
  }
}

/**
 * The sweep (a periodic job): for each organization with a retention, the content of its
 * generations older than that many days before `now`. Answers how many contents went.
 */
export async function sweepContentRetention(db: Db, now: Date): Promise<{ organizations: number; deleted: number }> {
  const rows = await db.organizationSettings.findMany({
    where: { content_retention_days: { not: null } },
    select: { organization_id: true, content_retention_days: true },
    orderBy: { organization_id: 'asc' },
  });
  let deleted = 0;
  for (const row of rows) {
    const before = new Date(now.getTime() - row.content_retention_days! * 86_400_000);
    deleted += await sweepOrganizationContent(db, { organizationId: row.organization_id }, before);
  }
  return { organizations: rows.length, deleted };
}
