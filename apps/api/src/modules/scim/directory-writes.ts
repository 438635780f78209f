// How the SCIM directory's writes apply (directory.service.ts, and the group mappings of
// scim.service.ts): each runs in one transaction under the organization's row lock (the lock the
// keys module's "last enabled management key" check takes), so that writes of one organization's
// directory apply one after the other (two PATCHes of one group both land) and nothing is
// half-written. After the write, the mappings are applied again to the whole organization
// (reconcile()):
// - a membership a mapping grants and the person lacks is made, marked scim_granted;
// - a scim_granted membership no mapping grants any more is removed, and the person's keys in that
//   workspace are disabled; its role follows the mapping's;
// - a membership made by hand (scim_granted false) is never changed or removed by a mapping.
// A change that would leave the organization without an enabled management key is refused whole
// (400) by the keys module's check. A change of the mappings made by a key disables only keys that
// key may disable (access/ceiling.ts), or is refused whole (403).
import type { Db, Prisma } from '@switchyard/db';
import type { Actor, KeyCache } from '../../access/callers.js';
import { assertMayActOnKey, type KeyAuthority } from '../../access/ceiling.js';
import { tenantData, tenantWhere, type Tenant } from '../../access/tenancy.js';
import { Invalid } from '../../lib/errors.js';
import { keepingManagementKey } from '../keys/management-key-guard.js';
import { ScimError } from './scim-protocol.js';

export type Tx = Prisma.TransactionClient;

/** What a write leaves for the caller to do once it committed: forget these key hashes in the key cache. */
export interface WriteEffects {
  disabledKeyHashes: string[];
}

/** After a directory write committed: this process's key cache forgets the keys it disabled (other processes hear it from the database). */
export function forgetDisabledKeys(keys: KeyCache, effects: WriteEffects): void {
  for (const hash of effects.disabledKeyHashes) keys.forget(hash);
}

/** A check of each key a write is about to disable; it throws to refuse the whole write. */
export type MayDisable = (key: KeyAuthority & { id: string }) => void;

/**
 * Runs `write` in a transaction under the organization's row lock, then applies the mappings again
 * and disables the keys of memberships lost. A key disabled is checked by `mayDisable` (when given)
 * and by the keys module's rule (the organization keeps an enabled management key), which refuse the
 * whole write otherwise.
 */
export async function directoryWrite<T>(
  db: Db,
  tenant: Tenant,
  now: Date,
  write: (tx: Tx, losses: Loss[]) => Promise<T>,
  mayDisable?: MayDisable,
): Promise<{ result: T; effects: WriteEffects }> {
  try {
    return await db.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT 1 FROM organizations WHERE id = ${tenant.organizationId} FOR UPDATE`;
        const losses: Loss[] = [];
        const result = await write(tx, losses);
        losses.push(...(await reconcile(tx, tenant)));
        const disabledKeyHashes = await disableKeys(tx, tenant, now, losses, mayDisable);
        await endSessions(tx, tenant, now, losses);
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
export type Loss = { userId: string; workspaceId: string | null };

/** Disables the live, enabled keys of each loss, each one checked by `mayDisable`, under the keys module's management-key rule. */
async function disableKeys(tx: Tx, tenant: Tenant, now: Date, losses: Loss[], mayDisable?: MayDisable): Promise<string[]> {
  if (losses.length === 0) return [];
  const where = {
    ...tenantWhere(tenant),
    disabled: false,
    deleted_at: null,
    OR: losses.map((loss) => (loss.workspaceId === null ? { creator_user_id: loss.userId } : { creator_user_id: loss.userId, workspace_id: loss.workspaceId })),
  };
  const keys = await tx.apiKey.findMany({ where, select: { id: true, hash: true, is_management_key: true, scopes: true } });
  if (keys.length === 0) return [];
  if (mayDisable) for (const key of keys) mayDisable(key);
  await keepingManagementKey(tx, tenant, now, (tx) => tx.apiKey.updateMany({ where: { id: { in: keys.map((k) => k.id) } }, data: { disabled: true } }));
  return keys.map((k) => k.hash);
}

/**
 * Ends the organization's sessions of each person deactivated or deleted, in the write's
 * transaction: a session of the identity provider reads the membership on each request, but a
 * deleted SCIM user stays a member, and nobody deprovisioned keeps a session (docs/sessions.md).
 */
async function endSessions(tx: Tx, tenant: Tenant, now: Date, losses: Loss[]): Promise<void> {
  const people = [...new Set(losses.filter((loss) => loss.workspaceId === null).map((loss) => loss.userId))];
  if (people.length === 0) return;
  await tx.session.updateMany({ where: { ...tenantWhere(tenant), user_id: { in: people }, ended_at: null }, data: { ended_at: now } });
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
export async function deactivate(tx: Tx, tenant: Tenant, userId: string, losses: Loss[]) {
  await tx.workspaceMember.deleteMany({ where: { ...tenantWhere(tenant), user_id: userId } });
  losses.push({ userId, workspaceId: null });
}

/**
 * A change of the mappings (A28 create, A30 role change, A31 delete) by a key: applied to the
 * groups' current members at once. Runs `change` under the same lock as the directory's writes.
 * keep_members=true (A31) first marks the memberships the mapping granted as made by hand. The keys
 * it disables are the caller's act: each must be one the caller may disable (the ceiling), or
 * nothing changes (403).
 */
export async function changeMappings<T>(db: Db, actor: Actor, now: Date, change: (tx: Tx) => Promise<T>): Promise<{ result: T; effects: WriteEffects }> {
  return directoryWrite(db, actor, now, change, (key) => assertMayActOnKey(actor, key, 'disable'));
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
