// The SCIM directory of an organization: the users and groups its identity provider provisions over
// /scim/v2, and what the group mappings (A28-A31) make of them: a group gives its active members the
// mapped role in the mapped workspace.
//
// Every write runs in one transaction under the organization's row lock and applies the mappings
// again to the whole organization (directory-writes.ts). Deactivating (active false) or deleting a
// user removes every workspace membership they have and disables, not deletes, their keys; this
// process's key cache forgets the keys disabled once the write committed. A change that would
// leave the organization without an enabled management key is refused whole (400) by the keys
// module's check.
//
// Each write over /scim/v2 appends its audit entry in its transaction (actor kind scim_token;
// docs/audit.md): scimUsers.create / replace / update / delete, scimGroups.create / replace / update
// / delete, with the fields it changed.
//
// The services answer rows (directory-resources.ts); the routes (scim-v2.routes.ts) make their
// SCIM representations, links included.
import type { Db, ScimGroup as GroupRow } from '@switchyard/db';
import type { ListScimGroupsInput, ScimGroup } from '@switchyard/schema';
import type { Actor, PlatformActor } from '../../access/callers.js';
import { tenantData, tenantWhere, type Tenant } from '../../access/tenancy.js';
import { isUuid } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { NotFound } from '../../lib/errors.js';
import { userIdForEmail } from '../members/users.js';
import { appendAudit, auditOfScim, changedFields, created, removed, type Audit } from '../audit/audit.js';
import {
  GROUP_INCLUDE,
  groupAttributes,
  USER_INCLUDE,
  userAttributes,
  type GroupWithMembers,
  type ScimLinks,
  type UserWithPerson,
} from './directory-resources.js';
import { deactivate, directoryWrite, forgetDisabledKeys, type Loss, type Tx, type WriteEffects } from './directory-writes.js';
import { applyPatch, compare, GROUP_SCHEMA, parseFilter, parseResource, ScimError, USER_SCHEMA, type Comparison } from './scim-protocol.js';
import type { ScimCaller } from './scim-tokens.service.js';

/** A SCIM list request's filter and window (RFC 7644 §3.4.2.2, §3.4.2.4): 1-based startIndex, count. */
export interface ScimQuery {
  filter?: string;
  startIndex: number;
  count: number;
}

const MAX_COUNT = 100;

// ---- Reading ----

/** The attributes a filter may compare, with their case rule (RFC 7643 §4.1, §4.2). */
const USER_ATTRIBUTES: Record<string, { caseExact: boolean; of: (row: UserWithPerson) => unknown }> = {
  id: { caseExact: true, of: (row) => row.id },
  username: { caseExact: false, of: (row) => row.user_name },
  externalid: { caseExact: true, of: (row) => row.external_id },
  displayname: { caseExact: false, of: (row) => row.display_name },
  active: { caseExact: true, of: (row) => row.active },
  emails: { caseExact: false, of: (row) => row.org_member.user.email },
};
const GROUP_ATTRIBUTES: Record<string, { caseExact: boolean; of: (row: GroupWithMembers) => unknown }> = {
  id: { caseExact: true, of: (row) => row.id },
  displayname: { caseExact: false, of: (row) => row.display_name },
  externalid: { caseExact: true, of: (row) => row.external_id },
};

function matcher<Row>(branches: Comparison[][], attributes: Record<string, { caseExact: boolean; of: (row: Row) => unknown }>) {
  for (const branch of branches) {
    for (const { attribute } of branch) {
      if (!attributes[attribute.toLowerCase()]) throw new ScimError(400, 'invalidFilter', `filtering on ${attribute} is not supported`);
    }
  }
  return (row: Row) =>
    branches.some((branch) =>
      branch.every(({ attribute, op, value }) => {
        const rule = attributes[attribute.toLowerCase()]!;
        return compare(rule.of(row), op, value, rule.caseExact);
      }),
    );
}

/** A narrowing of the query by the filter's equality on an indexed column, when the filter is one branch with one. */
function narrowing(branches: Comparison[][], columns: Record<string, (value: string) => object>): object {
  if (branches.length !== 1) return {};
  for (const { attribute, op, value } of branches[0]!) {
    const column = columns[attribute.toLowerCase()];
    if (op === 'eq' && typeof value === 'string' && column) return column(value);
  }
  return {};
}

