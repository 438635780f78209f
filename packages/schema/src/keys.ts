import { z } from 'zod';
import { QueryBooleanSchema, TimestampSchema, dataOf } from './common.js';
import { WorkspaceRefSchema } from './workspaces.js';

/** A USD amount a key's limit may hold: bounded so that it fits its column (DECIMAL(28,12)). */
export const LimitUsdSchema = z.number().nonnegative().max(1e15);

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
    rate_limit: z.object({ requests: z.number(), interval: z.string(), note: z.string() }).describe('Deprecated; safe to ignore'),
  })
  .describe('The calling API key');
export type Key = z.infer<typeof KeySchema>;

export const GetKeyOutputSchema = dataOf(KeySchema);

/** ISO 8601 with seconds (a fraction allowed) and Z or an offset; minute precision is refused (admin-api.md A1). */
export const ExpiresAtSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/, 'ISO 8601 date-time with seconds, e.g. 2030-01-01T00:00:00.000Z')
  .refine((value) => !Number.isNaN(Date.parse(value)), 'not a valid date-time');

/** Shannon entropy of a string, in bits (per-character entropy times length). */
function entropyBits(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let perChar = 0;
  for (const n of counts.values()) perChar -= (n / value.length) * Math.log2(n / value.length);
  return perChar * value.length;
}

/** A partner's own key (`external.api_key`): at least 32 characters and 96 bits of character entropy. */
export const ExternalApiKeySchema = z
  .string()
  .min(32)
  .max(4096)
  .refine((value) => entropyBits(value) >= 96, 'not enough entropy (at least 32 characters, not repetitive)');

/** What a management key's scope may name (docs/scopes.md). */
export const SCOPE_RESOURCES = [
  'keys',
  'workspaces',
  'members',
  'budgets',
  'guardrails',
  'byok',
  'presets',
  'scim',
  'analytics',
  'files',
  'destinations',
  'audit',
  // GET /export: every record of the organization above, read at once (docs/export.md).
  'export',
  // The prompts and completions of the organization's generations (GET /generation/content).
  'generations',
] as const;
export type ScopeResource = (typeof SCOPE_RESOURCES)[number];
/** Every scope: `<resource>:read` and `<resource>:write` (write implies read). */
export const SCOPES = SCOPE_RESOURCES.flatMap((resource) => [`${resource}:read`, `${resource}:write`] as const);
export const ScopeSchema = z.enum(SCOPES as [`${ScopeResource}:read` | `${ScopeResource}:write`, ...(`${ScopeResource}:read` | `${ScopeResource}:write`)[]]);
export type Scope = z.infer<typeof ScopeSchema>;
/** A management key's scopes: null or empty for none (every management operation). */
export const ScopesInputSchema = z
  .array(ScopeSchema)
  .max(SCOPES.length * 2)
  .nullable()
  .describe(
    "A management key's scopes (`<resource>:read|write`, write implies read); null or empty: unscoped, every management operation (this API's addition)",
  );

/** POST /keys (A1). `is_management_key` is this API's addition (tRPC and REST). */
export const CreateKeyInputSchema = z.object({
  name: z.string().min(1).max(200),
  limit: LimitUsdSchema.nullable().optional().describe('USD; null = no limit'),
  limit_reset: LimitResetSchema.nullable().optional().describe('null = never resets; resets at 00:00 UTC, weeks Monday–Sunday'),
  include_byok_in_limit: z.boolean().optional(),
  expires_at: ExpiresAtSchema.nullable().optional(),
  workspace_id: WorkspaceRefSchema.optional().describe('UUID or slug; default: the default workspace'),
  creator_user_id: z.string().min(1).nullable().optional().describe("Member recorded as creator; default: the caller key's creator"),
  external: z
    .object({
      user: z.string().min(1).max(256).describe('Partner end-user id; becomes external_user'),
      api_key: ExternalApiKeySchema.optional().describe('Stored only as a SHA-256 hash; never returned'),
    })
    .optional(),
  is_management_key: z.boolean().optional().describe("Create a management key (this API's addition)"),
  scopes: ScopesInputSchema.optional(),
});
export type CreateKeyInput = z.infer<typeof CreateKeyInputSchema>;

