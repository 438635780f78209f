import { z } from 'zod';
import { IdentifierSchema, TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
import { DataRegionSchema } from './keys.js';
import { WorkspaceRefSchema } from './workspaces.js';

export const GuardrailResetIntervalSchema = z.enum(['daily', 'weekly', 'monthly']);

export const CustomContentFilterSchema = z.object({
  pattern: z.string().min(1).max(1000).describe('A regular expression'),
  action: z.string().min(1).max(50).describe('redact, block or flag (open set)'),
  label: z.string().max(200).nullable().optional(),
});
export const BuiltinContentFilterSchema = z.object({
  slug: z.string().min(1).max(100).describe('email, phone, ssn, credit-card, ip-address, secrets, person-name, address, regex-prompt-injection (open set)'),
  action: z.string().min(1).max(50).describe('redact, block or flag (open set)'),
  scan_scope: z.enum(['user_only', 'all_messages']).optional().describe('regex-prompt-injection only; default all_messages'),
  label: z.string().max(200).optional().describe('Assigned by the server; ignored on input'),
});

/** The fields admin-api.md adds to the Guardrail record: optional, and null when unset. */
const zdrAndTrainingFields = {
  enforce_zdr_anthropic: z.boolean().nullable(),
  enforce_zdr_openai: z.boolean().nullable(),
  enforce_zdr_google: z.boolean().nullable(),
  enforce_zdr_xai: z.boolean().nullable(),
  enforce_zdr_other: z.boolean().nullable(),
  enable_free_model_publication: z.boolean().nullable(),
  enable_free_model_training: z.boolean().nullable(),
  enable_paid_model_training: z.boolean().nullable(),
};
export const GUARDRAIL_FLAG_FIELDS = Object.keys(zdrAndTrainingFields) as (keyof typeof zdrAndTrainingFields)[];

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
    enforce_zdr: z.boolean().describe('Deprecated: see the enforce_zdr_* fields'),
    limit_usd: z.number(),
    reset_interval: GuardrailResetIntervalSchema.nullable().describe('null: the limit never resets'),
    include_byok_in_budgets: z.boolean(),
    allowed_data_regions: z.array(DataRegionSchema).nullable().describe('null: unrestricted'),
    content_filters: z.array(CustomContentFilterSchema).nullable(),
    content_filter_builtins: z.array(BuiltinContentFilterSchema).nullable(),
    ...zdrAndTrainingFields,
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
const GuardrailIdSchema = IdentifierSchema.describe('Guardrail UUID');

export const ListGuardrailsInputSchema = z.object({
  ...page,
  workspace_id: WorkspaceRefSchema.optional().describe('Workspace UUID or slug; the default workspace when omitted'),
});
export type ListGuardrailsInput = z.infer<typeof ListGuardrailsInputSchema>;
export const ListGuardrailsOutputSchema = listOf(GuardrailSchema);

export const ListGuardrailAssignmentsInputSchema = z.object({ id: GuardrailIdSchema, ...page });
export type ListGuardrailAssignmentsInput = z.infer<typeof ListGuardrailAssignmentsInputSchema>;
export const ListGuardrailKeyAssignmentsOutputSchema = listOf(GuardrailKeyAssignmentSchema);
export const ListGuardrailMemberAssignmentsOutputSchema = listOf(GuardrailMemberAssignmentSchema);

/** GET /guardrails/assignments/keys and /members: every assignment of the organization. */
export const ListAllGuardrailAssignmentsInputSchema = z.object(page);
export type ListAllGuardrailAssignmentsInput = z.infer<typeof ListAllGuardrailAssignmentsInputSchema>;

export const GuardrailIdInputSchema = z.object({ id: GuardrailIdSchema });
export type GuardrailIdInput = z.infer<typeof GuardrailIdInputSchema>;

const stringList = z.array(z.string().min(1).max(200)).max(1000).nullable().optional();
const optionalFlag = z.boolean().nullable().optional();
const guardrailFields = {
  description: z.string().max(2000).nullable().optional(),
  limit_usd: z.number().nonnegative().max(1e15).nullable().optional().describe('USD; send together with reset_interval'),
  reset_interval: GuardrailResetIntervalSchema.nullable().optional().describe('Send together with limit_usd'),
  include_byok_in_budgets: z.boolean().optional(),
  allowed_models: stringList,
  ignored_models: stringList,
  allowed_providers: stringList,
  ignored_providers: stringList,
  allowed_data_regions: z.array(DataRegionSchema).max(3).nullable().optional(),
  enforce_zdr: optionalFlag.describe('Deprecated; copied into each enforce_zdr_* field that is not given'),
  enforce_zdr_anthropic: optionalFlag,
  enforce_zdr_openai: optionalFlag,
  enforce_zdr_google: optionalFlag,
  enforce_zdr_xai: optionalFlag,
  enforce_zdr_other: optionalFlag,
  enable_free_model_publication: optionalFlag,
  enable_free_model_training: optionalFlag,
  enable_paid_model_training: optionalFlag,
  content_filters: z.array(CustomContentFilterSchema).max(100).nullable().optional(),
  content_filter_builtins: z.array(BuiltinContentFilterSchema).max(100).nullable().optional(),
};

/** POST /guardrails. */
export const CreateGuardrailInputSchema = z.object({
  name: z.string().min(1).max(200),
  workspace_id: WorkspaceRefSchema.optional().describe('Workspace UUID or slug; the default workspace when omitted'),
  ...guardrailFields,
});
export type CreateGuardrailInput = z.infer<typeof CreateGuardrailInputSchema>;

/** PATCH /guardrails/{id}: the fields of POST except workspace_id, all optional; lists replace. */
export const UpdateGuardrailInputSchema = z.object({
  id: GuardrailIdSchema,
  name: z.string().min(1).max(200).optional(),
  ...guardrailFields,
});
export type UpdateGuardrailInput = z.infer<typeof UpdateGuardrailInputSchema>;
export const GuardrailOutputSchema = dataOf(GuardrailSchema);

/** POST /guardrails/{id}/assignments/keys (and /remove): keys by hash. */
export const GuardrailKeysInputSchema = z.object({
  id: GuardrailIdSchema,
  key_hashes: z.array(z.string().min(1).max(200)).min(1).max(100),
});
export type GuardrailKeysInput = z.infer<typeof GuardrailKeysInputSchema>;
/** POST /guardrails/{id}/assignments/members (and /remove): organization members by user id. */
export const GuardrailMembersInputSchema = z.object({
  id: GuardrailIdSchema,
  member_user_ids: z.array(IdentifierSchema).min(1).max(100),
});
export type GuardrailMembersInput = z.infer<typeof GuardrailMembersInputSchema>;

export const AssignGuardrailOutputSchema = z.object({ assigned_count: z.number().int() });
export const UnassignGuardrailOutputSchema = z.object({ unassigned_count: z.number().int() });
export const DeleteGuardrailOutputSchema = z.object({ deleted: z.literal(true) });