function windowOf(query: ScimQuery) {
  return { skip: Math.max(query.startIndex, 1) - 1, take: Math.min(Math.max(query.count, 0), MAX_COUNT) };
}

/** GET /Users: the directory's users the filter selects, oldest first, in the window; total counts all it selects. */
export async function listUsers(deps: Uses<'db'>, actor: ScimCaller, input: ScimQuery): Promise<{ users: UserWithPerson[]; total: number }> {
  const { db } = deps;
  const branches = input.filter ? parseFilter(input.filter) : [];
  const where = {
    ...tenantWhere(actor),
    ...narrowing(branches, {
      username: (v) => ({ user_name: { equals: v, mode: 'insensitive' as const } }),
      externalid: (v) => ({ external_id: v }),
      id: (v) => (isUuid(v) ? { id: v.toLowerCase() } : { id: { in: [] } }),
    }),
  };
  const { skip, take } = windowOf(input);
  if (branches.length === 0) {
    const [users, total] = await Promise.all([
      db.scimUser.findMany({ where, include: USER_INCLUDE, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], skip, take }),
      db.scimUser.count({ where }),
    ]);
    return { users, total };
  }
  const matches = matcher(branches, USER_ATTRIBUTES);
  const rows = (await db.scimUser.findMany({ where, include: USER_INCLUDE, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] })).filter(matches);
  return { users: rows.slice(skip, skip + take), total: rows.length };
}

/** GET /Groups: the directory's groups the filter selects, oldest first, in the window; total counts all it selects. */
export async function listGroups(deps: Uses<'db'>, actor: ScimCaller, input: ScimQuery): Promise<{ groups: GroupWithMembers[]; total: number }> {
  const { db } = deps;
  const branches = input.filter ? parseFilter(input.filter) : [];
  const where = {
    ...tenantWhere(actor),
    ...narrowing(branches, {
      displayname: (v) => ({ display_name: { equals: v, mode: 'insensitive' as const } }),
      externalid: (v) => ({ external_id: v }),
      id: (v) => (isUuid(v) ? { id: v.toLowerCase() } : { id: { in: [] } }),
    }),
  };
  const { skip, take } = windowOf(input);
  if (branches.length === 0) {
    const [groups, total] = await Promise.all([
      db.scimGroup.findMany({ where, include: GROUP_INCLUDE, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], skip, take }),
      db.scimGroup.count({ where }),
    ]);
    return { groups, total };
  }
  const matches = matcher(branches, GROUP_ATTRIBUTES);
  const rows = (await db.scimGroup.findMany({ where, include: GROUP_INCLUDE, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] })).filter(matches);
  return { groups: rows.slice(skip, skip + take), total: rows.length };
}

async function findUser(db: Db | Tx, tenant: Tenant, id: string): Promise<UserWithPerson> {
  const row = isUuid(id) ? await db.scimUser.findFirst({ where: { id: id.toLowerCase(), ...tenantWhere(tenant) }, include: USER_INCLUDE }) : null;
  if (!row) throw new ScimError(404, undefined, `User ${id} not found`);
  return row;
}

async function findGroup(db: Db | Tx, tenant: Tenant, id: string): Promise<GroupWithMembers> {
  const row = isUuid(id) ? await db.scimGroup.findFirst({ where: { id: id.toLowerCase(), ...tenantWhere(tenant) }, include: GROUP_INCLUDE }) : null;
  if (!row) throw new ScimError(404, undefined, `Group ${id} not found`);
  return row;
}

/** GET /Users/:id: the directory's user; another organization's, or no UUID, is 404. */
export async function getUser(deps: Uses<'db'>, actor: ScimCaller, input: { id: string }): Promise<UserWithPerson> {
  return findUser(deps.db, actor, input.id);
}

/** GET /Groups/:id: the directory's group; another organization's, or no UUID, is 404. */
export async function getGroup(deps: Uses<'db'>, actor: ScimCaller, input: { id: string }): Promise<GroupWithMembers> {
  return findGroup(deps.db, actor, input.id);
}

// ---- Writing ----

