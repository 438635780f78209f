// People's shared identities (users: an id and an email), as an organization's writes find or make
// them inside their own transaction: adding a member, creating an organization with its owner, a
// SCIM provisioning.
import type { Prisma } from '@switchyard/db';
import { newId } from '../../lib/ids.js';

/**
 * The user with this email, created when new: identity (id, email) only, shared by every
 * organization the person belongs to. Race-free (see members.service.ts createOrganizationMember).
 */
export async function userIdForEmail(tx: Prisma.TransactionClient, email: string): Promise<string> {
  const normalized = email.toLowerCase();
  await tx.user.createMany({ data: [{ id: newId('user'), email: normalized }], skipDuplicates: true });
  return (await tx.user.findUniqueOrThrow({ where: { email: normalized }, select: { id: true } })).id;
}
