// The organization export (GET /api/v1/export, `switchyard export`; docs/export.md): JSON Lines,
// one record per line. Records reuse the API's own shapes, each with a `type`; the first line is a
// header naming the format and its version, the last a trailer with the counts (a file without it
// was cut short). Version 1 only ever gains fields and record types (readers ignore unknown ones).
import { z } from 'zod';
import { BudgetSchema } from './budgets.js';
import { GenerationContentSchema, GenerationSchema } from './generations.js';
import { GuardrailKeyAssignmentSchema, GuardrailMemberAssignmentSchema, GuardrailSchema } from './guardrails.js';
import { ManagedKeySchema } from './keys.js';
import { OrganizationMemberSchema } from './organization.js';
import { OrganizationAlertsSchema, RetentionSettingsSchema } from './platform.js';
import { PresetSchema, PresetVersionSchema } from './presets.js';
import { WorkspaceMemberSchema, WorkspaceSchema } from './workspaces.js';

export const EXPORT_FORMAT = 'switchyard.export';
export const EXPORT_VERSION = 1;
export const EXPORT_MEDIA_TYPE = 'application/x-ndjson';

/** The record types, in the order they appear in a file (the header first, the trailer last). */
export const EXPORT_RECORD_TYPES = [
  'settings',
  'workspace',
  'member',
  'workspace_member',
  'key',
  'budget',
  'guardrail',
  'guardrail_key_assignment',
  'guardrail_member_assignment',
  'preset',
  'generation',
] as const;
export type ExportRecordType = (typeof EXPORT_RECORD_TYPES)[number];

export const ExportHeaderSchema = z.object({
  type: z.literal('export'),
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION).describe('Changes only when a field changes meaning or goes away; additions keep version 1'),
  organization_id: z.string(),
  created_at: z.string().describe('ISO 8601: when the export started'),
});

export const ExportCountsSchema = z.record(z.enum(EXPORT_RECORD_TYPES), z.number().int().min(0));
export type ExportCounts = z.infer<typeof ExportCountsSchema>;

export const ExportTrailerSchema = z.object({
  type: z.literal('end'),
  counts: ExportCountsSchema.describe('Records of each type in the file (every type, 0 included)'),
  completed_at: z.string(),
});

export const ExportRecordSchema = z.discriminatedUnion('type', [
  OrganizationAlertsSchema.extend({ type: z.literal('settings'), ...RetentionSettingsSchema.shape }),
  WorkspaceSchema.extend({ type: z.literal('workspace') }),
  OrganizationMemberSchema.extend({ type: z.literal('member') }),
  WorkspaceMemberSchema.extend({ type: z.literal('workspace_member') }),
  ManagedKeySchema.extend({ type: z.literal('key') }),
  BudgetSchema.extend({ type: z.literal('budget') }),
  GuardrailSchema.extend({ type: z.literal('guardrail') }),
  GuardrailKeyAssignmentSchema.extend({ type: z.literal('guardrail_key_assignment') }),
  GuardrailMemberAssignmentSchema.extend({ type: z.literal('guardrail_member_assignment') }),
  PresetSchema.extend({ type: z.literal('preset') }).extend({
    versions: z.array(PresetVersionSchema.nullable()).describe('Every version in order; null for a deleted one (version N at index N - 1)'),
  }),
  GenerationSchema.extend({ type: z.literal('generation') }).extend({
    content: GenerationContentSchema.nullable().describe('The stored prompt and completion; null when not stored'),
  }),
]);
export type ExportRecord = z.infer<typeof ExportRecordSchema>;

/** Any line of an export file. */
export const ExportLineSchema = z.union([ExportHeaderSchema, ExportTrailerSchema, ExportRecordSchema]);