/** The e-mail a User names: userName when it is one, else its primary (or first) e-mail. */
function emailOf(resource: Record<string, unknown>): string {
  const userName = resource.userName as string;
  if (/^[^@\s]+@[^@\s]+$/.test(userName)) return userName.toLowerCase();
  const emails = (resource.emails as { value?: string; primary?: boolean }[] | undefined) ?? [];
  const email = (emails.find((e) => e.primary) ?? emails[0])?.value;
  if (email && /^[^@\s]+@[^@\s]+$/.test(email)) return email.toLowerCase();
  throw new ScimError(400, 'invalidValue', 'userName (or, when it is not one, a primary e-mail) must be an e-mail address');
}

function userColumns(resource: Record<string, unknown>) {
  const name = (resource.name as { givenName?: string; familyName?: string } | undefined) ?? {};
  return {
    user_name: resource.userName as string,
    external_id: (resource.externalId as string | undefined) ?? null,
    display_name: (resource.displayName as string | undefined) ?? null,
    given_name: name.givenName ?? null,
    family_name: name.familyName ?? null,
    active: resource.active === undefined ? true : resource.active === true,
  };
}

/** The person of `email`, made an organization member (role member) when not one yet. */
async function personFor(tx: Tx, tenant: Tenant, email: string, resource: Record<string, unknown>): Promise<string> {
  const userId = await userIdForEmail(tx, email);
  const name = (resource.name as { givenName?: string; familyName?: string } | undefined) ?? {};
  await tx.organizationMember.createMany({
    data: [{ ...tenantData(tenant), user_id: userId, role: 'member', first_name: name.givenName ?? '', last_name: name.familyName ?? '' }],
    skipDuplicates: true,
  });
  return userId;
}

async function assertUserNameFree(tx: Tx, tenant: Tenant, userName: string, userId: string, exceptId?: string) {
  const taken = await tx.scimUser.findFirst({
    where: {
      ...tenantWhere(tenant),
      OR: [{ user_name: { equals: userName, mode: 'insensitive' } }, { user_id: userId }],
      ...(exceptId ? { NOT: { id: exceptId } } : {}),
    },
    select: { id: true },
  });
  if (taken) throw new ScimError(409, 'uniqueness', `a User with this userName (or e-mail) already exists: ${taken.id}`);
}

/** An entry's view of a User: its columns and e-mail (the person it is). */
function auditedUser(columns: ReturnType<typeof userColumns>, email: string, userId: string): Record<string, unknown> {
  return { ...columns, email, user_id: userId };
}

/** POST /Users: the user, made a member of the organization (its person found or made by e-mail). */
export async function createUser(deps: Uses<'db' | 'keys' | 'memberOrder' | Audited>, actor: ScimCaller, input: { body: unknown }): Promise<UserWithPerson> {
  const audit = auditOfScim(actor, deps);
  const now = audit.at;
  const resource = parseResource('User', input.body);
  const email = emailOf(resource);
  const { result, effects } = await directoryWrite(deps.db, actor, now, async (tx, losses) => {
    const userId = await personFor(tx, actor, email, resource);
    await assertUserNameFree(tx, actor, resource.userName as string, userId);
    const columns = userColumns(resource);
    const row = await tx.scimUser.create({ data: { ...tenantData(actor), user_id: userId, ...columns, created_at: now, updated_at: now } });
    if (!columns.active) await deactivate(tx, actor, userId, losses);
    await appendAudit(tx, audit, {
      action: 'scimUsers.create',
      targetType: 'scim_user',
      targetId: row.id,
      changes: created(auditedUser(columns, email, userId)),
    });
    return row.id;
  });
  userWritten(deps, actor, effects);
  return findUser(deps.db, actor, result);
}

/** After a write of a User committed: this process forgets the keys it disabled and the organization's member order. */
function userWritten(deps: Uses<'keys' | 'memberOrder'>, actor: ScimCaller, effects: WriteEffects): void {
  deps.memberOrder.forget(actor.organizationId);
  forgetDisabledKeys(deps.keys, effects);
}

