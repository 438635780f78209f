// The content retention field of an organization's settings row (organization_settings;
// retention.service.ts), as answers show it. organizations.service.ts shows it for the platform.
import type { RetentionSettings } from '@switchyard/schema';

/** The field an answer shows: a missing row keeps content for good. */
export function retentionSettingsOf(row: { content_retention_days: number | null } | null): RetentionSettings {
  return { content_retention_days: row?.content_retention_days ?? null };
}
