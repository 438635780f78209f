import { z } from 'zod';
import { TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
import { UuidSchema, WorkspaceRefSchema, WorkspaceRoleSchema } from './workspaces.js';

export const ScimGroupMappingSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    workspace_id: z.string(),
    scim_group_id: z.string(),
    role: WorkspaceRoleSchema,
    created_at: TimestampSchema.describe('With millisecond fraction'),
    updated_at: TimestampSchema.describe('With millisecond fraction'),
  })
  .describe('Maps a SCIM group to a workspace role');
export type ScimGroupMapping = z.infer<typeof ScimGroupMappingSchema>;

export const UpdateScimGroupMappingInputSchema = z.object({
  id: UuidSchema.describe('Mapping UUID'),
  role: WorkspaceRoleSchema,
});
export type UpdateScimGroupMappingInput = z.infer<typeof UpdateScimGroupMappingInputSchema>;
export const ScimGroupMappingOutputSchema = dataOf(ScimGroupMappingSchema);

/** Internal (tRPC): map a SCIM group to a workspace. */
export const CreateScimGroupMappingInputSchema = z.object({
  workspace_id: WorkspaceRefSchema,
  scim_group_id: UuidSchema,
  role: WorkspaceRoleSchema.default('member'),
});
export type CreateScimGroupMappingInput = z.infer<typeof CreateScimGroupMappingInputSchema>;

/** Internal (tRPC): the SCIM group mappings of a workspace, oldest first. */
export const ListScimGroupMappingsInputSchema = z.object({
  workspace_id: WorkspaceRefSchema,
  ...paginationQuery({ defaultLimit: 50, maxLimit: 100 }),
});
export type ListScimGroupMappingsInput = z.infer<typeof ListScimGroupMappingsInputSchema>;
export const ListScimGroupMappingsOutputSchema = listOf(ScimGroupMappingSchema);