/** Writes a User's new representation (PUT, or PATCH's result): another e-mail moves it to that person. */
async function writeUser(
  tx: Tx,
  tenant: Tenant,
  current: UserWithPerson,
  resource: Record<string, unknown>,
  now: Date,
  losses: Loss[],
  audit: Audit,
  action: string,
) {
  const email = emailOf(resource);
  const columns = userColumns(resource);
  let userId = current.user_id;
  if (email !== current.org_member.user.email) {
    userId = await personFor(tx, tenant, email, resource);
    // The former person keeps their membership of the organization, not their workspaces.
    await deactivate(tx, tenant, current.user_id, losses);
  }
  await assertUserNameFree(tx, tenant, columns.user_name, userId, current.id);
  await tx.scimUser.update({ where: { id: current.id }, data: { ...columns, user_id: userId, updated_at: now } });
  if ((current.active || userId !== current.user_id) && !columns.active) await deactivate(tx, tenant, userId, losses);
  const before = auditedUser(
    {
      user_name: current.user_name,
      external_id: current.external_id,
      display_name: current.display_name,
      given_name: current.given_name,
      family_name: current.family_name,
      active: current.active,
    },
    current.org_member.user.email,
    current.user_id,
  );
  const after = auditedUser(columns, email, userId);
  await appendAudit(tx, audit, { action, targetType: 'scim_user', targetId: current.id, changes: changedFields(before, after) });
}

/** PUT /Users/:id: the user's new representation (another e-mail moves it to that person). */
export async function replaceUser(
  deps: Uses<'db' | 'keys' | 'memberOrder' | Audited>,
  actor: ScimCaller,
  input: { id: string; body: unknown },
): Promise<UserWithPerson> {
  const audit = auditOfScim(actor, deps);
  const now = audit.at;
  const resource = parseResource('User', input.body);
  const { effects } = await directoryWrite(deps.db, actor, now, async (tx, losses) => {
    const current = await findUser(tx, actor, input.id);
    await writeUser(tx, actor, current, resource, now, losses, audit, 'scimUsers.replace');
  });
  userWritten(deps, actor, effects);
  return findUser(deps.db, actor, input.id);
}

/** PATCH /Users/:id: a PatchOp applied to the user's representation (its groups and meta are read-only). */
export async function patchUser(
  deps: Uses<'db' | 'keys' | 'memberOrder' | Audited>,
  actor: ScimCaller,
  input: { id: string; body: unknown },
): Promise<UserWithPerson> {
  const audit = auditOfScim(actor, deps);
  const now = audit.at;
  const { effects } = await directoryWrite(deps.db, actor, now, async (tx, losses) => {
    const current = await findUser(tx, actor, input.id);
    const patched = await applyPatch('User', userAttributes(current), input.body);
    await writeUser(tx, actor, current, parseResource('User', { ...patched, schemas: [USER_SCHEMA] }), now, losses, audit, 'scimUsers.update');
  });
  userWritten(deps, actor, effects);
  return findUser(deps.db, actor, input.id);
}

/** DELETE /Users/:id: the user goes, with every workspace membership of its person (their keys disabled). */
export async function deleteUser(deps: Uses<'db' | 'keys' | Audited>, actor: ScimCaller, input: { id: string }): Promise<void> {
  const audit = auditOfScim(actor, deps);
  const { effects } = await directoryWrite(deps.db, actor, audit.at, async (tx, losses) => {
    const current = await findUser(tx, actor, input.id);
    await tx.scimUser.delete({ where: { id: current.id } });
    await deactivate(tx, actor, current.user_id, losses);
    await appendAudit(tx, audit, {
      action: 'scimUsers.delete',
      targetType: 'scim_user',
      targetId: current.id,
      changes: removed({ user_name: current.user_name, email: current.org_member.user.email, user_id: current.user_id }),
    });
  });
  forgetDisabledKeys(deps.keys, effects);
}

/** The SCIM user ids a Group's members name, checked to be the organization's users (400 otherwise). */
async function memberIds(tx: Tx, tenant: Tenant, resource: Record<string, unknown>): Promise<string[]> {
  const values = ((resource.members as { value?: string }[] | undefined) ?? []).map((m) => m.value);
  if (values.some((v) => typeof v !== 'string')) throw new ScimError(400, 'invalidValue', 'every member needs a value (a User id)');
  const ids = [...new Set((values as string[]).map((v) => v.toLowerCase()))];
  const valid = ids.filter(isUuid);
  const found = valid.length ? await tx.scimUser.findMany({ where: { ...tenantWhere(tenant), id: { in: valid } }, select: { id: true } }) : [];
  const known = new Set(found.map((r) => r.id));
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length) throw new ScimError(400, 'invalidValue', `members name no User of this directory: ${unknown.join(', ')}`);
  return ids;
}

