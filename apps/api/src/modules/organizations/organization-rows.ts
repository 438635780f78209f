// An organization's record (the platform's Organization) from its row.
import type { Organization as OrganizationRow } from '@switchyard/db';
import type { Organization } from '@switchyard/schema';

export function organizationOf(row: OrganizationRow): Organization {
  return {
    id: row.id,
    name: row.name,
    default_workspace_id: row.default_workspace_id ?? '',
    credit_balance: row.credit_balance.toNumber(),
    disabled: row.disabled_at !== null,
    disabled_at: row.disabled_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  } satisfies Organization;
}
