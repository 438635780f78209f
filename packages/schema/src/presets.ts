import { z } from 'zod';
import { IdentifierSchema, TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
import { WorkspaceRefSchema } from './workspaces.js';

/** URL-safe: RFC 3986 unreserved characters. */
export const PresetSlugSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._~-]+$/, 'URL-safe characters only');

/** A version's system prompt: at most 100,000 characters, as presets.create and .createVersion take it. */
export const SystemPromptSchema = z.string().max(100_000);

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
  system_prompt: SystemPromptSchema.optional(),
});
export type CreatePresetInput = z.infer<typeof CreatePresetInputSchema>;
export const CreatePresetOutputSchema = z.object({ data: PresetSchema, version: PresetVersionSchema });

/** Internal (tRPC): add the next version of a preset. */
export const CreatePresetVersionInputSchema = z.object({
  slug: IdentifierSchema,
  config: PresetConfigSchema,
  system_prompt: SystemPromptSchema.optional(),
});
export type CreatePresetVersionInput = z.infer<typeof CreatePresetVersionInputSchema>;
export const PresetVersionOutputSchema = dataOf(PresetVersionSchema);

/** Internal (tRPC): delete a version; it keeps its place in the listing as null. */
export const DeletePresetVersionInputSchema = z.object({ slug: IdentifierSchema, version: z.number().int().min(1) });
export type DeletePresetVersionInput = z.infer<typeof DeletePresetVersionInputSchema>;
export const DeletePresetVersionOutputSchema = z.object({ deleted: z.literal(true) });

// ---- D6–D8: presets from inference request bodies -------------------------------------------------

/**
 * Of an inference request body, the fields a preset version's config keeps, under their wire names
 * (platform-api.md, notes for D6–D8): model and models, provider preferences, sampling parameters,
 * token limits, stop, reasoning, response format, tools and tool choice, plugins. Every other field
 * (messages, stream, input, metadata, ...) and every field the schemas below do not name is dropped.
 */
export const PRESET_REQUEST_KEPT = {
  chat: [
    'model',
    'models',
    'provider',
    'temperature',
    'top_p',
    'top_k',
    'top_a',
    'min_p',
    'frequency_penalty',
    'presence_penalty',
    'repetition_penalty',
    'seed',
    'max_tokens',
    'max_completion_tokens',
    'stop',
    'reasoning',
    'reasoning_effort',
    'response_format',
    'tools',
    'tool_choice',
    'parallel_tool_calls',
    'plugins',
  ],
  messages: ['model', 'models', 'provider', 'temperature', 'top_p', 'top_k', 'max_tokens', 'stop_sequences', 'thinking', 'tools', 'tool_choice', 'plugins'],
  responses: [
    'model',
    'models',
    'provider',
    'temperature',
    'top_p',
    'top_k',
    'frequency_penalty',
    'presence_penalty',
    'max_output_tokens',
    'reasoning',
    'text',
    'tools',
    'tool_choice',
    'parallel_tool_calls',
    'plugins',
  ],
} as const;
export type PresetRequestKind = keyof typeof PRESET_REQUEST_KEPT;

const JsonObjectSchema = z.record(z.string(), z.unknown());
const NumberOrNull = z.number().nullable();
const IntegerOrNull = z.number().int().nullable();
const BooleanOrNull = z.boolean().nullable();
const Strings = z.array(z.string());
const StringMap = z.record(z.string(), z.string());

/** The slug of the path: the preset's, under the rules of every preset slug. */
const PathSlug = PresetSlugSchema.describe("The preset's slug: a new one creates the preset, an existing one gets a new version");

/** Fields all three bodies share (typed where the spec types them; each optional). */
const commonRequestFields = {
  model: z.string().optional(),
  models: Strings.optional(),
  provider: JsonObjectSchema.nullable().optional().describe('Provider preferences'),
  temperature: NumberOrNull.optional(),
  top_p: NumberOrNull.optional(),
  top_k: IntegerOrNull.optional(),
  tools: z.array(z.unknown()).optional(),
  plugins: z.array(z.unknown()).optional(),
  stream: z.boolean().optional().describe('Dropped'),
  session_id: z.string().optional().describe('Dropped'),
  user: z.string().optional().describe('Dropped'),
};

