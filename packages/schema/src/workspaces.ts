import { z } from 'zod';
import { IdentifierSchema, TimestampSchema, listOf, paginationQuery } from './common.js';

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

/** Internal (tRPC) workspace record. */
export const WorkspaceSchema = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  is_default: z.boolean(),
  include_byok_in_budgets: z.boolean(),
  created_at: TimestampSchema,
  updated_at: TimestampSchema,
});
export type Workspace = z.infer<typeof WorkspaceSchema>;

export const CreateWorkspaceInputSchema = z.object({
  slug: WorkspaceSlugSchema,
  name: z.string().min(1).max(200),
  description: z.string().max(2000).nullable().optional(),
  include_byok_in_budgets: z.boolean().optional(),
});
export type CreateWorkspaceInput = z.infer<typeof CreateWorkspaceInputSchema>;

export const UpdateWorkspaceInputSchema = z.object({
  id: WorkspaceRefSchema,
  slug: WorkspaceSlugSchema.optional(),
  name: z.string().min(1).max(200).optional(),
  description: z.string().max(2000).nullable().optional(),
  include_byok_in_budgets: z.boolean().optional(),
});
export type UpdateWorkspaceInput = z.infer<typeof UpdateWorkspaceInputSchema>;

export const ListWorkspacesInputSchema = z.object(paginationQuery({ defaultLimit: 50, maxLimit: 100 }));
export const ListWorkspacesOutputSchema = listOf(WorkspaceSchema);
