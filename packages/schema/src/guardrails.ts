import { z } from 'zod';
import { IdentifierSchema, TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
import { UuidSchema, WorkspaceRefSchema } from './workspaces.js';

export const GuardrailResetIntervalSchema = z.enum(['daily', 'weekly', 'monthly']);

export const GuardrailSchema = z
  .object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    description: z.string(),
    allowed_models: z.array(z.string()).nullable(),
    ignored_models: z.array(z.string()).nullable(),
    allowed_providers: z.array(z.string()).nullable(),
    ignored_providers: z.array(z.string()).nullable(),
    enforce_zdr: z.boolean(),
    limit_usd: z.number(),
    reset_interval: GuardrailResetIntervalSchema.nullable().describe('null: the limit never resets'),
    include_byok_in_budgets: z.boolean(),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .describe('A guardrail: model, provider and spend restrictions for the keys and members assigned to it');
export type Guardrail = z.infer<typeof GuardrailSchema>;

export const GuardrailKeyAssignmentSchema = z.object({
  id: z.string(),
  guardrail_id: z.string(),
  key_hash: z.string().describe("The key's SHA-256, its public identifier"),
  key_label: z.string().describe('Masked form of the key'),
  key_name: z.string(),
  assigned_by: z.string().describe('User id of who assigned it'),
  created_at: TimestampSchema,
});
export type GuardrailKeyAssignment = z.infer<typeof GuardrailKeyAssignmentSchema>;

export const GuardrailMemberAssignmentSchema = z.object({
  id: z.string(),
  guardrail_id: z.string(),
  user_id: z.string(),
  organization_id: z.string(),
  assigned_by: z.string().describe('User id of who assigned it'),
  created_at: TimestampSchema,
});
export type GuardrailMemberAssignment = z.infer<typeof GuardrailMemberAssignmentSchema>;

const page = paginationQuery({ defaultLimit: 50, maxLimit: 100 });

export const ListGuardrailsInputSchema = z.object({
  ...page,
  workspace_id: UuidSchema.optional().describe('Workspace UUID; the default workspace when omitted'),
});
export type ListGuardrailsInput = z.infer<typeof ListGuardrailsInputSchema>;
export const ListGuardrailsOutputSchema = listOf(GuardrailSchema);

export const ListGuardrailAssignmentsInputSchema = z.object({ id: IdentifierSchema.describe('Guardrail UUID'), ...page });
export type ListGuardrailAssignmentsInput = z.infer<typeof ListGuardrailAssignmentsInputSchema>;
export const ListGuardrailKeyAssignmentsOutputSchema = listOf(GuardrailKeyAssignmentSchema);
export const ListGuardrailMemberAssignmentsOutputSchema = listOf(GuardrailMemberAssignmentSchema);

const stringList = z.array(z.string().min(1).max(200)).max(1000).nullable().optional();
const guardrailFields = {
  description: z.string().max(2000).optional(),
  allowed_models: stringList,
  ignored_models: stringList,
  allowed_providers: stringList,
  ignored_providers: stringList,
  enforce_zdr: z.boolean().optional(),
  limit_usd: z.number().nonnegative().max(1e15).optional(),
  reset_interval: GuardrailResetIntervalSchema.nullable().optional(),
  include_byok_in_budgets: z.boolean().optional(),
};

/** Internal (tRPC): create a guardrail in a workspace. */
export const CreateGuardrailInputSchema = z.object({
  workspace_id: WorkspaceRefSchema.optional().describe("Defaults to the caller key's workspace"),
  name: z.string().min(1).max(200),
  ...guardrailFields,
});
export type CreateGuardrailInput = z.infer<typeof CreateGuardrailInputSchema>;

/** Internal (tRPC): change a guardrail. */
export const UpdateGuardrailInputSchema = z.object({
  id: IdentifierSchema,
  name: z.string().min(1).max(200).optional(),
  ...guardrailFields,
});
export type UpdateGuardrailInput = z.infer<typeof UpdateGuardrailInputSchema>;
export const GuardrailOutputSchema = dataOf(GuardrailSchema);

/** Internal (tRPC): bulk assign / unassign keys (by hash) and members (by user id). */
export const GuardrailKeysInputSchema = z.object({
  id: IdentifierSchema,
  key_hashes: z.array(IdentifierSchema).min(1).max(100),
});
export type GuardrailKeysInput = z.infer<typeof GuardrailKeysInputSchema>;
export const GuardrailMembersInputSchema = z.object({
  id: IdentifierSchema,
  user_ids: z.array(IdentifierSchema).min(1).max(100),
});
export type GuardrailMembersInput = z.infer<typeof GuardrailMembersInputSchema>;

export const AssignGuardrailKeysOutputSchema = z.object({
  assigned_count: z.number().int(),
  data: z.array(GuardrailKeyAssignmentSchema).describe('The assignments this call created'),
});
export const AssignGuardrailMembersOutputSchema = z.object({
  assigned_count: z.number().int(),
  data: z.array(GuardrailMemberAssignmentSchema).describe('The assignments this call created'),
});
export const UnassignGuardrailOutputSchema = z.object({ unassigned_count: z.number().int() });
