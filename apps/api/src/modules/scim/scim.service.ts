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
import { isUniqueViolation } from '../../db-errors.js';
import { Conflict, NotFound } from '../../errors.js';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import { findOwned, resolveWorkspace } from '../../access/workspaces.js';
import { pageOf } from '../pages.js';

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
export async function listScimGroupMappings(db: Db, actor: Actor, input: ListScimGroupMappingsInput) {
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

export async function getScimGroupMapping(db: Db, actor: Actor, input: ScimGroupMappingIdInput): Promise<ScimGroupMapping> {
  return mappingOf(await findMapping(db, actor, input.id));
}

/**
 * Maps a group to a workspace (UUID or slug) with a role. The same mapping again (same role) succeeds
 * and answers the stored one; another role for a mapped group and workspace is 409 (change it with
 * PATCH). Concurrent creates of one pair make one row (unique constraint).
 *
 * "Applies it again to the group's members": this service keeps no SCIM group membership (there is
 * no SCIM provisioning endpoint here), so there are no group members to apply it to.
 */
export async function createScimGroupMapping(db: Db, actor: Actor, input: CreateScimGroupMappingInput, now: Date): Promise<ScimGroupMapping> {
  const workspace = await resolveWorkspace(db, actor, input.workspace_id);
  const pair = { workspace_id: workspace.id, scim_group_id: input.scim_group_id.toLowerCase() };
  let row = await db.scimGroupMapping.findUnique({ where: { workspace_id_scim_group_id: pair } });
  if (!row) {
    try {
      row = await db.scimGroupMapping.create({
        data: { ...pair, ...tenantData(actor), role: input.role, created_at: now, updated_at: now },
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      row = await db.scimGroupMapping.findUniqueOrThrow({ where: { workspace_id_scim_group_id: pair } });
    }
  }
  if (row.role !== input.role) {
    throw new Conflict(`the group is already mapped to this workspace as ${row.role}`, {
      reason: 'mapping exists with another role',
      mapping_id: row.id,
      role: row.role,
    });
  }
  return mappingOf(row);
}

/**
 * Deletes the mapping. keep_members=false would remove the workspace members this mapping granted;
 * this service records no grants by SCIM (members are added only by POST /workspaces/{id}/members/add),
 * so no member came from a mapping and both values leave the workspace's members as they are.
 */
export async function deleteScimGroupMapping(db: Db, actor: Actor, input: DeleteScimGroupMappingInput) {
  // input.keep_members ('true' | 'false') changes nothing here: see above.
  const row = await findMapping(db, actor, input.id);
  const { count } = await db.scimGroupMapping.deleteMany({ where: { id: row.id } });
  if (count === 0) throw new NotFound(`scim group mapping ${input.id}`);
  return { deleted: true as const };
}

/** Changes the role (and updated_at) of the organization's mapping; another organization's is 404. */
export async function updateScimGroupMapping(db: Db, actor: Actor, input: UpdateScimGroupMappingInput, now: Date): Promise<ScimGroupMapping> {
  const [row] = await db.scimGroupMapping.updateManyAndReturn({
    where: { id: input.id.toLowerCase(), ...tenantWhere(actor) },
    data: { role: input.role, updated_at: now },
  });
  if (!row) throw new NotFound(`scim group mapping ${input.id}`);
  return mappingOf(row);
}
