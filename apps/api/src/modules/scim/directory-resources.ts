// The SCIM directory's rows (with what their representations read) and their SCIM representations
// (RFC 7643 §4): a User, a Group. A representation's links (meta.location, groups' and members'
// $ref) are made by the routes (scim-v2.routes.ts), which know where /scim/v2 is: they hand their
// ScimLinks in; nothing here builds a URL.
import type { Prisma, ScimGroup as GroupRow, ScimUser as UserRow } from '@switchyard/db';
import { GROUP_SCHEMA, USER_SCHEMA } from './scim-protocol.js';

export type UserWithPerson = UserRow & { org_member: { user: { email: string } }; groups: { group: { id: string; display_name: string } }[] };
export type GroupWithMembers = GroupRow & { members: { user: { id: string; user_name: string } }[] };

export const USER_INCLUDE = {
  org_member: { select: { user: { select: { email: true } } } },
  groups: { select: { group: { select: { id: true, display_name: true } } }, orderBy: { created_at: 'asc' as const } },
} satisfies Prisma.ScimUserInclude;
export const GROUP_INCLUDE = {
  members: { select: { user: { select: { id: true, user_name: true } } }, orderBy: { created_at: 'asc' as const } },
} satisfies Prisma.ScimGroupInclude;

/** The links of a representation: the URI of a resource of this directory, by its kind and id (the HTTP layer's). */
export interface ScimLinks {
  resource(kind: 'User' | 'Group', id: string): string;
}

function meta(kind: 'User' | 'Group', row: { id: string; created_at: Date; updated_at: Date }, links: ScimLinks) {
  return {
    resourceType: kind,
    created: row.created_at.toISOString(),
    lastModified: row.updated_at.toISOString(),
    location: links.resource(kind, row.id),
  };
}

/** A User's representation without its groups and meta: what a PATCH applies to (the two are read-only). */
export function userAttributes(row: UserWithPerson): Record<string, unknown> {
  const name =
    row.given_name !== null || row.family_name !== null ? { givenName: row.given_name ?? undefined, familyName: row.family_name ?? undefined } : undefined;
  return {
    schemas: [USER_SCHEMA],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    userName: row.user_name,
    ...(name ? { name } : {}),
    ...(row.display_name !== null ? { displayName: row.display_name } : {}),
    active: row.active,
    emails: [{ value: row.org_member.user.email, type: 'work', primary: true }],
  };
}

export function userResource(row: UserWithPerson, links: ScimLinks): Record<string, unknown> {
  return {
    ...userAttributes(row),
    groups: row.groups.map(({ group }) => ({ value: group.id, display: group.display_name, $ref: links.resource('Group', group.id), type: 'direct' })),
    meta: meta('User', row, links),
  };
}

/** A Group's representation without its meta (what a PATCH applies to: members' $ref included, as the client sees them). */
export function groupAttributes(row: GroupWithMembers, links: ScimLinks, excludeMembers = false): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    displayName: row.display_name,
    ...(excludeMembers
      ? {}
      : { members: row.members.map(({ user }) => ({ value: user.id, display: user.user_name, $ref: links.resource('User', user.id), type: 'User' })) }),
  };
}

export function groupResource(row: GroupWithMembers, links: ScimLinks, excludeMembers = false): Record<string, unknown> {
  return { ...groupAttributes(row, links, excludeMembers), meta: meta('Group', row, links) };
}
