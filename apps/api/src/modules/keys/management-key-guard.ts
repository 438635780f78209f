// The guard of an organization's last management key: a change that disables, deletes or scopes
// keys runs through keepingManagementKey, inside the caller's transaction (keys.service.ts, and the
// SCIM directory's deprovisioning).
import type { Prisma } from '@switchyard/db';
import { Invalid } from '../../lib/errors.js';
import { tenantWhere, type Tenant } from '../../access/tenancy.js';

/**
 * Runs `change` (which disables, deletes or scopes keys of the actor's organization) under the
 * organization's row lock, and refuses it (400, nothing changed) when it leaves the organization
 * without an enabled, unexpired, unscoped management key: nothing could then make it a new one but the
 * platform. The lock makes two such changes at once (two management keys disabling each other)
 * wait for each other, so that the second sees the first.
 */
export async function keepingManagementKey<T>(
  tx: Prisma.TransactionClient,
  actor: Tenant,
  now: Date,
  change: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  await tx.$executeRaw`SELECT 1 FROM organizations WHERE id = ${actor.organizationId} FOR UPDATE`;
  const result = await change(tx);
  const left = await tx.apiKey.count({
    where: {
      ...tenantWhere(actor),
      is_management_key: true,
      // Only an unscoped key can do everything, including making new keys of any scope.
      scopes: { isEmpty: true },
      disabled: false,
      deleted_at: null,
      OR: [{ expires_at: null }, { expires_at: { gt: now } }],
    },
  });
  if (left === 0) {
    throw new Invalid("the organization's last enabled, unscoped management key cannot be disabled, deleted or scoped", {
      reason: 'last management key',
    });
  }
  return result;
}
