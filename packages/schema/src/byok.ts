import { z } from 'zod';
import { IdentifierSchema, TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
import { WorkspaceRefSchema } from './workspaces.js';

const nullableList = z.array(z.string()).nullable();

export const ByokCredentialSchema = z
  .object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    label: z.string().describe('Masked provider key: first 3 characters, "...", last 4; never more than a quarter of the key'),
    provider: z.string(),
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

const byokOptions = {
  name: z.string().min(1).max(200),
  is_fallback: z.boolean().optional(),
  sort_order: z.number().int().min(0).max(1_000_000).optional(),
  allowed_api_key_hashes: z.array(z.string().regex(/^[0-9a-f]{64}$/)).max(1000).nullable().optional(),
  allowed_models: z.array(z.string().min(1)).max(1000).nullable().optional(),
  allowed_user_ids: z.array(IdentifierSchema).max(1000).nullable().optional(),
  declared_zdr: z.boolean().nullable().optional(),
  is_byok_only: z.boolean().optional(),
  is_required: z.boolean().optional(),
};

/** Internal (tRPC): store a provider key, encrypted at rest. */
export const CreateByokInputSchema = z.object({
  workspace_id: WorkspaceRefSchema.optional().describe("Defaults to the caller key's workspace"),
  provider: z.string().min(1).max(100),
  key: ProviderKeySchema.describe('The provider secret; stored encrypted, never returned'),
  ...byokOptions,
});
export type CreateByokInput = z.infer<typeof CreateByokInputSchema>;

/** Internal (tRPC): replace the provider secret. */
export const RotateByokSecretInputSchema = z.object({ id: IdentifierSchema, key: ProviderKeySchema });
export type RotateByokSecretInput = z.infer<typeof RotateByokSecretInputSchema>;

/** Internal (tRPC): disable (or re-enable) a credential. */
export const DisableByokInputSchema = z.object({ id: IdentifierSchema, disabled: z.boolean().default(true) });
export type DisableByokInput = z.infer<typeof DisableByokInputSchema>;

/** Internal (tRPC): the credentials of a workspace, in routing order (provider, sort_order). */
export const ListByokInputSchema = z.object({
  workspace_id: WorkspaceRefSchema.optional().describe("Defaults to the caller key's workspace"),
  ...paginationQuery({ defaultLimit: 50, maxLimit: 100 }),
});
export type ListByokInput = z.infer<typeof ListByokInputSchema>;
export const ListByokOutputSchema = listOf(ByokCredentialSchema);
