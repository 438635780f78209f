// The organization's alert thresholds (decision 0026; docs/events.md), in its settings row
// (organization_settings): set by the platform (organizations.updateSettings) and by the
// organization's own management keys (settings.alerts, settings.updateAlerts). Thresholds change
// only the organization's own notifications: they decide nothing about its spend or its requests.
// The row's alert fields: alerts-rows.ts.
import { appendAudit, auditOfTenant, changedFields } from '../audit/audit.js';
import type { AlertSettingsInput, OrganizationAlerts } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { type AlertColumns, alertSettingsData, alertSettingsOf } from './alerts-rows.js';

const alertsOf = (row: (AlertColumns & { updated_at: Date }) | null): OrganizationAlerts => ({
  ...alertSettingsOf(row),
  updated_at: row?.updated_at.toISOString() ?? null,
});

/** settings.alerts: the caller's organization's alert thresholds. */
export async function getAlertSettings(deps: Uses<'db'>, actor: Actor): Promise<{ data: OrganizationAlerts }> {
  const row = await deps.db.organizationSettings.findUnique({ where: tenantWhere(actor) });
  return { data: alertsOf(row) };
}

/** settings.updateAlerts: sets the fields given in the caller's organization's settings row (audited). */
export async function updateAlertSettings(deps: Uses<'db' | Audited>, actor: Actor, input: AlertSettingsInput): Promise<{ data: OrganizationAlerts }> {
  const audit = auditOfTenant(actor, deps);
  const data = alertSettingsData(input);
  const given = Object.keys(input).filter((k) => input[k as keyof AlertSettingsInput] !== undefined);
  const row = await deps.db.$transaction(async (tx) => {
    const before = await tx.organizationSettings.findUnique({ where: tenantWhere(actor) });
    const row = await tx.organizationSettings.upsert({
      where: tenantWhere(actor),
      create: { ...tenantData(actor), ...data },
      update: data,
    });
    await appendAudit(tx, audit, {
      action: 'settings.updateAlerts',
      targetType: 'organization',
      targetId: actor.organizationId,
      organizationId: actor.organizationId,
      changes: changedFields(alertsOf(before), alertsOf(row), given),
    });
    return row;
  });
  return { data: alertsOf(row) };
}