/** The "Managed key" record of admin-api.md (A1–A4): a key as the organization sees it. */
export const ManagedKeySchema = z
  .object({
    hash: z.string().describe("The key's stable public identifier: SHA-256 hex of its first secret (of its only secret until rotated)"),
    name: z.string(),
    label: z.string().describe('Masked form of the current secret'),
    disabled: z.boolean(),
    workspace_id: z.string(),
    creator_user_id: z.string().nullable(),
    external_user: z.string().nullable(),
    limit: z.number().nullable().describe('Spending limit in USD; null = none'),
    limit_remaining: z.number().nullable(),
    limit_reset: LimitResetSchema.nullable(),
    include_byok_in_limit: z.boolean(),
    usage: z.number(),
    usage_daily: z.number(),
    usage_weekly: z.number(),
    usage_monthly: z.number(),
    byok_usage: z.number(),
    byok_usage_daily: z.number(),
    byok_usage_weekly: z.number(),
    byok_usage_monthly: z.number(),
    created_at: TimestampSchema,
    updated_at: TimestampSchema.nullable(),
    expires_at: TimestampSchema.nullable(),
    is_management_key: z.boolean().describe("This API's addition"),
    scopes: z
      .array(z.string())
      .nullable()
      .describe("A management key's scopes; null: unscoped (every management operation). This API's addition (docs/scopes.md)"),
  })
  .describe('A key of the organization (not the Key record of GET /key)');
export type ManagedKey = z.infer<typeof ManagedKeySchema>;

export const CreateKeyOutputSchema = z.object({
  data: ManagedKeySchema,
  key: z.string().describe('The secret; shown only in this answer'),
});
export const ManagedKeyOutputSchema = dataOf(ManagedKeySchema);

const KeyHashSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'a key hash: 64 lowercase hex characters')
  .describe("The key's hash");
export const KeyHashInputSchema = z.object({ hash: KeyHashSchema });

/** PATCH /keys/{hash} (A4). */
export const UpdateKeyInputSchema = z.object({
  hash: KeyHashSchema,
  name: z.string().min(1).max(200).optional(),
  disabled: z.boolean().optional(),
  limit: LimitUsdSchema.nullable().optional(),
  limit_reset: LimitResetSchema.nullable().optional(),
  include_byok_in_limit: z.boolean().optional(),
  scopes: ScopesInputSchema.optional(),
});
export type UpdateKeyInput = z.infer<typeof UpdateKeyInputSchema>;

/** The longest grace period a rotation may give the secret it replaces: 7 days. */
export const MAX_GRACE_PERIOD_SECONDS = 604_800;

/** POST /keys/{hash}/rotate: a new secret for the same key. */
export const RotateKeyInputSchema = z.object({
  hash: KeyHashSchema,
  grace_period_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_GRACE_PERIOD_SECONDS)
    .optional()
    .describe('How long the secrets in use keep working, in seconds (0 to 604800); default 0: they stop at once'),
});
export type RotateKeyInput = z.infer<typeof RotateKeyInputSchema>;

/** One secret of a key (keys.secrets): never the secret, only the first characters of its hash. */
export const KeySecretSchema = z
  .object({
    hash_prefix: z.string().describe("The first 12 hex characters of the secret's SHA-256"),
    current: z.boolean().describe('The secret the key was last rotated to (or its first, if never rotated)'),
    created_at: TimestampSchema,
    expires_at: TimestampSchema.nullable().describe('When it stops working (the end of a grace period); null for the current secret'),
    last_used_at: TimestampSchema.nullable().describe('When it last authenticated a request (recorded at most once a minute)'),
  })
  .describe('A secret of a key: the current one, or one rotated away (kept to show its last use)');
export type KeySecret = z.infer<typeof KeySecretSchema>;
export const KeySecretsOutputSchema = z.object({ data: z.array(KeySecretSchema) });

/**
 * GET /keys (A2). The spec's query has no limit (clients take one page); `limit` (1..100) is this
 * API's addition for callers that page, and `hash_prefix` (the CLI's unique-prefix lookup) searches
 * the whole organization unless workspace_id is given.
 */
export const ListKeysInputSchema = z.object({
  include_disabled: QueryBooleanSchema.optional().describe('Also list disabled keys'),
  offset: z.number().int().min(0).optional().describe('Number of keys to skip'),
  limit: z.number().int().min(1).max(100).optional().describe("Maximum keys to return (this API's addition; default: all)"),
  workspace_id: WorkspaceRefSchema.optional().describe('UUID or slug; default: keys of the default workspace'),
  hash_prefix: z
    .string()
    .regex(/^[0-9a-f]{1,64}$/)
    .optional()
    .describe("Only keys whose hash starts with these hex characters (this API's addition)"),
});
export type ListKeysInput = z.infer<typeof ListKeysInputSchema>;
export const ListKeysOutputSchema = z.object({ data: z.array(ManagedKeySchema) });
