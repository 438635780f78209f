// The SCIM directory of an organization: the users and groups its identity provider provisions over
// /scim/v2, and what the group mappings (A28-A31) make of them: a group gives its active members the
// mapped role in the mapped workspace.
//
// Every write runs in one transaction under the organization's row lock (the lock the keys module's
// "last enabled management key" check takes), so that writes of one organization's directory apply
// one after the other (two PATCHes of one group both land) and nothing is half-written. After the
// write, the mappings are applied again to the whole organization (reconcile()):
// - a membership a mapping grants and the person lacks is made, marked scim_granted;
// - a scim_granted membership no mapping grants any more is removed, and the person's keys in that
//   workspace are disabled; its role follows the mapping's;
// - a membership made by hand (scim_granted false) is never changed or removed by a mapping.
// Deactivating (active false) or deleting a user removes every workspace membership they have and
// disables, not deletes, their keys. A change that would leave the organization without an enabled
// management key is refused whole (400) by the keys module's check.
//
// Each write over /scim/v2 appends its audit entry in its transaction (actor kind scim_token;
// docs/audit.md): scimUsers.create / replace / update / delete, scimGroups.create / replace / update
// / delete, with the fields it changed.
import type { Db, Prisma, ScimGroup as GroupRow, ScimUser as UserRow } from '@switchyard/db';
import type { ListScimGroupsInput, ScimGroup } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantWhere, type Tenant } from '../../access/tenancy.js';
import { isUuid } from '../../access/workspaces.js';
import { Invalid, NotFound } from '../../errors.js';
import { keepingManagementKey } from '../keys/keys.service.js';
import { userIdForEmail } from '../organization/members.service.js';
import { appendAudit, changedFields, created, removed, type Audit } from '../audit/audit.js';
import { applyPatch, compare, GROUP_SCHEMA, parseFilter, parseResource, ScimError, USER_SCHEMA, type Comparison } from './scim-protocol.js';

type Tx = Prisma.TransactionClient;

/** What a write leaves for the caller to do once it committed: forget these key hashes in the key cache. */
export interface WriteEffects {
  disabledKeyHashes: string[];
}

/** The list window of a SCIM list request (RFC 7644 §3.4.2.4): 1-based startIndex, count. */
export interface ScimQuery {
  filter?: string;
  startIndex: number;
  count: number;
  excludeMembers?: boolean;
}

const MAX_COUNT = 100;

// ---- Representations ----

type UserWithPerson = UserRow & { org_member: { user: { email: string } }; groups: { group: { id: string; display_name: string } }[] };
type GroupWithMembers = GroupRow & { members: { user: { id: string; user_name: string } }[] };

const USER_INCLUDE = {
  org_member: { select: { user: { select: { email: true } } } },
  groups: { select: { group: { select: { id: true, display_name: true } } }, orderBy: { created_at: 'asc' as const } },
} satisfies Prisma.ScimUserInclude;
const GROUP_INCLUDE = {
  members: { select: { user: { select: { id: true, user_name: true } } }, orderBy: { created_at: 'asc' as const } },
} satisfies Prisma.ScimGroupInclude;

function meta(kind: 'User' | 'Group', row: { id: string; created_at: Date; updated_at: Date }, base: string) {
  return {
    resourceType: kind,
    created: row.created_at.toISOString(),
    lastModified: row.updated_at.toISOString(),
    location: `${base}/${kind}s/${row.id}`,
  };
}

export function userResource(row: UserWithPerson, base: string): Record<string, unknown> {
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
    groups: row.groups.map(({ group }) => ({ value: group.id, display: group.display_name, $ref: `${base}/Groups/${group.id}`, type: 'direct' })),
    meta: meta('User', row, base),
  };
}

export function groupResource(row: GroupWithMembers, base: string, excludeMembers = false): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    displayName: row.display_name,
    ...(excludeMembers
      ? {}
      : { members: row.members.map(({ user }) => ({ value: user.id, display: user.user_name, $ref: `${base}/Users/${user.id}`, type: 'User' })) }),
    meta: meta('Group', row, base),
  };
}

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

