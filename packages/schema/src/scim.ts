import { z } from 'zod';
import { IdentifierSchema, TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
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

/** POST /scim/group-mappings. */
export const CreateScimGroupMappingInputSchema = z.object({
  scim_group_id: UuidSchema.describe('SCIM group UUID'),
  workspace_id: WorkspaceRefSchema,
  role: WorkspaceRoleSchema,
});
export type CreateScimGroupMappingInput = z.infer<typeof CreateScimGroupMappingInputSchema>;

/** GET /scim/group-mappings: the organization's mappings across all workspaces, oldest first. */
export const ListScimGroupMappingsInputSchema = z.object(paginationQuery({ defaultLimit: 50, maxLimit: 100 }));
export type ListScimGroupMappingsInput = z.infer<typeof ListScimGroupMappingsInputSchema>;
export const ListScimGroupMappingsOutputSchema = listOf(ScimGroupMappingSchema);

export const ScimGroupMappingIdInputSchema = z.object({ id: z.string().min(1).describe('Mapping UUID') });
export type ScimGroupMappingIdInput = z.infer<typeof ScimGroupMappingIdInputSchema>;

/**
 * A boolean query parameter, sent as `true` or `false` (over tRPC too). Not z.coerce.boolean(), which
 * reads the string "false" as true; and trpc-to-openapi takes only plain scalar types in a query.
 */
export const QueryFlagSchema = z.enum(['true', 'false']);

/** DELETE /scim/group-mappings/{id}?keep_members=true|false (required). */
export const DeleteScimGroupMappingInputSchema = z.object({
  id: z.string().min(1).describe('Mapping UUID'),
  keep_members: QueryFlagSchema.describe(
    'Required. false removes from the workspace the members this mapping granted; true keeps them as manually managed members',
  ),
});
export type DeleteScimGroupMappingInput = z.infer<typeof DeleteScimGroupMappingInputSchema>;
export const DeleteScimGroupMappingOutputSchema = z.object({ deleted: z.literal(true) });

/** A SCIM group (platform-api.md D14): provisioned by the organization's identity provider over /scim/v2. */
export const ScimGroupSchema = z
  .object({
    id: z.string().describe('The group id (a UUID); what scim_group_id of a SCIM group mapping refers to'),
    organization_id: z.string(),
    display_name: z.string(),
    external_id: z.string().nullable().describe("The identity provider's own id for the group"),
    created_at: TimestampSchema.describe('With millisecond fraction'),
    updated_at: TimestampSchema.describe('With millisecond fraction'),
  })
  .describe('A SCIM group of the organization');
export type ScimGroup = z.infer<typeof ScimGroupSchema>;

/** GET /scim/groups (D14): offset (>= 0 or null, default 0), limit (1..100, default 50). */
export const ListScimGroupsInputSchema = z.object({
  offset: z.number().int().min(0).nullish().describe('Number of groups to skip (default 0)'),
  limit: z.number().int().min(1).max(100).default(50).describe('Maximum groups to return (1..100)'),
});
export type ListScimGroupsInput = z.infer<typeof ListScimGroupsInputSchema>;
export const ListScimGroupsOutputSchema = listOf(ScimGroupSchema);

/** A SCIM bearer token of the organization (tRPC only): it authenticates /scim/v2 and nothing else. */
export const ScimTokenSchema = z.object({
  id: z.string().describe('Token id (UUID); what scim.revokeToken takes'),
  label: z.string().describe('Masked form of the token'),
  creator_user_id: z.string(),
  created_at: TimestampSchema,
  last_used_at: TimestampSchema.nullable(),
});
export type ScimToken = z.infer<typeof ScimTokenSchema>;
/** scim.createToken: the token itself, shown this once, and its record. */
export const CreateScimTokenOutputSchema = z.object({ token: z.string(), data: ScimTokenSchema });
export const ListScimTokensOutputSchema = z.object({ data: z.array(ScimTokenSchema) });
export const ScimTokenIdInputSchema = z.object({ id: z.string().min(1).max(200).describe('Token id') });
export type ScimTokenIdInput = z.infer<typeof ScimTokenIdInputSchema>;

/** A directory synchronization (platform-api.md D15, D16). */
export const SyncJobSchema = z
  .object({
    id: z.string(),
    status: z.string().describe('queued, running, succeeded, failed (open set)'),
    created_at: TimestampSchema,
    started_at: TimestampSchema.nullable().describe('null until it runs'),
    finished_at: TimestampSchema.nullable().describe('null until it ends'),
    synced_groups: z.number().int().nullable().describe('mapped groups whose members were given their mappings; set when the job succeeded'),
    deleted_groups: z.number().int().nullable().describe('mapped group ids that name no group any more, whose grants were removed; set when the job succeeded'),
    error_message: z.string().nullable().describe('a stable message, set when the job failed'),
  })
  .describe("A SCIM directory synchronization: every group mapping applied again to its group's current members");
export type SyncJob = z.infer<typeof SyncJobSchema>;
export const SyncJobOutputSchema = dataOf(SyncJobSchema);
export const GetSyncJobInputSchema = z.object({ id: IdentifierSchema });
