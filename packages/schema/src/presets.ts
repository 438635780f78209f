import { z } from 'zod';
import { IdentifierSchema, TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
import { WorkspaceRefSchema } from './workspaces.js';

/** URL-safe: RFC 3986 unreserved characters. */
export const PresetSlugSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._~-]+$/, 'URL-safe characters only');

export const PresetConfigSchema = z.record(z.string(), z.unknown()).describe('Preset configuration, e.g. { model, temperature }');

export const PresetVersionSchema = z
  .object({
    id: z.string(),
    preset_id: z.string(),
    version: z.number().int(),
    config: PresetConfigSchema,
    system_prompt: z.string().optional(),
    creator_id: z.string().describe('User id'),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .describe('One version of a preset');
export type PresetVersion = z.infer<typeof PresetVersionSchema>;

export const ListPresetVersionsInputSchema = z.object({
  slug: IdentifierSchema.describe('Preset slug'),
  ...paginationQuery({ defaultLimit: 50, maxLimit: 100 }),
});
export type ListPresetVersionsInput = z.infer<typeof ListPresetVersionsInputSchema>;
export const ListPresetVersionsOutputSchema = z.object({
  data: z.array(PresetVersionSchema.nullable()).describe('Ascending by version; a deleted version is null'),
  total_count: z.number().int(),
});

/** A preset version as GET /presets/{slug} and /presets/{slug}/versions/{version} answer it: system_prompt always present. */
export const PresetVersionDetailSchema = PresetVersionSchema.extend({
  system_prompt: z.string().nullable(),
}).describe('One version of a preset');
export type PresetVersionDetail = z.infer<typeof PresetVersionDetailSchema>;

export const PresetSchema = z
  .object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    status: z.string().describe('active, disabled, archived (open set)'),
    status_updated_at: TimestampSchema.nullable(),
    designated_version_id: z.string().nullable().describe('The version in force: the newest undeleted one'),
    creator_user_id: z.string().nullable(),
    workspace_id: z.string().nullable(),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .describe('A preset: a named, versioned configuration');
export type Preset = z.infer<typeof PresetSchema>;

export const PresetWithVersionSchema = PresetSchema.extend({
  designated_version: PresetVersionDetailSchema.nullable().describe('The version in force, or null'),
});
export type PresetWithVersion = z.infer<typeof PresetWithVersionSchema>;

/** GET /presets: most recently updated first. */
export const ListPresetsInputSchema = z.object(paginationQuery({ defaultLimit: 50, maxLimit: 100 }));
export type ListPresetsInput = z.infer<typeof ListPresetsInputSchema>;
export const ListPresetsOutputSchema = listOf(PresetSchema);

/** GET /presets/{slug}. */
export const GetPresetInputSchema = z.object({ slug: z.string().min(1).describe('Preset slug') });
export type GetPresetInput = z.infer<typeof GetPresetInputSchema>;
export const GetPresetOutputSchema = dataOf(PresetWithVersionSchema);

/** GET /presets/{slug}/versions/{version}: the version number as a path segment, e.g. "1". */
export const GetPresetVersionInputSchema = z.object({
  slug: z.string().min(1).describe('Preset slug'),
  version: z
    .string()
    .regex(/^[0-9]{1,9}$/, 'a version number, e.g. 1')
    .describe('The version number'),
});
export type GetPresetVersionInput = z.infer<typeof GetPresetVersionInputSchema>;
export const GetPresetVersionOutputSchema = z.object({
  data: PresetVersionDetailSchema.nullable().describe('null for a deleted version'),
});

/** Internal (tRPC): create a preset with its first version. */
export const CreatePresetInputSchema = z.object({
  workspace_id: WorkspaceRefSchema.optional().describe("Defaults to the caller key's workspace"),
  slug: PresetSlugSchema,
  name: z.string().min(1).max(200),
  config: PresetConfigSchema,
  system_prompt: z.string().max(100_000).optional(),
});
export type CreatePresetInput = z.infer<typeof CreatePresetInputSchema>;
export const CreatePresetOutputSchema = z.object({ data: PresetSchema, version: PresetVersionSchema });

/** Internal (tRPC): add the next version of a preset. */
export const CreatePresetVersionInputSchema = z.object({
  slug: IdentifierSchema,
  config: PresetConfigSchema,
  system_prompt: z.string().max(100_000).optional(),
});
export type CreatePresetVersionInput = z.infer<typeof CreatePresetVersionInputSchema>;
export const PresetVersionOutputSchema = dataOf(PresetVersionSchema);

/** Internal (tRPC): delete a version; it keeps its place in the listing as null. */
export const DeletePresetVersionInputSchema = z.object({ slug: IdentifierSchema, version: z.number().int().min(1) });
export type DeletePresetVersionInput = z.infer<typeof DeletePresetVersionInputSchema>;
export const DeletePresetVersionOutputSchema = z.object({ deleted: z.literal(true) });