export async function listUsers(db: Db, tenant: Tenant, query: ScimQuery, base: string) {
  const branches = query.filter ? parseFilter(query.filter) : [];
  const where = {
    ...tenantWhere(tenant),
    ...narrowing(branches, {
      username: (v) => ({ user_name: { equals: v, mode: 'insensitive' as const } }),
      externalid: (v) => ({ external_id: v }),
      id: (v) => (isUuid(v) ? { id: v.toLowerCase() } : { id: { in: [] } }),
    }),
  };
  const { skip, take } = windowOf(query);
  if (branches.length === 0) {
    const [rows, total] = await Promise.all([
      db.scimUser.findMany({ where, include: USER_INCLUDE, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], skip, take }),
      db.scimUser.count({ where }),
    ]);
    return { resources: rows.map((row) => userResource(row, base)), total };
  }
  const matches = matcher(branches, USER_ATTRIBUTES);
  const rows = (await db.scimUser.findMany({ where, include: USER_INCLUDE, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] })).filter(matches);
  return { resources: rows.slice(skip, skip + take).map((row) => userResource(row, base)), total: rows.length };
}

export async function listGroups(db: Db, tenant: Tenant, query: ScimQuery, base: string) {
  const branches = query.filter ? parseFilter(query.filter) : [];
  const where = {
    ...tenantWhere(tenant),
    ...narrowing(branches, {
      displayname: (v) => ({ display_name: { equals: v, mode: 'insensitive' as const } }),
      externalid: (v) => ({ external_id: v }),
      id: (v) => (isUuid(v) ? { id: v.toLowerCase() } : { id: { in: [] } }),
    }),
  };
  const { skip, take } = windowOf(query);
  const render = (row: GroupWithMembers) => groupResource(row, base, query.excludeMembers);
  if (branches.length === 0) {
    const [rows, total] = await Promise.all([
      db.scimGroup.findMany({ where, include: GROUP_INCLUDE, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], skip, take }),
      db.scimGroup.count({ where }),
    ]);
    return { resources: rows.map(render), total };
  }
  const matches = matcher(branches, GROUP_ATTRIBUTES);
  const rows = (await db.scimGroup.findMany({ where, include: GROUP_INCLUDE, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] })).filter(matches);
  return { resources: rows.slice(skip, skip + take).map(render), total: rows.length };
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

export async function getUser(db: Db, tenant: Tenant, id: string, base: string) {
  return userResource(await findUser(db, tenant, id), base);
}

export async function getGroup(db: Db, tenant: Tenant, id: string, base: string, excludeMembers = false) {
  return groupResource(await findGroup(db, tenant, id), base, excludeMembers);
}

// ---- Writing ----

/**
 * Runs `write` in a transaction under the organization's row lock, then applies the mappings again
 * and disables the keys of memberships lost. A key disabled is checked by the keys module's rule (the
 * organization keeps an enabled management key), which refuses the whole write otherwise.
 */
