import { z } from 'zod';
import { IdentifierSchema, QueryBooleanSchema, TimestampSchema, listOf, paginationQuery } from './common.js';

/** Any RFC 4122-shaped UUID (PostgreSQL's uuid type accepts every version). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const UuidSchema = z.string().regex(UUID_PATTERN, 'must be a UUID');

/** Workspace slugs: lowercase letters, digits and dashes; never UUID-shaped (that would be ambiguous). */
export const WorkspaceSlugSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, 'lowercase letters, digits and inner dashes')
  .refine((slug) => !UUID_PATTERN.test(slug), 'a slug must not look like a UUID');

export const WorkspaceRefSchema = IdentifierSchema.describe('Workspace UUID or slug');

export const WorkspaceRoleSchema = z.enum(['admin', 'member']);
export type WorkspaceRole = z.infer<typeof WorkspaceRoleSchema>;

export const WorkspaceMemberSchema = z
  .object({
    id: z.string().describe('Membership id (UUID)'),
    workspace_id: z.string().describe('Workspace UUID'),
    user_id: z.string(),
    role: WorkspaceRoleSchema,
    created_at: TimestampSchema,
  })
  .describe('A member of a workspace');
export type WorkspaceMember = z.infer<typeof WorkspaceMemberSchema>;

export const ListWorkspaceMembersInputSchema = z.object({
  id: WorkspaceRefSchema,
  ...paginationQuery({ defaultLimit: 50, maxLimit: 100 }),
});
export type ListWorkspaceMembersInput = z.infer<typeof ListWorkspaceMembersInputSchema>;
export const ListWorkspaceMembersOutputSchema = listOf(WorkspaceMemberSchema);

export const AddWorkspaceMembersInputSchema = z.object({
  id: WorkspaceRefSchema,
  user_ids: z.array(IdentifierSchema).min(1).max(100).describe('Organization members to add (1 to 100)'),
});
export type AddWorkspaceMembersInput = z.infer<typeof AddWorkspaceMembersInputSchema>;
export const AddWorkspaceMembersOutputSchema = z.object({
  added_count: z.number().int().describe('Memberships this call created'),
  data: z.array(WorkspaceMemberSchema).describe('The memberships this call created'),
});

/** The Workspace record of admin-api.md (A6–A9). `is_default` is this API's addition. */
export const WorkspaceSchema = z
  .object({
    id: z.string().describe('UUID'),
    name: z.string(),
    slug: z.string().describe('Unique in the organization'),
    description: z.string().nullable(),
    created_at: TimestampSchema,
    updated_at: TimestampSchema.nullable(),
    created_by: z.string().nullable().describe('User id'),
    default_guardrail_id: z.string().describe('Derived from the workspace id; the guardrail exists after its first write'),
    default_text_model: z.string().nullable(),
    default_image_model: z.string().nullable(),
    default_provider_sort: z.string().nullable(),
    io_logging_api_key_ids: z.array(z.number().int()).nullable().describe('null = every key is logged'),
    io_logging_sampling_rate: z.number(),
    is_data_discount_logging_enabled: z.boolean(),
    is_observability_broadcast_enabled: z.boolean(),
    is_observability_io_logging_enabled: z.boolean(),
    disabled_server_tools: z.array(z.string()).nullable().describe('null = none disabled'),
    include_byok_in_budgets: z.boolean().describe('Changed only through PUT /workspaces/{workspace_ref}/budgets/{interval}'),
    is_default: z.boolean().describe("The organization's default workspace (this API's addition)"),
  })
  .describe('A workspace of the organization');
export type Workspace = z.infer<typeof WorkspaceSchema>;
export const WorkspaceOutputSchema = z.object({ data: WorkspaceSchema });

const workspaceSettings = {
  description: z.string().max(2000).nullable().optional(),
  default_text_model: z.string().min(1).max(300).nullable().optional().describe('Model id'),
  default_image_model: z.string().min(1).max(300).nullable().optional().describe('Model id'),
  default_provider_sort: z.string().min(1).max(100).nullable().optional().describe('e.g. price, throughput, latency, exacto'),
  disabled_server_tools: z
    .array(
      z
        .string()
        .regex(/^[^\s:]+:[^\s:]+$/, '<platform>:<tool>')
        .max(200),
    )
    .max(100)
    .nullable()
    .optional()
    .describe('Server tools requests in the workspace may not call; empty or null clears the list'),
  io_logging_api_key_ids: z.array(z.number().int()).max(10_000).nullable().optional(),
  io_logging_sampling_rate: z.number().min(0.0001).max(1).optional().describe('0.0001..1; 1 = every request'),
  is_data_discount_logging_enabled: z.boolean().optional(),
  is_observability_broadcast_enabled: z.boolean().optional(),
  is_observability_io_logging_enabled: z.boolean().optional(),
};

/** POST /workspaces (A6). */
export const CreateWorkspaceInputSchema = z.object({
  name: z.string().min(1).max(200),
  slug: WorkspaceSlugSchema.describe('Lowercase alphanumeric segments joined by single hyphens'),
  ...workspaceSettings,
});
export type CreateWorkspaceInput = z.infer<typeof CreateWorkspaceInputSchema>;

/** PATCH /workspaces/{id} (A9): the fields of A6, all optional. */
export const UpdateWorkspaceInputSchema = z.object({
  id: WorkspaceRefSchema,
  name: z.string().min(1).max(200).optional(),
  slug: WorkspaceSlugSchema.optional(),
  ...workspaceSettings,
});
export type UpdateWorkspaceInput = z.infer<typeof UpdateWorkspaceInputSchema>;

export const WorkspaceRefInputSchema = z.object({ id: WorkspaceRefSchema });

/** DELETE /workspaces/{id} (A10). */
export const DeleteWorkspaceInputSchema = z.object({
  id: WorkspaceRefSchema,
  confirm_default_workspace_deletion: QueryBooleanSchema.optional().describe('Accepted; the default workspace cannot be deleted here (400) either way'),
});
export type DeleteWorkspaceInput = z.infer<typeof DeleteWorkspaceInputSchema>;

/** POST /workspaces/{id}/members/remove (A11). */
export const RemoveWorkspaceMembersInputSchema = z.object({
  id: WorkspaceRefSchema,
  user_ids: z.array(z.string().min(1)).min(1).max(100).describe('Members to remove (1 to 100)'),
});
export type RemoveWorkspaceMembersInput = z.infer<typeof RemoveWorkspaceMembersInputSchema>;
export const RemoveWorkspaceMembersOutputSchema = z.object({ removed_count: z.number().int() });

export const ListWorkspacesInputSchema = z.object(paginationQuery({ defaultLimit: 50, maxLimit: 100 }));
export const ListWorkspacesOutputSchema = listOf(WorkspaceSchema);
