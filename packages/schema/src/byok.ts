import { z } from 'zod';
import { IdentifierSchema, TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
import { WorkspaceRefSchema } from './workspaces.js';

const nullableList = z.array(z.string()).nullable();

export const ByokCredentialSchema = z
  .object({
    id: z.string(),
    workspace_id: z.string().nullable().describe('null: usable in every workspace'),
    name: z.string().nullable(),
    label: z.string().describe('Masked provider key: first 3 characters, "...", last 4; never more than a quarter of the key'),
    provider: z.string().describe('Lowercase provider slug (open set)'),
    disabled: z.boolean(),
    is_fallback: z.boolean(),
    sort_order: z.number().int(),
    allowed_api_key_hashes: nullableList,
    allowed_models: nullableList,
    allowed_user_ids: nullableList,
    declared_zdr: z.boolean().nullable(),
    is_byok_only: z.boolean(),
    is_required: z.boolean(),
    created_at: TimestampSchema,
  })
  .describe('A bring-your-own-key provider credential; the provider key itself is never returned');
export type ByokCredential = z.infer<typeof ByokCredentialSchema>;

export const GetByokInputSchema = z.object({ id: IdentifierSchema.describe('Credential UUID') });
export const ByokOutputSchema = dataOf(ByokCredentialSchema);

/** A provider key: at least 8 characters; its masked label reveals at most a quarter of it. */
const ProviderKeySchema = z.string().min(8).max(4096);

const ProviderSlugSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, 'a lowercase provider slug')
  .describe('Lowercase provider slug (open set), e.g. openai, anthropic, amazon-bedrock');

const byokOptions = {
  name: z.string().min(1).max(200).nullable().optional(),
  disabled: z.boolean().optional(),
  is_fallback: z.boolean().optional().describe('Used only after the non-fallback credentials of the provider'),
  is_byok_only: z.boolean().optional().describe("The provider's shared capacity is never used; non-fallback credentials only"),
  is_required: z.boolean().optional().describe('Shared capacity is not used for the models this credential covers'),
  declared_zdr: z.boolean().nullable().optional(),
  allowed_api_key_hashes: z
    .array(z.string().regex(/^[0-9a-f]{64}$/))
    .min(1)
    .max(1000)
    .nullable()
    .optional()
    .describe("null = any key; else at least one hash of the organization's keys"),
  allowed_models: z.array(z.string().min(1)).max(1000).nullable().optional(),
  allowed_user_ids: z.array(IdentifierSchema).max(1000).nullable().optional(),
  sort_order: z.number().int().min(0).max(1_000_000).optional().describe("Routing order within the provider (this API's addition)"),
};

const notFallbackAndByokOnly = (input: { is_fallback?: boolean; is_byok_only?: boolean }) => !(input.is_fallback && input.is_byok_only);
const FALLBACK_BYOK_ONLY = { message: 'is_fallback cannot be combined with is_byok_only', path: ['is_byok_only'] };

/** POST /byok (A24): store a provider key, encrypted at rest. */
export const CreateByokInputSchema = z
  .object({
    provider: ProviderSlugSchema,
    key: ProviderKeySchema.describe('The provider secret; stored encrypted, never returned'),
    workspace_id: WorkspaceRefSchema.nullable()
      .optional()
      .describe('UUID or slug; default: the default workspace; null: usable in every workspace of the organization'),
    ...byokOptions,
  })
  .refine(notFallbackAndByokOnly, FALLBACK_BYOK_ONLY);
export type CreateByokInput = z.infer<typeof CreateByokInputSchema>;

/** PATCH /byok/{id} (A26): every field optional; `key` rotates the secret in place; null clears an allowlist. */
export const UpdateByokInputSchema = z
  .object({
    id: IdentifierSchema.describe('Credential UUID'),
    key: ProviderKeySchema.optional().describe('A new provider secret: replaces the old material; label is recomputed'),
    ...byokOptions,
  })
  .refine(notFallbackAndByokOnly, FALLBACK_BYOK_ONLY);
export type UpdateByokInput = z.infer<typeof UpdateByokInputSchema>;

/**
 * GET /byok (A25): a workspace's credentials in routing order (provider, sort_order), with the
 * organization's credentials for every workspace (workspace_id null), which apply there too.
 */
export const ListByokInputSchema = z.object({
  ...paginationQuery({ defaultLimit: 50, maxLimit: 100 }),
  workspace_id: WorkspaceRefSchema.optional().describe('UUID or slug; default: the default workspace'),
  provider: ProviderSlugSchema.optional().describe('Only this provider'),
});
export type ListByokInput = z.infer<typeof ListByokInputSchema>;
export const ListByokOutputSchema = listOf(ByokCredentialSchema);
