// The BYOK part of byok.resealSecrets (byok.service.ts resealOrganizationSecrets): after a key
// rotation (a new key first in SWITCHYARD_SECRET_KEY), the organization's provider secrets still
// sealed by an older key are sealed again by the current one.
import type { Db, Prisma } from '@switchyard/db';
import type { Actor } from '../../access/callers.js';
import { tenantWhere } from '../../access/tenancy.js';
import type { SecretBox } from '../../lib/secret-box.js';

/**
 * Re-encrypts the organization's secrets still sealed by an older key (with `client`:
 * byok.resealSecrets' transaction). Returns how many were re-encrypted.
 */
export async function resealByokSecrets(client: Db | Prisma.TransactionClient, box: SecretBox, actor: Actor): Promise<{ resealed: number }> {
  const rows = await client.byokCredential.findMany({
    where: {
      ...tenantWhere(actor),
      secret_ciphertext: { not: null },
      NOT: { secret_ciphertext: { startsWith: `v1.${box.currentKeyId}.` } },
    },
    select: { id: true, secret_ciphertext: true },
  });
  for (const row of rows) {
    // Conditional on the ciphertext read, so a concurrent rotation or delete is never overwritten.
    await client.byokCredential.updateMany({
      where: { id: row.id, secret_ciphertext: row.secret_ciphertext },
      data: { secret_ciphertext: box.reseal(row.secret_ciphertext!, row.id) },
    });
  }
  return { resealed: rows.length };
}
