// The organization's members: GET /organization/members and the internal procedures that add,
// change and remove them. Users are global (one per email); membership is per organization.
import type { Db, OrganizationMember as MemberRow, User } from '@switchyard/db';
import type {
  CreateOrganizationMemberInput,
  OrganizationMember,
  OrgRole,
  RemoveOrganizationMemberInput,
  UpdateOrganizationMemberInput,
} from '@switchyard/schema';
import { isUniqueViolation } from '../../db-errors.js';
import { Invalid, NotFound } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Actor } from '../keys/auth.service.js';

type Role = MemberRow['role'];

const orgRoleOf = (role: Role): OrgRole => (role === 'admin' ? 'org:admin' : 'org:member');
const roleOf = (role: OrgRole): Role => (role === 'org:admin' ? 'admin' : 'member');

function memberOf(row: MemberRow & { user: User }): OrganizationMember {
  return {
    id: row.user_id,
    email: row.user.email,
    first_name: row.user.first_name,
    last_name: row.user.last_name,
    role: orgRoleOf(row.role),
  } satisfies OrganizationMember;
}

/** Oldest member first; ties broken by the membership id, so pages never overlap. */
export async function listOrganizationMembers(db: Db, actor: Actor, page: { offset: number; limit: number }) {
  const where = { organization_id: actor.organizationId };
  const [rows, total] = await Promise.all([
    db.organizationMember.findMany({
      where,
      include: { user: true },
      orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
      skip: page.offset,
      take: page.limit,
    }),
    db.organizationMember.count({ where }),
  ]);
  return { data: rows.map(memberOf), total_count: total };
}

/** Adds a person by email, creating the user when the email is new. Already a member: 400. */
export async function createOrganizationMember(
  db: Db,
  actor: Actor,
  input: CreateOrganizationMemberInput,
): Promise<OrganizationMember> {
  const email = input.email.toLowerCase();
  try {
    return await db.$transaction(async (tx) => {
      const user = await tx.user.upsert({
        where: { email },
        create: { id: newId('user'), email, first_name: input.first_name ?? '', last_name: input.last_name ?? '' },
        update: {},
      });
      const member = await tx.organizationMember.create({
        data: { organization_id: actor.organizationId, user_id: user.id, role: roleOf(input.role) },
        include: { user: true },
      });
      return memberOf(member);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new Invalid('already a member of the organization', { reason: 'already a member', email });
    throw error;
  }
}

export async function updateOrganizationMember(
  db: Db,
  actor: Actor,
  input: UpdateOrganizationMemberInput,
): Promise<OrganizationMember> {
  const [row] = await db.organizationMember.updateManyAndReturn({
    where: { organization_id: actor.organizationId, user_id: input.user_id },
    data: { role: roleOf(input.role) },
    include: { user: true },
  });
  if (!row) throw new NotFound(`member ${input.user_id}`);
  return memberOf(row);
}

/** Removes the membership; workspace memberships and guardrail assignments go with it (cascade). */
export async function removeOrganizationMember(db: Db, actor: Actor, input: RemoveOrganizationMemberInput) {
  if (input.user_id === actor.userId) throw new Invalid('a key cannot remove the member who created it');
  const { count } = await db.organizationMember.deleteMany({
    where: { organization_id: actor.organizationId, user_id: input.user_id },
  });
  if (count === 0) throw new NotFound(`member ${input.user_id}`);
  return { removed: true as const };
}
