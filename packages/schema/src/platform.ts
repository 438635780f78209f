// The platform plane: what only platform keys call (organizations; see also the internal procedures
// of the catalog, recording, credits, containers and video jobs).
import { z } from 'zod';
import { TimestampSchema, listOf, paginationQuery } from './common.js';

export const OrganizationIdSchema = z
  .string()
  .regex(/^org_[0-9a-z]{1,64}$/, 'an organization id such as org_3f9c…')
  .describe('Organization id ("org_" followed by lowercase letters and digits)');

/** The organization a platform key acts on, named explicitly (query string of PUT /internal/...). */
export const OrganizationQuerySchema = z.object({ organization_id: OrganizationIdSchema });

export const OrganizationSchema = z.object({
  id: OrganizationIdSchema,
  name: z.string(),
  default_workspace_id: z.string().describe('The organization\'s default workspace (slug "default")'),
  credit_balance: z.number().describe('Prepaid credit in USD'),
  disabled: z.boolean().describe("A disabled organization's keys are refused (401)"),
  disabled_at: TimestampSchema.nullable(),
  created_at: TimestampSchema,
});
export type Organization = z.infer<typeof OrganizationSchema>;

export const CreateOrganizationInputSchema = z.object({
  name: z.string().trim().min(1).max(200),
  owner_email: z.email().max(320).optional().describe('The owner (org:admin) who holds the management key; owner@<organization id>.invalid when omitted'),
  owner_first_name: z.string().max(200).optional().describe("The owner's first name, as this organization knows them"),
  owner_last_name: z.string().max(200).optional(),
});
export type CreateOrganizationInput = z.infer<typeof CreateOrganizationInputSchema>;

export const CreateOrganizationOutputSchema = z.object({
  organization_id: OrganizationIdSchema,
  workspace_id: z.string().describe('The default workspace'),
  owner_user_id: z.string(),
  management_key: z.string().describe("The management key's secret, shown only here"),
  management_key_hash: z.string(),
  organization: OrganizationSchema,
});
export type CreateOrganizationOutput = z.infer<typeof CreateOrganizationOutputSchema>;

export const ListOrganizationsInputSchema = z.object(paginationQuery({ defaultLimit: 50, maxLimit: 100 }));
export type ListOrganizationsInput = z.infer<typeof ListOrganizationsInputSchema>;
export const ListOrganizationsOutputSchema = listOf(OrganizationSchema);

export const OrganizationRefInputSchema = z.object({ organization_id: OrganizationIdSchema });
export type OrganizationRefInput = z.infer<typeof OrganizationRefInputSchema>;

/** organizations.issueManagementKey: a new management key for the organization (platform keys only). */
export const IssueManagementKeyInputSchema = OrganizationRefInputSchema.extend({
  name: z.string().min(1).max(200).optional().describe('default: "Management key"'),
});
export type IssueManagementKeyInput = z.infer<typeof IssueManagementKeyInputSchema>;

/** The thresholds of an organization's spend alerts (docs/events.md), as every answer shows them. */
export const AlertSettingsSchema = z.object({
  alert_thresholds: z
    .array(z.number().int())
    .describe('Percentages of a key limit, workspace budget or guardrail limit at which limit.threshold_crossed fires, ascending; [] none'),
  credits_low_usd: z.number().nullable().describe('credits.low fires when the credit balance falls under this many USD; null: never'),
});
export type AlertSettings = z.infer<typeof AlertSettingsSchema>;

/** The thresholds as an input: omitted leaves a field unchanged; null sets it back to its default. */
export const AlertSettingsInputSchema = z.object({
  alert_thresholds: z
    .array(z.number().int().min(1).max(1000))
    .max(10)
    .refine((list) => new Set(list).size === list.length, 'alert_thresholds must be distinct')
    .transform((list) => [...list].sort((a, b) => a - b))
    .nullable()
    .optional()
    .describe('Percentages (1-1000, at most 10, distinct); [] none; null: back to the default 50, 80, 100; omitted: unchanged'),
  credits_low_usd: z.number().nonnegative().max(1e15).nullable().optional().describe('USD; null: never (the default); omitted: unchanged'),
});
export type AlertSettingsInput = z.infer<typeof AlertSettingsInputSchema>;

/** How long the organization's stored generation content is kept (docs/operations.md#retention), as every answer shows it. */
export const RetentionSettingsSchema = z.object({
  content_retention_days: z
    .number()
    .int()
    .nullable()
    .describe(
      "Stored generation content (prompts, completions) older than this many days is removed by the retention sweep; the generations' records and spend stay. null: kept for good (the default)",
    ),
});
export type RetentionSettings = z.infer<typeof RetentionSettingsSchema>;

/** The bounds of content_retention_days. */
export const CONTENT_RETENTION_DAYS = { min: 1, max: 3650 } as const;

/** The retention as an input: omitted leaves it unchanged; null keeps content for good. */
export const RetentionSettingsInputSchema = z.object({
  content_retention_days: z
    .number()
    .int()
    .min(CONTENT_RETENTION_DAYS.min)
    .max(CONTENT_RETENTION_DAYS.max)
    .nullable()
    .optional()
    .describe('Days (1-3650); null: keep content for good (the default); omitted: unchanged'),
});
export type RetentionSettingsInput = z.infer<typeof RetentionSettingsInputSchema>;

/**
 * An organization's settings row (platform keys only): the quotas the platform grants it, and its
 * alert thresholds (which its management keys also set: settings.updateAlerts). A null quota takes
 * the server's default (its environment variable).
 */
