// Whether an organization's authorization codes must use PKCE with S256 (organization_settings.
// pkce_require_s256; docs/decisions/0042-pkce-s256-setting.md). Off by default: platform-api.md
// D10/D11 keep code_challenge optional, with plain, so that existing clients keep working; an
// organization whose clients all send S256 turns it on, and from then on a code without a challenge
// or with plain is 400, when it is made and when it is exchanged (modules/auth/pkce.service.ts).
import type { OrganizationPkce, UpdatePkceInput } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfTenant, changedFields } from '../audit/audit.js';

const pkceOf = (row: { pkce_require_s256: boolean; updated_at: Date } | null): OrganizationPkce => ({
  pkce_require_s256: row?.pkce_require_s256 ?? false,
  updated_at: row?.updated_at.toISOString() ?? null,
});

/** settings.pkce: the caller's organization's PKCE rule. */
export async function getPkce(deps: Uses<'db'>, actor: Actor): Promise<{ data: OrganizationPkce }> {
  return { data: pkceOf(await deps.db.organizationSettings.findUnique({ where: tenantWhere(actor) })) };
}

/** settings.updatePkce: sets it in the caller's organization's settings row (audited in the same transaction). */
export async function updatePkce(deps: Uses<'db' | Audited>, actor: Actor, input: UpdatePkceInput): Promise<{ data: OrganizationPkce }> {
  const audit = auditOfTenant(actor, deps);
  const data = { pkce_require_s256: input.pkce_require_s256 };
  const row = await deps.db.$transaction(async (tx) => {
    const before = await tx.organizationSettings.findUnique({ where: tenantWhere(actor) });
    const row = await tx.organizationSettings.upsert({ where: tenantWhere(actor), create: { ...tenantData(actor), ...data }, update: data });
    await appendAudit(tx, audit, {
      action: 'settings.updatePkce',
      targetType: 'organization',
      targetId: actor.organizationId,
      organizationId: actor.organizationId,
      changes: changedFields(pkceOf(before), pkceOf(row), ['pkce_require_s256']),
    });
    return row;
  });
  return { data: pkceOf(row) };
}