/** Sets a group's members to `ids`; answers who was added and who removed (SCIM user ids). */
async function setMembers(tx: Tx, tenant: Tenant, groupId: string, ids: string[], now: Date): Promise<{ added: string[]; removed: string[] }> {
  const had = (await tx.scimGroupMember.findMany({ where: { group_id: groupId }, select: { scim_user_id: true } })).map((m) => m.scim_user_id);
  const wanted = new Set(ids);
  const kept = new Set(had);
  await tx.scimGroupMember.deleteMany({ where: { group_id: groupId, scim_user_id: { notIn: ids } } });
  if (ids.length) {
    await tx.scimGroupMember.createMany({
      data: ids.map((id) => ({ ...tenantData(tenant), group_id: groupId, scim_user_id: id, created_at: now })),
      skipDuplicates: true,
    });
  }
  return { added: ids.filter((id) => !kept.has(id)), removed: had.filter((id) => !wanted.has(id)) };
}

/** A group write's entry: the changed columns, and the members added and removed (SCIM user ids). */
async function auditGroup(
  tx: Tx,
  audit: Audit,
  action: string,
  groupId: string,
  before: ReturnType<typeof groupColumns> | null,
  after: ReturnType<typeof groupColumns>,
  members: { added: string[]; removed: string[] },
) {
  const changes = before ? changedFields(before, after) : created(after);
  await appendAudit(tx, audit, {
    action,
    targetType: 'scim_group',
    targetId: groupId,
    changes: { ...changes, members_added: members.added, members_removed: members.removed },
  });
}

function groupColumns(resource: Record<string, unknown>) {
  return { display_name: resource.displayName as string, external_id: (resource.externalId as string | undefined) ?? null };
}

/** A stored group's columns, as groupColumns gives them. */
function groupColumnsOf(row: GroupRow): ReturnType<typeof groupColumns> {
  return { display_name: row.display_name, external_id: row.external_id };
}

/** POST /Groups: the group, with its members (Users of this directory). */
export async function createGroup(deps: Uses<'db' | 'keys' | Audited>, actor: ScimCaller, input: { body: unknown }): Promise<GroupWithMembers> {
  const audit = auditOfScim(actor, deps);
  const now = audit.at;
  const resource = parseResource('Group', input.body);
  const { result, effects } = await directoryWrite(deps.db, actor, now, async (tx) => {
    const ids = await memberIds(tx, actor, resource);
    const row = await tx.scimGroup.create({ data: { ...tenantData(actor), ...groupColumns(resource), created_at: now, updated_at: now } });
    const members = await setMembers(tx, actor, row.id, ids, now);
    await auditGroup(tx, audit, 'scimGroups.create', row.id, null, groupColumns(resource), members);
    return row.id;
  });
  forgetDisabledKeys(deps.keys, effects);
  return findGroup(deps.db, actor, result);
}

/** PUT /Groups/:id: the group's new representation, its members set to those it names. */
export async function replaceGroup(deps: Uses<'db' | 'keys' | Audited>, actor: ScimCaller, input: { id: string; body: unknown }): Promise<GroupWithMembers> {
  const audit = auditOfScim(actor, deps);
  const now = audit.at;
  const resource = parseResource('Group', input.body);
  const { effects } = await directoryWrite(deps.db, actor, now, async (tx) => {
    const current = await findGroup(tx, actor, input.id);
    const ids = await memberIds(tx, actor, resource);
    await tx.scimGroup.update({ where: { id: current.id }, data: { ...groupColumns(resource), updated_at: now } });
    const members = await setMembers(tx, actor, current.id, ids, now);
    await auditGroup(tx, audit, 'scimGroups.replace', current.id, groupColumnsOf(current), groupColumns(resource), members);
  });
  forgetDisabledKeys(deps.keys, effects);
  return findGroup(deps.db, actor, input.id);
}

/**
 * PATCH /Groups/:id: a PatchOp applied to the group's representation as the client sees it (its
 * meta is read-only). Its members' $ref are part of it (a path may filter on them): `links` are the
 * HTTP layer's, which knows where /scim/v2 is.
 */
