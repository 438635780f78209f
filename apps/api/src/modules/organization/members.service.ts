// The organization's members: GET /organization/members and the internal procedures that add,
// change and remove them. A user is a shared identity (one id per email); everything an
// organization writes about a person (names, role) is on its membership, and is all it reads.
import { orgRoleColumn, Prisma, queryRows, rawRows, rowOrNulls, type Db, type OrganizationMember as MemberRow, type User } from '@switchyard/db';
import type {
  CreateOrganizationMemberInput,
  OrganizationMember,
  OrgRole,
  RemoveOrganizationMemberInput,
  UpdateOrganizationMemberInput,
} from '@switchyard/schema';
import { z } from 'zod';
import { Invalid, NotFound } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantSql, type Tenant, tenantStatement, tenantValues, tenantWhere } from '../../access/tenancy.js';
import { appendAudit, changedFields, type Audit } from '../audit/audit.js';
import type { MemberOrderCache } from './member-order.js';

type Role = MemberRow['role'];

const orgRoleOf = (role: Role): OrgRole => (role === 'admin' ? 'org:admin' : 'org:member');
const roleOf = (role: OrgRole): Role => (role === 'org:admin' ? 'admin' : 'member');

const memberOf = (row: MemberRow & { user: Pick<User, 'email'> }): OrganizationMember => memberOfFields({ ...row, email: row.user.email });

/** A member's columns in raw SQL; the role as Prisma reads it (`admin`, not the label `org:admin`). */
const MEMBER_COLUMNS = { user_id: z.string(), role: orgRoleColumn, email: z.string(), first_name: z.string(), last_name: z.string() };
type MemberFields = Pick<MemberRow, 'user_id' | 'role' | 'first_name' | 'last_name'> & Pick<User, 'email'>;

/**
 * One page of members with the total, in one round trip, for organizations too large to keep their
 * order in memory. The page is cut from the (organization_id, created_at, id) index before users
 * are joined; a page past the end still carries the total (one row of nulls).
 */
const MEMBERS_PAGE = tenantStatement(
  'organization',
  (tenant) => `
  SELECT t.total::int AS total, p.user_id, p.role, p.email, p.first_name, p.last_name
  FROM (SELECT count(*) AS total FROM organization_members WHERE ${tenant.where()}) t
  LEFT JOIN LATERAL (
    SELECT m.user_id, m.role::text AS role, m.created_at, m.id, u.email, m.first_name, m.last_name
    FROM (SELECT * FROM organization_members WHERE ${tenant.where()} ORDER BY created_at, id OFFSET $2 LIMIT $3) m
    JOIN users u ON u.id = m.user_id
  ) p ON true
  ORDER BY p.created_at, p.id`,
  rowOrNulls({ total: z.number().int() }, MEMBER_COLUMNS),
);

/** The members with these membership ids, by primary key. */
const MEMBERS_BY_ID = tenantStatement(
  'organization',
  (tenant) => `
  SELECT m.id, m.user_id, m.role::text AS role, u.email, m.first_name, m.last_name
  FROM organization_members m JOIN users u ON u.id = m.user_id
  WHERE m.id = ANY($2::uuid[]) AND ${tenant.where('m')}`,
  z.object({ id: z.string(), ...MEMBER_COLUMNS }),
);

const memberOfFields = (r: MemberFields): OrganizationMember =>
  ({ id: r.user_id, email: r.email, first_name: r.first_name, last_name: r.last_name, role: orgRoleOf(r.role) }) satisfies OrganizationMember;

/**
 * The statement GET /organization/members makes per page of an organization whose order is in
 * memory (MemberOrderCache), with its values: the page's membership ids. Exported for the bench's
 * database floor.
 */
export function membersByIdQuery(organizationId: string, ids: string[]) {
  return { statement: MEMBERS_BY_ID, values: tenantValues(MEMBERS_BY_ID, { organizationId }, ids) };
}

/**
 * Oldest member first; ties broken by the membership id, so pages never overlap. The order comes
 * from MemberOrderCache (at most its TTL old for writes made elsewhere), the rows from the database.
 */
