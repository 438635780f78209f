// The statements of GET /organization/members (members.service.ts): a page with the total, cut in
// the database (MEMBERS_PAGE), or the rows of a page of the order MemberOrderCache holds, by id
// (membersByIdQuery, also the bench's database floor: through statements.ts).
import { orgRoleColumn, rowOrNulls } from '@switchyard/db';
import { z } from 'zod';
import { tenantStatement, tenantValues } from '../../access/tenancy.js';

/** A member's columns in raw SQL; the role as Prisma reads it (`admin`, not the label `org:admin`). */
const MEMBER_COLUMNS = { user_id: z.string(), role: orgRoleColumn, email: z.string(), first_name: z.string(), last_name: z.string() };

/**
 * One page of members with the total, in one round trip, for organizations too large to keep their
 * order in memory. The page is cut from the (organization_id, created_at, id) index before users
 * are joined; a page past the end still carries the total (one row of nulls).
 */
export const MEMBERS_PAGE = tenantStatement(
  'organization',
  (tenant) => `
  SELECT t.total::int AS total, p.user_id, p.role, p.email, p.first_name, p.last_name
  FROM (SELECT count(*) AS total FROM organization_members WHERE ${tenant.where()}) t
  LEFT JOIN LATERAL (
    SELECT m.user_id, m.role::text AS role, m.created_at, m.id, u.email, m.first_name, m.last_name
    FROM (SELECT * FROM organization_members WHERE ${tenant.where()} ORDER BY created_at, id OFFSET :offset LIMIT :limit) m
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
  WHERE m.id = ANY(:member_ids::uuid[]) AND ${tenant.where('m')}`,
  z.object({ id: z.string(), ...MEMBER_COLUMNS }),
);

/**
 * The statement GET /organization/members makes per page of an organization whose order is in
 * memory (MemberOrderCache), with its values: the page's membership ids. Exported for the bench's
 * database floor.
 */
export function membersByIdQuery(organizationId: string, ids: string[]) {
  return { statement: MEMBERS_BY_ID, values: tenantValues(MEMBERS_BY_ID, { organizationId }, { member_ids: ids }) };
}