export async function patchGroup(
  deps: Uses<'db' | 'keys' | Audited>,
  actor: ScimCaller,
  input: { id: string; body: unknown; links: ScimLinks },
): Promise<GroupWithMembers> {
  const audit = auditOfScim(actor, deps);
  const now = audit.at;
  const { effects } = await directoryWrite(deps.db, actor, now, async (tx) => {
    // Read under the organization's lock: a concurrent PATCH of the group has committed or waits.
    const current = await findGroup(tx, actor, input.id);
    const patched = await applyPatch('Group', groupAttributes(current, input.links), input.body);
    const resource = parseResource('Group', { ...patched, schemas: [GROUP_SCHEMA] });
    const ids = await memberIds(tx, actor, resource);
    await tx.scimGroup.update({ where: { id: current.id }, data: { ...groupColumns(resource), updated_at: now } });
    const members = await setMembers(tx, actor, current.id, ids, now);
    await auditGroup(tx, audit, 'scimGroups.update', current.id, groupColumnsOf(current), groupColumns(resource), members);
  });
  forgetDisabledKeys(deps.keys, effects);
  return findGroup(deps.db, actor, input.id);
}

/** DELETE /Groups/:id: the group goes; the mappings of it grant nothing any more. */
export async function deleteGroup(deps: Uses<'db' | 'keys' | Audited>, actor: ScimCaller, input: { id: string }): Promise<void> {
  const audit = auditOfScim(actor, deps);
  const { effects } = await directoryWrite(deps.db, actor, audit.at, async (tx) => {
    const current = await findGroup(tx, actor, input.id);
    await tx.scimGroup.delete({ where: { id: current.id } });
    await appendAudit(tx, audit, {
      action: 'scimGroups.delete',
      targetType: 'scim_group',
      targetId: current.id,
      changes: { ...removed(groupColumnsOf(current)), members_removed: current.members.map((m) => m.user.id) },
    });
  });
  forgetDisabledKeys(deps.keys, effects);
}

// ---- For the management API and the sync job ----

/**
 * Applies every group mapping of the organization (the input's) again: the current members of each
 * mapped group get the mapped role, grants of groups that no longer exist go. A sync job of the
 * server (SERVER_ACTOR) calls this; it answers the keys it disabled for its caller to forget.
 * synced_groups: mapped groups that exist; deleted_groups: mapped group ids that name no group.
 */
export async function applyScimMappings(
  deps: Uses<'db' | 'now'>,
  _actor: PlatformActor,
  input: Tenant,
): Promise<{ synced_groups: number; deleted_groups: number } & WriteEffects> {
  const { result, effects } = await directoryWrite(deps.db, input, deps.now(), async (tx) => {
    const mapped = [
      ...new Set((await tx.scimGroupMapping.findMany({ where: tenantWhere(input), select: { scim_group_id: true } })).map((m) => m.scim_group_id)),
    ];
    const existing = mapped.length ? await tx.scimGroup.count({ where: { ...tenantWhere(input), id: { in: mapped } } }) : 0;
    return { synced_groups: existing, deleted_groups: mapped.length - existing };
  });
  return { ...result, ...effects };
}

/** D14: the organization's SCIM groups, oldest first; 404 when it has no SCIM directory (no groups and no mappings). */
export async function listScimGroups(deps: Uses<'db'>, actor: Actor, input: ListScimGroupsInput): Promise<{ data: ScimGroup[]; total_count: number }> {
  const where = tenantWhere(actor);
  const offset = input.offset ?? 0;
  const [rows, total, mappings] = await Promise.all([
    deps.db.scimGroup.findMany({ where, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], skip: offset, take: input.limit }),
    deps.db.scimGroup.count({ where }),
    deps.db.scimGroupMapping.count({ where }),
  ]);
  if (total === 0 && mappings === 0) throw new NotFound('the organization has no SCIM directory');
  return {
    data: rows.map(
      (row) =>
        ({
          id: row.id,
          organization_id: row.organization_id,
          display_name: row.display_name,
          external_id: row.external_id,
          created_at: row.created_at.toISOString(),
          updated_at: row.updated_at.toISOString(),
        }) satisfies ScimGroup,
    ),
    total_count: total,
  };
}