export async function listOrganizationMembers(db: Db, order: MemberOrderCache, actor: Actor, page: { offset: number; limit: number }) {
  const ids = await order.ids(db, actor.organizationId);
  if (ids === null) {
    const rows = await queryRows(db, MEMBERS_PAGE, tenantValues(MEMBERS_PAGE, actor, page.offset, page.limit));
    return { data: rows.flatMap((r) => (r.user_id === null ? [] : [memberOfFields(r)])), total_count: rows[0]?.total ?? 0 };
  }
  const slice = ids.slice(page.offset, page.offset + page.limit);
  const byIds = membersByIdQuery(actor.organizationId, slice);
  const rows = slice.length ? await queryRows(db, byIds.statement, byIds.values) : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { data: slice.flatMap((id) => (byId.has(id) ? [memberOfFields(byId.get(id)!)] : [])), total_count: ids.length };
}

/**
 * Adds a person by email, with this organization's names and role for them; the user (the shared
 * identity) is created when the email is new. Already a member of this organization: 400.
 *
 * Race-free: the user's INSERT ... ON CONFLICT DO NOTHING waits for a concurrent transaction that
 * inserts the same email and, once that one commits, inserts nothing; the SELECT after it (a new
 * statement, so a new snapshot) then sees that row. The membership's ON CONFLICT DO NOTHING makes a
 * real duplicate membership, and only that, come back empty.
 */
/**
 * The user with this email, created when new: identity (id, email) only, shared by every
 * organization the person belongs to. Race-free (see createOrganizationMember).
 */
export async function userIdForEmail(tx: Prisma.TransactionClient, email: string): Promise<string> {
  const normalized = email.toLowerCase();
  await tx.user.createMany({ data: [{ id: newId('user'), email: normalized }], skipDuplicates: true });
  return (await tx.user.findUniqueOrThrow({ where: { email: normalized }, select: { id: true } })).id;
}

export async function createOrganizationMember(
  db: Db,
  order: MemberOrderCache,
  actor: Actor,
  input: CreateOrganizationMemberInput,
  audit: Audit,
): Promise<OrganizationMember> {
  const email = input.email.toLowerCase();
  const created = await db.$transaction(async (tx) => {
    const userId = await userIdForEmail(tx, email);
    const [member] = await tx.organizationMember.createManyAndReturn({
      data: [
        {
          ...tenantData(actor),
          user_id: userId,
          role: roleOf(input.role),
          first_name: input.first_name ?? '',
          last_name: input.last_name ?? '',
        },
      ],
      skipDuplicates: true,
    });
    if (!member) throw new Invalid('already a member of the organization', { reason: 'already a member', email });
    const answer = memberOf({ ...member, user: { email } });
    await appendAudit(tx, audit, { action: 'organization.createMember', targetType: 'member', targetId: userId, changes: { after: answer } });
    return answer;
  });
  order.forget(actor.organizationId);
  return created;
}

/** Changes this organization's membership only: its role and names for the person. */
export async function updateOrganizationMember(db: Db, actor: Actor, input: UpdateOrganizationMemberInput, audit: Audit): Promise<OrganizationMember> {
  return db.$transaction(async (tx) => {
    const where = { ...tenantWhere(actor), user_id: input.user_id };
    const before = await tx.organizationMember.findFirst({ where, include: { user: { select: { email: true } } } });
    const [row] = await tx.organizationMember.updateManyAndReturn({
      where,
      data: { role: input.role && roleOf(input.role), first_name: input.first_name, last_name: input.last_name },
      include: { user: { select: { email: true } } },
    });
    if (!row || !before) throw new NotFound(`member ${input.user_id}`);
    const fields = Object.keys(input).filter((field) => field !== 'user_id');
    await appendAudit(tx, audit, {
      action: 'organization.updateMember',
      targetType: 'member',
      targetId: input.user_id,
      changes: changedFields(memberOf(before), memberOf(row), fields),
    });
    return memberOf(row);
  });
}

/** Removes the membership; workspace memberships and guardrail assignments go with it (cascade). */
export async function removeOrganizationMember(db: Db, order: MemberOrderCache, actor: Actor, input: RemoveOrganizationMemberInput, audit: Audit) {
  if (input.user_id === actor.userId) throw new Invalid('a key cannot remove the member who created it');
  try {
    await db.$transaction(async (tx) => {
      const { count } = await tx.organizationMember.deleteMany({
        where: { ...tenantWhere(actor), user_id: input.user_id },
      });
      if (count === 0) throw new NotFound(`member ${input.user_id}`);
      await appendAudit(tx, audit, { action: 'organization.removeMember', targetType: 'member', targetId: input.user_id });
    });
  } finally {
    order.forget(actor.organizationId);
  }
  return { removed: true as const };
}

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
): Promise<{ user_id: string; role: Role }[]> {
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
