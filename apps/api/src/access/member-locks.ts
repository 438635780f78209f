// Members named by a write (workspace memberships, guardrail assignments), checked and locked in the
// write's own transaction.
import { orgRoleColumn, Prisma, rawRows, type OrganizationMember } from '@switchyard/db';
import { z } from 'zod';
import { tenantSql, type Tenant } from './tenancy.js';

/** The row schema of lockMembers' statement: the role as Prisma reads it (`admin`), not its label. */
const MEMBER_ROLE_ROW = z.object({ user_id: z.string(), role: orgRoleColumn });

/**
 * The organization's memberships of these users (role as Prisma's OrgRole, `admin` or `member`),
 * locked FOR SHARE to the end of the transaction: a member removed concurrently
 * cannot slip between this check and a write that names them. Any id that is no member of the
 * organization: the error `refuse` makes of them all is thrown, before anything is written.
 */
export async function lockMembers(
  tx: Prisma.TransactionClient,
  tenant: Tenant,
  userIds: string[],
  refuse: (unknownIds: string[]) => Error,
): Promise<{ user_id: string; role: OrganizationMember['role'] }[]> {
  const members = await rawRows(
    tx,
    MEMBER_ROLE_ROW,
    Prisma.sql`
    SELECT user_id, role::text AS role FROM organization_members
    WHERE ${tenantSql(tenant)} AND user_id = ANY(${userIds}::text[])
    FOR SHARE`,
  );
  const known = new Set(members.map((m) => m.user_id));
  const unknown = userIds.filter((id) => !known.has(id));
  if (unknown.length > 0) throw refuse(unknown);
  return members;
}
