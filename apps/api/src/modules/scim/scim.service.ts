// SCIM group mappings: a SCIM group maps to a workspace with a role.
import type { Db, ScimGroupMapping as MappingRow } from '@switchyard/db';
import type {
  CreateScimGroupMappingInput,
  DeleteScimGroupMappingInput,
  ListScimGroupMappingsInput,
  ScimGroupMapping,
  ScimGroupMappingIdInput,
  UpdateScimGroupMappingInput,
} from '@switchyard/schema';
import { Conflict, NotFound } from '../../lib/errors.js';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import { assertRoleWithin } from '../../access/ceiling.js';
import { findOwned, resolveWorkspace } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfTenant, changedFields, created, removed } from '../audit/audit.js';
import { pageOf } from '../pages.js';
import { changeMappings, forgetDisabledKeys, keepMappingMembers } from './directory-writes.js';

function mappingOf(row: MappingRow): ScimGroupMapping {
  return {
    id: row.id,
    organization_id: row.organization_id,
    workspace_id: row.workspace_id,
    scim_group_id: row.scim_group_id,
    role: row.role,
    // toISOString always carries the millisecond fraction the contract asks for.
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } satisfies ScimGroupMapping;
}

/** The organization's mappings across all its workspaces, oldest first. */
export async function listScimGroupMappings(deps: Uses<'db'>, actor: Actor, input: ListScimGroupMappingsInput) {
  const { db } = deps;
  const where = tenantWhere(actor);
  return pageOf(
    input,
    (slice) => db.scimGroupMapping.findMany({ where, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], ...slice }),
    () => db.scimGroupMapping.count({ where }),
    mappingOf,
  );
}

/** The organization's mapping with this id; a non-UUID, unknown or foreign id is 404. */
async function findMapping(db: Db, actor: Actor, id: string): Promise<MappingRow> {
  return findOwned(actor, 'scim group mapping', id, (where) => db.scimGroupMapping.findFirst({ where }));
}

export async function getScimGroupMapping(deps: Uses<'db'>, actor: Actor, input: ScimGroupMappingIdInput): Promise<ScimGroupMapping> {
  return mappingOf(await findMapping(deps.db, actor, input.id));
}

/**
 * Maps a group to a workspace (UUID or slug) with a role. The same mapping again (same role) succeeds
 * and answers the stored one; another role for a mapped group and workspace is 409 (change it with
 * PATCH). The write runs under the organization's lock (directory-writes.ts), so concurrent creates
 * of one pair make one row. The mapping then applies to the group's current members: they get the
 * role in the workspace. Its audit entry commits with it; this process forgets the keys it disabled.
 */
export async function createScimGroupMapping(deps: Uses<'db' | 'keys' | Audited>, actor: Actor, input: CreateScimGroupMappingInput): Promise<ScimGroupMapping> {
  const { db } = deps;
  // A mapping grants its role to the group's members: nobody grants a role above their own (access/ceiling.ts).
  if (input.role === 'admin') assertRoleWithin(actor, 'workspace:admin');
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  const workspace = await resolveWorkspace(db, actor, input.workspace_id);
  const pair = { workspace_id: workspace.id, scim_group_id: input.scim_group_id.toLowerCase() };
  const { result: row, effects } = await changeMappings(db, actor, now, async (tx) => {
    const [made] = await tx.scimGroupMapping.createManyAndReturn({
      data: [{ ...pair, ...tenantData(actor), role: input.role, created_at: now, updated_at: now }],
      skipDuplicates: true,
    });
    const row = made ?? (await tx.scimGroupMapping.findUniqueOrThrow({ where: { workspace_id_scim_group_id: pair } }));
    if (row.role !== input.role) {
      throw new Conflict(`the group is already mapped to this workspace as ${row.role}`, {
        reason: 'mapping exists with another role',
        mapping_id: row.id,
        role: row.role,
      });
    }
    // The same mapping again changes nothing: its entry says so (no fields).
    await appendAudit(tx, audit, {
      action: 'scim.createGroupMapping',
      targetType: 'scim_group_mapping',
      targetId: row.id,
      changes: made ? created(auditedMapping(row)) : { after: {} },
    });
    return row;
  });
  forgetDisabledKeys(deps.keys, effects);
  return mappingOf(row);
}

/** An entry's view of a mapping: what it maps, without its timestamps. */
function auditedMapping(row: MappingRow): Record<string, unknown> {
  return { workspace_id: row.workspace_id, scim_group_id: row.scim_group_id, role: row.role };
}

/**
 * Deletes the mapping. keep_members=false removes from the workspace the members this mapping
 * granted (unless another mapping grants them too; memberships made by hand are never removed), and
 * disables their keys there; keep_members=true keeps them as members made by hand.
 */
export async function deleteScimGroupMapping(deps: Uses<'db' | 'keys' | Audited>, actor: Actor, input: DeleteScimGroupMappingInput) {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const found = await findMapping(db, actor, input.id);
  const { effects } = await changeMappings(db, actor, audit.at, async (tx) => {
    // Read under the organization's lock, as updateScimGroupMapping does: its role is the one deleted.
    const row = await tx.scimGroupMapping.findFirst({ where: { id: found.id, ...tenantWhere(actor) } });
    if (!row) throw new NotFound(`scim group mapping ${input.id}`);
    // Deleting an admin mapping takes admin from the group's members, or (keep_members) makes their
    // admin role one the directory no longer governs: an admin's act, as changing its role is.
    if (row.role === 'admin') assertRoleWithin(actor, 'workspace:admin');
    if (input.keep_members === 'true') await keepMappingMembers(tx, actor, row);
    const { count } = await tx.scimGroupMapping.deleteMany({ where: { id: row.id } });
    if (count === 0) throw new NotFound(`scim group mapping ${input.id}`);
    await appendAudit(tx, audit, {
      action: 'scim.deleteGroupMapping',
      targetType: 'scim_group_mapping',
      targetId: row.id,
      changes: { ...removed(auditedMapping(row)), keep_members: input.keep_members === 'true' },
    });
  });
  forgetDisabledKeys(deps.keys, effects);
  return { deleted: true as const };
}

/** Changes the role (and updated_at) of the organization's mapping, and of the memberships it granted; another organization's is 404. */
export async function updateScimGroupMapping(deps: Uses<'db' | 'keys' | Audited>, actor: Actor, input: UpdateScimGroupMappingInput): Promise<ScimGroupMapping> {
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  const { result: row, effects } = await changeMappings(deps.db, actor, now, async (tx) => {
    const where = { id: input.id.toLowerCase(), ...tenantWhere(actor) };
    // Read under the organization's lock: no other mapping write runs between this and the update.
    const before = await tx.scimGroupMapping.findFirst({ where });
    // Granting admin, or taking it from a group's members, is an admin's act.
    if (input.role === 'admin' || before?.role === 'admin') assertRoleWithin(actor, 'workspace:admin');
    const [row] = before ? await tx.scimGroupMapping.updateManyAndReturn({ where, data: { role: input.role, updated_at: now } }) : [];
    if (!before || !row) throw new NotFound(`scim group mapping ${input.id}`);
    await appendAudit(tx, audit, {
      action: 'scim.updateGroupMapping',
      targetType: 'scim_group_mapping',
      targetId: row.id,
      changes: changedFields(auditedMapping(before), auditedMapping(row), ['role']),
    });
    return row;
  });
  forgetDisabledKeys(deps.keys, effects);
  return mappingOf(row);
}
