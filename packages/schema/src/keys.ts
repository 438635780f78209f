import { z } from 'zod';
import { TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
import { WorkspaceRefSchema } from './workspaces.js';

/** A USD amount a key's limit may hold: bounded so that it fits its column (DECIMAL(28,12)). */
const LimitUsdSchema = z.number().nonnegative().max(1e15);

export const LimitResetSchema = z.enum(['daily', 'weekly', 'monthly']);
export const DataRegionSchema = z.enum(['global', 'europe', 'us']);

export const KeySchema = z
  .object({
    label: z.string().describe('Masked form of the key'),
    limit: z.number().nullable().describe('Spending limit in USD; null when unlimited'),
    limit_remaining: z.number().nullable().describe('Limit minus usage of the current limit_reset period; null when unlimited'),
    limit_reset: LimitResetSchema.nullable().describe('Period after which the limit resets; null: never'),
    include_byok_in_limit: z.boolean(),
    usage: z.number().describe('Lifetime spend'),
    usage_daily: z.number().describe('Spend in the current UTC day'),
    usage_weekly: z.number().describe('Spend in the current UTC week (Monday start)'),
    usage_monthly: z.number().describe('Spend in the current UTC calendar month'),
    byok_usage: z.number(),
    byok_usage_daily: z.number(),
    byok_usage_weekly: z.number(),
    byok_usage_monthly: z.number(),
    is_free_tier: z.boolean(),
    is_management_key: z.boolean(),
    is_provisioning_key: z.boolean(),
    creator_user_id: z.string(),
    expires_at: TimestampSchema.nullable(),
    organization_id: z.string().nullable(),
    workspace_id: z.string().nullable(),
    allowed_data_regions: z.array(DataRegionSchema),
    free_model_daily_requests: z.object({
      used: z.number().int(),
      limit: z.number().int(),
      remaining: z.number().int(),
    }),
    rate_limit: z
      .object({ requests: z.number(), interval: z.string(), note: z.string() })
      .describe('Deprecated; safe to ignore'),
  })
  .describe('The calling API key');
export type Key = z.infer<typeof KeySchema>;

export const GetKeyOutputSchema = dataOf(KeySchema);

/** Internal (tRPC): create a key in the caller's organization. The secret is returned once. */
export const CreateKeyInputSchema = z.object({
  name: z.string().min(1).max(200),
  workspace_id: WorkspaceRefSchema.optional().describe("UUID or slug; defaults to the caller key's workspace"),
  limit: LimitUsdSchema.nullable().optional(),
  limit_reset: LimitResetSchema.nullable().optional(),
  include_byok_in_limit: z.boolean().optional(),
  is_management_key: z.boolean().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
});
export type CreateKeyInput = z.infer<typeof CreateKeyInputSchema>;

export const KeySummarySchema = z.object({
  hash: z.string().describe("SHA-256 of the key; the key's public identifier"),
  name: z.string(),
  label: z.string(),
  workspace_id: z.string(),
  creator_user_id: z.string(),
  is_management_key: z.boolean(),
  disabled: z.boolean(),
  limit: z.number().nullable(),
  limit_reset: LimitResetSchema.nullable(),
  include_byok_in_limit: z.boolean(),
  expires_at: TimestampSchema.nullable(),
  created_at: TimestampSchema,
});
export type KeySummary = z.infer<typeof KeySummarySchema>;

export const CreateKeyOutputSchema = z.object({
  key: z.string().describe('The secret; shown only in this answer'),
  data: KeySummarySchema,
});

/** Internal (tRPC): change a key of the caller's organization, by hash. */
export const UpdateKeyInputSchema = z.object({
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  name: z.string().min(1).max(200).optional(),
  disabled: z.boolean().optional(),
  limit: LimitUsdSchema.nullable().optional(),
  limit_reset: LimitResetSchema.nullable().optional(),
  include_byok_in_limit: z.boolean().optional(),
});
export type UpdateKeyInput = z.infer<typeof UpdateKeyInputSchema>;

/** Internal (tRPC): the caller's organization's keys, newest first. */
export const ListKeysInputSchema = z.object({
  ...paginationQuery({ defaultLimit: 50, maxLimit: 100 }),
  workspace_id: WorkspaceRefSchema.optional().describe('UUID or slug: only keys of this workspace'),
  /** Only keys whose hash starts with these hex characters (the CLI accepts a unique prefix). */
  hash_prefix: z.string().regex(/^[0-9a-f]{1,64}$/).optional(),
});
export type ListKeysInput = z.infer<typeof ListKeysInputSchema>;
export const ListKeysOutputSchema = listOf(KeySummarySchema);

export const KeyHashInputSchema = z.object({ hash: z.string().regex(/^[0-9a-f]{64}$/) });
