// The alert fields of an organization's settings row (organization_settings; alerts.service.ts): the
// row's columns, the fields answers show, and what a write stores. organizations.service.ts reads
// and writes the same fields for the platform.
import { Prisma } from '@switchyard/db';
import type { AlertSettings, AlertSettingsInput } from '@switchyard/schema';
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