async function directoryWrite<T>(
  db: Db,
  tenant: Tenant,
  now: Date,
  write: (tx: Tx, losses: Loss[]) => Promise<T>,
): Promise<{ result: T; effects: WriteEffects }> {
  try {
    return await db.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT 1 FROM organizations WHERE id = ${tenant.organizationId} FOR UPDATE`;
        const losses: Loss[] = [];
        const result = await write(tx, losses);
        losses.push(...(await reconcile(tx, tenant)));
        const disabledKeyHashes = await disableKeys(tx, tenant, now, losses);
        return { result, effects: { disabledKeyHashes } };
      },
      { timeout: 30_000, maxWait: 30_000 },
    );
  } catch (error) {
    if (error instanceof Invalid && (error.metadata as { reason?: string } | undefined)?.reason === 'last management key') {
      throw new ScimError(400, 'mutability', "the change would disable the organization's last enabled management key; nothing was changed");
    }
    throw error;
  }
}

/** What lost its access: a person's keys everywhere (deactivated), or in one workspace (a grant removed). */
type Loss = { userId: string; workspaceId: string | null };

/** Disables the live, enabled keys of each loss, under the keys module's management-key rule. */
async function disableKeys(tx: Tx, tenant: Tenant, now: Date, losses: Loss[]): Promise<string[]> {
  if (losses.length === 0) return [];
  const where = {
    ...tenantWhere(tenant),
    disabled: false,
    deleted_at: null,
    OR: losses.map((loss) => (loss.workspaceId === null ? { creator_user_id: loss.userId } : { creator_user_id: loss.userId, workspace_id: loss.workspaceId })),
  };
  const keys = await tx.apiKey.findMany({ where, select: { id: true, hash: true } });
  if (keys.length === 0) return [];
  await keepingManagementKey(tx, tenant, now, (tx) => tx.apiKey.updateMany({ where: { id: { in: keys.map((k) => k.id) } }, data: { disabled: true } }));
  return keys.map((k) => k.hash);
}

/**
 * Applies every group mapping of the organization to the current members of its group (see the
 * top of this file). Answers what was lost: each mapping-granted membership removed.
 */
async function reconcile(tx: Tx, tenant: Tenant): Promise<Loss[]> {
  const organization = await tx.organization.findUniqueOrThrow({ where: { id: tenant.organizationId }, select: { default_workspace_id: true } });
  const mappings = await tx.scimGroupMapping.findMany({
    where: { ...tenantWhere(tenant), workspace: { deleted_at: null } },
    select: { scim_group_id: true, workspace_id: true, role: true },
  });
  const groupIds = [...new Set(mappings.map((m) => m.scim_group_id))];
  const members = groupIds.length
    ? await tx.scimGroupMember.findMany({
        where: { ...tenantWhere(tenant), group_id: { in: groupIds }, user: { active: true } },
        select: { group_id: true, user: { select: { user_id: true } } },
      })
    : [];
  const byGroup = new Map<string, string[]>();
  for (const m of members) byGroup.set(m.group_id, [...(byGroup.get(m.group_id) ?? []), m.user.user_id]);

  // Desired memberships: user|workspace -> role (admin wins over member). The default workspace's
  // members are the organization's: nothing to grant there.
  const desired = new Map<string, { userId: string; workspaceId: string; role: 'admin' | 'member' }>();
  for (const mapping of mappings) {
    if (mapping.workspace_id === organization.default_workspace_id) continue;
    for (const userId of byGroup.get(mapping.scim_group_id) ?? []) {
      const key = `${userId}|${mapping.workspace_id}`;
      const known = desired.get(key);
      if (!known || mapping.role === 'admin')
        desired.set(key, { userId, workspaceId: mapping.workspace_id, role: known?.role === 'admin' ? 'admin' : mapping.role });
    }
  }

  const granted = await tx.workspaceMember.findMany({
    where: { ...tenantWhere(tenant), scim_granted: true },
    select: { id: true, user_id: true, workspace_id: true, role: true },
  });
  const losses: Loss[] = [];
  const gone: string[] = [];
  for (const row of granted) {
    const want = desired.get(`${row.user_id}|${row.workspace_id}`);
    if (!want) {
      gone.push(row.id);
      losses.push({ userId: row.user_id, workspaceId: row.workspace_id });
    } else {
      if (want.role !== row.role) await tx.workspaceMember.update({ where: { id: row.id }, data: { role: want.role } });
      desired.delete(`${row.user_id}|${row.workspace_id}`);
    }
  }
  if (gone.length) await tx.workspaceMember.deleteMany({ where: { id: { in: gone } } });
  // A membership made by hand stays as it is (skipDuplicates on (workspace_id, user_id)).
  if (desired.size) {
    await tx.workspaceMember.createMany({
      data: [...desired.values()].map((d) => ({ ...tenantData(tenant), workspace_id: d.workspaceId, user_id: d.userId, role: d.role, scim_granted: true })),
      skipDuplicates: true,
    });
  }
  return losses;
}

/** Removes every workspace membership of a person (deactivated or deleted) and notes that their keys are to be disabled. */
async function deactivate(tx: Tx, tenant: Tenant, userId: string, losses: Loss[]) {
  await tx.workspaceMember.deleteMany({ where: { ...tenantWhere(tenant), user_id: userId } });
  losses.push({ userId, workspaceId: null });
}

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

export async function createUser(db: Db, tenant: Tenant, body: unknown, now: Date, base: string, audit: Audit) {
  const resource = parseResource('User', body);
  const email = emailOf(resource);
  const { result, effects } = await directoryWrite(db, tenant, now, async (tx, losses) => {
    const userId = await personFor(tx, tenant, email, resource);
    await assertUserNameFree(tx, tenant, resource.userName as string, userId);
    const columns = userColumns(resource);
    const row = await tx.scimUser.create({ data: { ...tenantData(tenant), user_id: userId, ...columns, created_at: now, updated_at: now } });
    if (!columns.active) await deactivate(tx, tenant, userId, losses);
    await appendAudit(tx, audit, {
      action: 'scimUsers.create',
      targetType: 'scim_user',
      targetId: row.id,
      changes: created(auditedUser(columns, email, userId)),
    });
    return row.id;
  });
  return { resource: await getUser(db, tenant, result, base), effects };
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

export async function replaceUser(db: Db, tenant: Tenant, id: string, body: unknown, now: Date, base: string, audit: Audit) {
  const resource = parseResource('User', body);
  const { effects } = await directoryWrite(db, tenant, now, async (tx, losses) => {
    const current = await findUser(tx, tenant, id);
    await writeUser(tx, tenant, current, resource, now, losses, audit, 'scimUsers.replace');
  });
  return { resource: await getUser(db, tenant, id, base), effects };
}

export async function patchUser(db: Db, tenant: Tenant, id: string, body: unknown, now: Date, base: string, audit: Audit) {
  const { effects } = await directoryWrite(db, tenant, now, async (tx, losses) => {
    const current = await findUser(tx, tenant, id);
    const { groups: _groups, meta: _meta, ...representation } = userResource(current, base);
    const patched = await applyPatch('User', representation, body);
    await writeUser(tx, tenant, current, parseResource('User', { ...patched, schemas: [USER_SCHEMA] }), now, losses, audit, 'scimUsers.update');
  });
  return { resource: await getUser(db, tenant, id, base), effects };
}

export async function deleteUser(db: Db, tenant: Tenant, id: string, now: Date, audit: Audit) {
  const { effects } = await directoryWrite(db, tenant, now, async (tx, losses) => {
    const current = await findUser(tx, tenant, id);
    await tx.scimUser.delete({ where: { id: current.id } });
    await deactivate(tx, tenant, current.user_id, losses);
    await appendAudit(tx, audit, {
      action: 'scimUsers.delete',
      targetType: 'scim_user',
      targetId: current.id,
      changes: removed({ user_name: current.user_name, email: current.org_member.user.email, user_id: current.user_id }),
    });
  });
  return { effects };
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

export async function createGroup(db: Db, tenant: Tenant, body: unknown, now: Date, base: string, audit: Audit) {
  const resource = parseResource('Group', body);
  const { result, effects } = await directoryWrite(db, tenant, now, async (tx) => {
    const ids = await memberIds(tx, tenant, resource);
    const row = await tx.scimGroup.create({ data: { ...tenantData(tenant), ...groupColumns(resource), created_at: now, updated_at: now } });
    const members = await setMembers(tx, tenant, row.id, ids, now);
    await auditGroup(tx, audit, 'scimGroups.create', row.id, null, groupColumns(resource), members);
    return row.id;
  });
  return { resource: await getGroup(db, tenant, result, base), effects };
}

export async function replaceGroup(db: Db, tenant: Tenant, id: string, body: unknown, now: Date, base: string, audit: Audit) {
  const resource = parseResource('Group', body);
  const { effects } = await directoryWrite(db, tenant, now, async (tx) => {
    const current = await findGroup(tx, tenant, id);
    const ids = await memberIds(tx, tenant, resource);
    await tx.scimGroup.update({ where: { id: current.id }, data: { ...groupColumns(resource), updated_at: now } });
    const members = await setMembers(tx, tenant, current.id, ids, now);
    await auditGroup(tx, audit, 'scimGroups.replace', current.id, groupColumnsOf(current), groupColumns(resource), members);
  });
  return { resource: await getGroup(db, tenant, id, base), effects };
}

export async function patchGroup(db: Db, tenant: Tenant, id: string, body: unknown, now: Date, base: string, audit: Audit) {
  const { effects } = await directoryWrite(db, tenant, now, async (tx) => {
    // Read under the organization's lock: a concurrent PATCH of the group has committed or waits.
    const current = await findGroup(tx, tenant, id);
    const { meta: _meta, ...representation } = groupResource(current, base);
    const patched = await applyPatch('Group', representation, body);
    const resource = parseResource('Group', { ...patched, schemas: [GROUP_SCHEMA] });
    const ids = await memberIds(tx, tenant, resource);
    await tx.scimGroup.update({ where: { id: current.id }, data: { ...groupColumns(resource), updated_at: now } });
    const members = await setMembers(tx, tenant, current.id, ids, now);
    await auditGroup(tx, audit, 'scimGroups.update', current.id, groupColumnsOf(current), groupColumns(resource), members);
  });
  return { resource: await getGroup(db, tenant, id, base), effects };
}

export async function deleteGroup(db: Db, tenant: Tenant, id: string, now: Date, audit: Audit) {
  const { effects } = await directoryWrite(db, tenant, now, async (tx) => {
    const current = await findGroup(tx, tenant, id);
    await tx.scimGroup.delete({ where: { id: current.id } });
    await appendAudit(tx, audit, {
      action: 'scimGroups.delete',
      targetType: 'scim_group',
      targetId: current.id,
      changes: { ...removed(groupColumnsOf(current)), members_removed: current.members.map((m) => m.user.id) },
    });
  });
  return { effects };
}

// ---- For the management API and the sync job ----

/**
 * Applies every group mapping of the organization again (a sync job calls this): the current
 * members of each mapped group get the mapped role, grants of groups that no longer exist go.
 * synced_groups: mapped groups that exist; deleted_groups: mapped group ids that name no group.
 */
export async function applyScimMappings(db: Db, tenant: Tenant, now: Date): Promise<{ synced_groups: number; deleted_groups: number } & WriteEffects> {
  const { result, effects } = await directoryWrite(db, tenant, now, async (tx) => {
    const mapped = [
      ...new Set((await tx.scimGroupMapping.findMany({ where: tenantWhere(tenant), select: { scim_group_id: true } })).map((m) => m.scim_group_id)),
    ];
    const existing = mapped.length ? await tx.scimGroup.count({ where: { ...tenantWhere(tenant), id: { in: mapped } } }) : 0;
    return { synced_groups: existing, deleted_groups: mapped.length - existing };
  });
  return { ...result, ...effects };
}

/**
 * A change of the mappings (A28 create, A30 role change, A31 delete): applied to the groups'
 * current members at once. Runs `change` under the same lock as the directory's writes.
 * keep_members=true (A31) first marks the memberships the mapping granted as made by hand.
 */
export async function changeMappings<T>(db: Db, tenant: Tenant, now: Date, change: (tx: Tx) => Promise<T>): Promise<{ result: T; effects: WriteEffects }> {
  return directoryWrite(db, tenant, now, change);
}

/** Marks the memberships this mapping grants (its workspace, its group's members) as kept by hand. */
export async function keepMappingMembers(tx: Tx, tenant: Tenant, mapping: { workspace_id: string; scim_group_id: string }) {
  const members = await tx.scimGroupMember.findMany({
    where: { ...tenantWhere(tenant), group_id: mapping.scim_group_id },
    select: { user: { select: { user_id: true } } },
  });
  if (members.length === 0) return;
  await tx.workspaceMember.updateMany({
    where: { ...tenantWhere(tenant), workspace_id: mapping.workspace_id, scim_granted: true, user_id: { in: members.map((m) => m.user.user_id) } },
    data: { scim_granted: false },
  });
}

/** D14: the organization's SCIM groups, oldest first; 404 when it has no SCIM directory (no groups and no mappings). */
export async function listScimGroups(db: Db, actor: Actor, input: ListScimGroupsInput): Promise<{ data: ScimGroup[]; total_count: number }> {
  const where = tenantWhere(actor);
  const offset = input.offset ?? 0;
  const [rows, total, mappings] = await Promise.all([
    db.scimGroup.findMany({ where, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], skip: offset, take: input.limit }),
    db.scimGroup.count({ where }),
    db.scimGroupMapping.count({ where }),
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
