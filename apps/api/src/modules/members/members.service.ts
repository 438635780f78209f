// The organization's members: GET /organization/members and the internal procedures that add,
// change and remove them. A user is a shared identity (one id per email); everything an
// organization writes about a person (names, role) is on its membership, and is all it reads.
// Services take (deps, actor, input) (decision 0037); the statements are in members-queries.ts.
import { queryRows, type OrganizationMember as MemberRow, type User } from '@switchyard/db';
import type {
  CreateOrganizationMemberInput,
  OrganizationMember,
  OrgRole,
  RemoveOrganizationMemberInput,
  UpdateOrganizationMemberInput,
} from '@switchyard/schema';
import { Invalid, NotFound } from '../../lib/errors.js';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantValues, tenantWhere } from '../../access/tenancy.js';
import { assertMayActOnMember, assertRoleWithin } from '../../access/ceiling.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfTenant, changedFields } from '../audit/audit.js';
import { MEMBERS_PAGE, membersByIdQuery } from './members-queries.js';
import { userIdForEmail } from './users.js';

type Role = MemberRow['role'];

const orgRoleOf = (role: Role): OrgRole => (role === 'admin' ? 'org:admin' : 'org:member');
const roleOf = (role: OrgRole): Role => (role === 'org:admin' ? 'admin' : 'member');

const memberOf = (row: MemberRow & { user: Pick<User, 'email'> }): OrganizationMember => memberOfFields({ ...row, email: row.user.email });

/** A member's fields as the statements read them (members-queries.ts). */
type MemberFields = Pick<MemberRow, 'user_id' | 'role' | 'first_name' | 'last_name'> & Pick<User, 'email'>;

const memberOfFields = (r: MemberFields): OrganizationMember =>
  ({ id: r.user_id, email: r.email, first_name: r.first_name, last_name: r.last_name, role: orgRoleOf(r.role) }) satisfies OrganizationMember;

/**
 * Oldest member first; ties broken by the membership id, so pages never overlap. The order comes
 * from MemberOrderCache (at most its TTL old for writes made elsewhere), the rows from the database.
 */
export async function listOrganizationMembers(deps: Uses<'db' | 'memberOrder'>, actor: Actor, input: { offset: number; limit: number }) {
  const { db } = deps;
  const ids = await deps.memberOrder.ids(db, actor.organizationId);
  if (ids === null) {
    const rows = await queryRows(db, MEMBERS_PAGE, tenantValues(MEMBERS_PAGE, actor, { offset: input.offset, limit: input.limit }));
    return { data: rows.flatMap((r) => (r.user_id === null ? [] : [memberOfFields(r)])), total_count: rows[0]?.total ?? 0 };
  }
  const slice = ids.slice(input.offset, input.offset + input.limit);
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
export async function createOrganizationMember(
  deps: Uses<'db' | 'memberOrder' | Audited>,
  actor: Actor,
  input: CreateOrganizationMemberInput,
): Promise<OrganizationMember> {
  const { db } = deps;
  // Nobody grants a role above their own (access/ceiling.ts).
  if (input.role === 'org:admin') assertRoleWithin(actor, 'org:admin');
  const audit = auditOfTenant(actor, deps);
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
  deps.memberOrder.forget(actor.organizationId);
  return created;
}

/** Changes this organization's membership only: its role and names for the person. */
export async function updateOrganizationMember(deps: Uses<'db' | Audited>, actor: Actor, input: UpdateOrganizationMemberInput): Promise<OrganizationMember> {
  const audit = auditOfTenant(actor, deps);
  return deps.db.$transaction(async (tx) => {
    const where = { ...tenantWhere(actor), user_id: input.user_id };
    const before = await tx.organizationMember.findFirst({ where, include: { user: { select: { email: true } } } });
    if (input.role === 'org:admin') assertRoleWithin(actor, 'org:admin');
    if (before) assertMayActOnMember(actor, orgRoleOf(before.role), 'change');
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
export async function removeOrganizationMember(deps: Uses<'db' | 'memberOrder' | Audited>, actor: Actor, input: RemoveOrganizationMemberInput) {
  const audit = auditOfTenant(actor, deps);
  if (input.user_id === actor.userId) throw new Invalid('a key cannot remove the member who created it');
  try {
    await deps.db.$transaction(async (tx) => {
      const member = await tx.organizationMember.findFirst({ where: { ...tenantWhere(actor), user_id: input.user_id }, select: { role: true } });
      if (member) assertMayActOnMember(actor, orgRoleOf(member.role), 'remove');
      const { count } = await tx.organizationMember.deleteMany({
        where: { ...tenantWhere(actor), user_id: input.user_id },
      });
      if (count === 0) throw new NotFound(`member ${input.user_id}`);
      await appendAudit(tx, audit, { action: 'organization.removeMember', targetType: 'member', targetId: input.user_id });
    });
  } finally {
    deps.memberOrder.forget(actor.organizationId);
  }
  return { removed: true as const };
}