export const OrganizationSettingsSchema = z.object({
  organization_id: OrganizationIdSchema,
  free_model_requests_per_minute: z
    .number()
    .int()
    .nullable()
    .describe("Free-model requests each key may make per minute; null: the server's FREE_MODEL_REQUESTS_PER_MINUTE; 0: none"),
  api_requests_per_minute_per_key: z
    .number()
    .int()
    .nullable()
    .describe("API requests each of its keys may make per minute (docs/rate-limits.md); null: the server's API_REQUESTS_PER_MINUTE_PER_KEY"),
  api_requests_per_minute: z
    .number()
    .int()
    .nullable()
    .describe("API requests its keys may make per minute together; null: the server's API_REQUESTS_PER_MINUTE_PER_ORGANIZATION"),
  ...AlertSettingsSchema.shape,
  ...RetentionSettingsSchema.shape,
  updated_at: TimestampSchema.nullable().describe('null: never set'),
});
export type OrganizationSettings = z.infer<typeof OrganizationSettingsSchema>;
export const OrganizationSettingsOutputSchema = z.object({ data: OrganizationSettingsSchema });

/** The bounds of an API rate limit (docs/rate-limits.md): at least one request a minute, so that no setting locks an organization out. */
export const API_REQUESTS_PER_MINUTE = { min: 1, max: 100_000_000 } as const;
const ApiRequestsPerMinuteSchema = z.number().int().min(API_REQUESTS_PER_MINUTE.min).max(API_REQUESTS_PER_MINUTE.max).nullable().optional();

export const UpdateOrganizationSettingsInputSchema = z.object({
  organization_id: OrganizationIdSchema,
  free_model_requests_per_minute: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .nullable()
    .optional()
    .describe("null: back to the server's default; omitted: unchanged"),
  api_requests_per_minute_per_key: ApiRequestsPerMinuteSchema.describe(
    "API requests per key and minute (1-100000000); null: back to the server's default; omitted: unchanged",
  ),
  api_requests_per_minute: ApiRequestsPerMinuteSchema.describe(
    "API requests per minute for all the organization's keys together (1-100000000); null: back to the server's default; omitted: unchanged",
  ),
  ...AlertSettingsInputSchema.shape,
  ...RetentionSettingsInputSchema.shape,
});
export type UpdateOrganizationSettingsInput = z.infer<typeof UpdateOrganizationSettingsInputSchema>;

/** organizations.delete (platform keys only): the organization's id, and again as `confirm`. */
export const DeleteOrganizationInputSchema = OrganizationRefInputSchema.extend({
  confirm: z.string().max(200).describe('The organization id again: a deletion removes everything it owns and cannot be undone'),
});
export type DeleteOrganizationInput = z.infer<typeof DeleteOrganizationInputSchema>;

/** An organization's deletion: a job of the job runner, resumable, with its progress. */
export const OrganizationDeletionSchema = z.object({
  id: z.string().describe('The deletion job'),
  organization_id: OrganizationIdSchema,
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  progress: z
    .object({
      step: z.enum(['stored bytes', 'generations', 'rows', 'done']).describe('What it does now (in this order)'),
      deleted_objects: z.number().int().describe('Stored objects removed'),
      deleted_generations: z.number().int().describe('Generations (with their content) removed'),
    })
    .nullable()
    .describe('null until it starts'),
  created_at: TimestampSchema,
  started_at: TimestampSchema.nullable(),
  finished_at: TimestampSchema.nullable(),
  error_message: z.string().nullable(),
});
export type OrganizationDeletion = z.infer<typeof OrganizationDeletionSchema>;
export const OrganizationDeletionOutputSchema = z.object({ data: OrganizationDeletionSchema });
export const GetOrganizationDeletionInputSchema = z.object({ id: z.string().max(200).describe('The deletion job') });

/** settings.alerts and settings.updateAlerts (management keys): the organization's own alert thresholds. */
export const OrganizationAlertsSchema = AlertSettingsSchema.extend({
  updated_at: TimestampSchema.nullable().describe('null: never set'),
});
export type OrganizationAlerts = z.infer<typeof OrganizationAlertsSchema>;
export const OrganizationAlertsOutputSchema = z.object({ data: OrganizationAlertsSchema });

/** settings.retention and settings.updateRetention (management keys): how long the organization's generation content is kept. */
export const OrganizationRetentionSchema = RetentionSettingsSchema.extend({
  updated_at: TimestampSchema.nullable().describe('null: never set'),
});
export type OrganizationRetention = z.infer<typeof OrganizationRetentionSchema>;
export const OrganizationRetentionOutputSchema = z.object({ data: OrganizationRetentionSchema });
export const UpdateRetentionInputSchema = z.object({
  content_retention_days: RetentionSettingsInputSchema.shape.content_retention_days
    .unwrap()
    .describe('Days (1-3650); null: keep content for good (the default)'),
});
export type UpdateRetentionInput = z.infer<typeof UpdateRetentionInputSchema>;

/**
 * settings.pkce and settings.updatePkce (management keys): whether the organization's authorization
 * codes (POST /auth/keys/code, POST /auth/keys) must carry an S256 code_challenge.
 */
export const OrganizationPkceSchema = z.object({
  pkce_require_s256: z
    .boolean()
    .describe(
      'true: a code without a code_challenge, or with code_challenge_method plain, is 400. false (the default): both are accepted (platform-api.md D10/D11)',
    ),
  updated_at: TimestampSchema.nullable().describe('null: never set'),
});
export type OrganizationPkce = z.infer<typeof OrganizationPkceSchema>;
export const OrganizationPkceOutputSchema = z.object({ data: OrganizationPkceSchema });
export const UpdatePkceInputSchema = z.object({
  pkce_require_s256: z.boolean().describe('Require an S256 code_challenge of every authorization code'),
});
export type UpdatePkceInput = z.infer<typeof UpdatePkceInputSchema>;
