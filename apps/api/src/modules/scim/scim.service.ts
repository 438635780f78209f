// SCIM group mappings: a SCIM group maps to a workspace with a role.
import type { Db, ScimGroupMapping as MappingRow } from '@switchyard/db';
import type {
  CreateScimGroupMappingInput,
  ListScimGroupMappingsInput,
  ScimGroupMapping,
  UpdateScimGroupMappingInput,
} from '@switchyard/schema';
import { isUniqueViolation } from '../../db-errors.js';
import { Invalid, NotFound } from '../../errors.js';
import type { Actor } from '../../access/callers.js';
import { resolveWorkspace } from '../../access/workspaces.js';

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

/** Internal: the mappings of a workspace of the caller's organization, oldest first. */
export async function listScimGroupMappings(db: Db, actor: Actor, input: ListScimGroupMappingsInput) {
  const workspace = await resolveWorkspace(db, actor, input.workspace_id);
  const where = { workspace_id: workspace.id };
  const [rows, total] = await Promise.all([
    db.scimGroupMapping.findMany({ where, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], skip: input.offset, take: input.limit }),
    db.scimGroupMapping.count({ where }),
  ]);
  return { data: rows.map(mappingOf), total_count: total };
}

export async function createScimGroupMapping(db: Db, actor: Actor, input: CreateScimGroupMappingInput): Promise<ScimGroupMapping> {
  const workspace = await resolveWorkspace(db, actor, input.workspace_id);
  try {
    const row = await db.scimGroupMapping.create({
      data: {
        organization_id: actor.organizationId,
        workspace_id: workspace.id,
        scim_group_id: input.scim_group_id.toLowerCase(),
        role: input.role,
      },
    });
    return mappingOf(row);
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new Invalid('the group is already mapped to this workspace', { reason: 'mapping exists', scim_group_id: input.scim_group_id });
    }
    throw error;
  }
}

/** Changes the role (and updated_at) of the organization's mapping; another organization's is 404. */
export async function updateScimGroupMapping(db: Db, actor: Actor, input: UpdateScimGroupMappingInput): Promise<ScimGroupMapping> {
  const [row] = await db.scimGroupMapping.updateManyAndReturn({
    where: { id: input.id.toLowerCase(), organization_id: actor.organizationId },
    data: { role: input.role, updated_at: new Date() },
  });
  if (!row) throw new NotFound(`scim group mapping ${input.id}`);
  return mappingOf(row);
}
