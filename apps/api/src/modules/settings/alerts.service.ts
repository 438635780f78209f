// The organization's alert thresholds (issue 40; decision 0026; docs/events.md), in its settings row
// (organization_settings): set by the platform (organizations.updateSettings) and by the
// organization's own management keys (settings.alerts, settings.updateAlerts). Thresholds change
// only the organization's own notifications: they decide nothing about its spend or its requests.
import { appendAudit, changedFields, type Audit } from '../audit/audit.js';
import { type Db, Prisma } from '@switchyard/db';
import type { AlertSettings, AlertSettingsInput, OrganizationAlerts } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import { DEFAULT_ALERT_THRESHOLDS } from '../events/limit-alerts.js';

/** The columns of a settings row the alert fields come from. */
export interface AlertColumns {
  alert_thresholds: number[] | null;
  credits_low_usd: Prisma.Decimal | null;
}

/** The fields an answer shows: an organization without a row (or a field never set) has the defaults. */
export function alertSettingsOf(row: AlertColumns | null): AlertSettings {
  return {
    alert_thresholds: row?.alert_thresholds ?? [...DEFAULT_ALERT_THRESHOLDS],
    credits_low_usd: row?.credits_low_usd?.toNumber() ?? null,
  };
}

/** What a write stores: omitted fields untouched, null back to the default. */
export function alertSettingsData(input: AlertSettingsInput): { alert_thresholds?: number[]; credits_low_usd?: Prisma.Decimal | null } {
  const data: { alert_thresholds?: number[]; credits_low_usd?: Prisma.Decimal | null } = {};
  if (input.alert_thresholds !== undefined) data.alert_thresholds = input.alert_thresholds ?? [...DEFAULT_ALERT_THRESHOLDS];
  if (input.credits_low_usd !== undefined) data.credits_low_usd = input.credits_low_usd === null ? null : new Prisma.Decimal(input.credits_low_usd);
  return data;
}

const alertsOf = (row: (AlertColumns & { updated_at: Date }) | null): OrganizationAlerts => ({
  ...alertSettingsOf(row),
  updated_at: row?.updated_at.toISOString() ?? null,
});

/** settings.alerts: the caller's organization's alert thresholds. */
export async function getAlertSettings(db: Db, actor: Actor): Promise<{ data: OrganizationAlerts }> {
  const row = await db.organizationSettings.findUnique({ where: tenantWhere(actor) });
  return { data: alertsOf(row) };
}

/** settings.updateAlerts: sets the fields given in the caller's organization's settings row (audited). */
export async function updateAlertSettings(db: Db, actor: Actor, input: AlertSettingsInput, audit: Audit): Promise<{ data: OrganizationAlerts }> {
  const data = alertSettingsData(input);
  const given = Object.keys(input).filter((k) => input[k as keyof AlertSettingsInput] !== undefined);
  const row = await db.$transaction(async (tx) => {
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
