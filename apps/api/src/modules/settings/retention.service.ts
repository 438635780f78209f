// How long an organization's stored generation content is kept
// (docs/operations.md#retention): content_retention_days in its settings row, set by its own
// management keys (settings.retention, settings.updateRetention) and by the platform
// (organizations.settings, organizations.updateSettings). null, the default, keeps content for good.
// A periodic job of the job runner (one replica a round) deletes the generation_contents rows of
// generations older than that; the generations' rows, their spend and every rollup stay, so
// GET /generation answers as before and GET /generation/content answers 404 "not stored", as for
// a generation whose content was never stored. Content holds no stored bytes (it is all in its row).
// The sweep's statement: retention-queries.ts; the row's field as answers show it: retention-rows.ts.
import type { OrganizationRetention, UpdateRetentionInput } from '@switchyard/schema';
import type { Actor, PlatformActor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfTenant, changedFields } from '../audit/audit.js';
import { sweepOrganizationContent } from './retention-queries.js';
import { retentionSettingsOf } from './retention-rows.js';

/** The sweep's advisory lock (jobs/runner.ts). */
export const CONTENT_RETENTION_LOCK = 0x434f_4e54; // "CONT"

const retentionOf = (row: { content_retention_days: number | null; updated_at: Date } | null): OrganizationRetention => ({
  ...retentionSettingsOf(row),
  updated_at: row?.updated_at.toISOString() ?? null,
});

/** settings.retention: the caller's organization's content retention. */
export async function getRetention(deps: Uses<'db'>, actor: Actor): Promise<{ data: OrganizationRetention }> {
  const row = await deps.db.organizationSettings.findUnique({ where: tenantWhere(actor) });
  return { data: retentionOf(row) };
}

/** settings.updateRetention: sets it in the caller's organization's settings row (audited in the same transaction). */
export async function updateRetention(deps: Uses<'db' | Audited>, actor: Actor, input: UpdateRetentionInput): Promise<{ data: OrganizationRetention }> {
  const audit = auditOfTenant(actor, deps);
  const data = { content_retention_days: input.content_retention_days };
  const row = await deps.db.$transaction(async (tx) => {
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
 * The sweep (a periodic job, SERVER_ACTOR's work): for each organization with a retention, the
 * content of its generations older than that many days before deps.now(). Answers how many contents went.
 */
export async function sweepContentRetention(deps: Uses<'db' | 'now'>, _actor: PlatformActor): Promise<{ organizations: number; deleted: number }> {
  const { db } = deps;
  const now = deps.now();
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