/** D6. POST /presets/{slug}/chat/completions: a chat-completions body. Fields not named here are accepted and dropped. */
export const PresetFromChatInputSchema = z.object({
  slug: PathSlug,
  messages: z.array(z.unknown()).describe('Required, as clients always send it; dropped'),
  ...commonRequestFields,
  top_a: NumberOrNull.optional(),
  min_p: NumberOrNull.optional(),
  frequency_penalty: NumberOrNull.optional(),
  presence_penalty: NumberOrNull.optional(),
  repetition_penalty: NumberOrNull.optional(),
  max_tokens: IntegerOrNull.optional(),
  max_completion_tokens: IntegerOrNull.optional(),
  seed: IntegerOrNull.optional(),
  top_logprobs: IntegerOrNull.optional().describe('Dropped'),
  logprobs: BooleanOrNull.optional().describe('Dropped'),
  parallel_tool_calls: BooleanOrNull.optional(),
  stop: z.union([z.string(), Strings]).nullable().optional(),
  logit_bias: JsonObjectSchema.nullable().optional().describe('Dropped'),
  reasoning: JsonObjectSchema.optional(),
  reasoning_effort: z.string().nullable().optional(),
  response_format: JsonObjectSchema.optional(),
  tool_choice: z.unknown().optional(),
  modalities: Strings.optional().describe('Dropped'),
  image_config: JsonObjectSchema.optional().describe('Dropped'),
  metadata: StringMap.optional().describe('Dropped'),
  service_tier: z.string().nullable().optional().describe('Dropped'),
});
export type PresetFromChatInput = z.infer<typeof PresetFromChatInputSchema>;

/** A text block of a messages-style `system` (other block fields, e.g. cache_control, are allowed and ignored). */
const SystemTextBlockSchema = z.looseObject({ type: z.literal('text'), text: z.string() });

/** D7. POST /presets/{slug}/messages: a messages-style body. Fields not named here are accepted and dropped. */
export const PresetFromMessagesInputSchema = z.object({
  slug: PathSlug,
  ...commonRequestFields,
  model: z.string().describe('Required'),
  messages: z.array(z.unknown()).nullable().describe('Required (the key is always present), may be null; dropped'),
  system: z
    .union([SystemPromptSchema, z.array(SystemTextBlockSchema)])
    .optional()
    .describe("The version's system_prompt: a string, or text blocks joined by a blank line"),
  max_tokens: IntegerOrNull.optional(),
  stop_sequences: Strings.optional(),
  thinking: JsonObjectSchema.optional(),
  tool_choice: JsonObjectSchema.optional(),
  metadata: JsonObjectSchema.optional().describe('Dropped'),
  fallbacks: z.array(z.unknown()).nullable().optional().describe('Dropped'),
  service_tier: z.string().nullable().optional().describe('Dropped'),
  context_management: JsonObjectSchema.nullable().optional().describe('Dropped'),
});
export type PresetFromMessagesInput = z.infer<typeof PresetFromMessagesInputSchema>;

/** D8. POST /presets/{slug}/responses: a responses-style body; nothing required. Fields not named here are accepted and dropped. */
export const PresetFromResponsesInputSchema = z.object({
  slug: PathSlug,
  ...commonRequestFields,
  store: z.boolean().optional().describe('Dropped'),
  service_tier: z.string().nullable().optional().describe('Dropped'),
  input: z
    .union([z.string(), z.array(z.unknown())])
    .optional()
    .describe('Dropped'),
  instructions: SystemPromptSchema.optional().describe("The version's system_prompt"),
  max_output_tokens: IntegerOrNull.optional(),
  max_tool_calls: IntegerOrNull.optional().describe('Dropped'),
  top_logprobs: IntegerOrNull.optional().describe('Dropped'),
  frequency_penalty: NumberOrNull.optional(),
  presence_penalty: NumberOrNull.optional(),
  reasoning: JsonObjectSchema.nullable().optional(),
  text: JsonObjectSchema.optional(),
  tool_choice: z.unknown().optional(),
  parallel_tool_calls: BooleanOrNull.optional(),
  metadata: StringMap.optional().describe('Dropped'),
  image_config: JsonObjectSchema.optional().describe('Dropped'),
  modalities: Strings.optional().describe('Dropped'),
});
export type PresetFromResponsesInput = z.infer<typeof PresetFromResponsesInputSchema>;

/** D6–D8 answer as A33 does: the preset with the version just made, now in force. */
export const PresetFromRequestOutputSchema = GetPresetOutputSchema;
