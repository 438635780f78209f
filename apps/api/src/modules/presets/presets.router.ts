import {
  CreatePresetInputSchema,
  CreatePresetOutputSchema,
  CreatePresetVersionInputSchema,
  DeletePresetVersionInputSchema,
  DeletePresetVersionOutputSchema,
  GetPresetInputSchema,
  GetPresetOutputSchema,
  GetPresetVersionInputSchema,
  GetPresetVersionOutputSchema,
  ListPresetsInputSchema,
  ListPresetsOutputSchema,
  ListPresetVersionsInputSchema,
  ListPresetVersionsOutputSchema,
  PresetFromChatInputSchema,
  PresetFromMessagesInputSchema,
  PresetFromRequestOutputSchema,
  PresetFromResponsesInputSchema,
  PresetVersionOutputSchema,
} from '@switchyard/schema';
import { authedProcedure, managementProcedure, router } from '../../trpc/init.js';
import { routesOf } from '../../trpc/openapi-meta.js';
import {
  createPreset,
  createPresetVersion,
  deletePresetVersion,
  getPreset,
  getPresetVersion,
  listPresets,
  listPresetVersions,
  presetFromRequest,
} from './presets.service.js';
import { answers, WHY } from '@switchyard/schema';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

const presetRoute = routesOf('Presets');
const openapi = (path: `/${string}`, summary: string, description: string) => presetRoute('GET', path, summary, description);

/**
 * D6–D8 (platform-api.md): one answer, one set of statuses; only the body differs. Any key: a
 * regular key writes in its own workspace, a management key in its own (the organization's default).
 */
const fromRequest = (path: `/${string}`, body: string, refused: string) => ({
  ...presetRoute(
    'POST',
    path,
    `Create or version a preset from a ${body} body`,
    `Stores what a preset version's config can hold of a ${body} request body (model, provider, sampling, token limits, stop, reasoning, response format, tools, plugins) as a new version, numbered one above the highest, and designates it; a new slug creates the preset (status active, name = slug) in the key's workspace. Everything else of the body is dropped; nothing is sent to any provider.`,
  ),
  scope: 'presets:write' as const,
  statuses: answers({
    400: `a slug that is not 1 to 100 URL-safe characters; ${refused}; a field of the wrong type (error.metadata names it); ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
    403: WHY.scopedKey,
    404: "the slug names a preset the key cannot write: another workspace's (for a regular key), or one whose workspace was deleted (presets themselves cannot be deleted)",
    409: 'a concurrent call created the same new preset first; nothing was written, and retrying adds the next version',
  }),
  listed: [400, 401, 403, 404, 409, 500] as const,
});

// Any key; a regular key sees the presets of its own workspace only.
export const presetsRouter = router({
  list: authedProcedure
    .meta({
      scope: 'presets:read',
      ...openapi('/presets', 'List presets', 'Lists the presets, most recently updated first. A regular key sees its own workspace only.'),
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable}`,
        403: WHY.scopedKey,
      }),
      listed: [400, 401, 500],
    })
    .input(ListPresetsInputSchema)
    .output(ListPresetsOutputSchema)
    .query(({ ctx, input }) => listPresets(ctx.deps, ctx.actor, input)),
  get: authedProcedure
    .meta({
      scope: 'presets:read',
      ...openapi('/presets/{slug}', 'Get a preset', 'Returns a preset with the version in force (designated_version, or null).'),
      statuses: answers({
        400: `${WHY.longId}; ${WHY.unstorable}`,
        403: WHY.scopedKey,
        404: "no preset with that slug in the key's organization (for a regular key: in its workspace)",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(GetPresetInputSchema)
    .output(GetPresetOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getPreset(ctx.deps, ctx.actor, input) })),
  versions: authedProcedure
    .meta({
      scope: 'presets:read',
      ...openapi(
        '/presets/{slug}/versions',
        'List versions of a preset',
        'Lists the versions of a preset in ascending order; a deleted version keeps its place as null.',
      ),
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.longId}; ${WHY.unstorable}`,
        403: WHY.scopedKey,
        404: "no preset with that slug in the key's organization (for a regular key: in its workspace)",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(ListPresetVersionsInputSchema)
    .output(ListPresetVersionsOutputSchema)
    .query(({ ctx, input }) => listPresetVersions(ctx.deps, ctx.actor, input)),
  version: authedProcedure
    .meta({
      scope: 'presets:read',
      ...openapi(
        '/presets/{slug}/versions/{version}',
        'Get a version of a preset',
        'Returns one version by number: data is null for a deleted version; 404 for a version the preset never had.',
      ),
      statuses: answers({
        400: `version not a positive integer; ${WHY.longId}; ${WHY.unstorable}`,
        403: WHY.scopedKey,
        404: 'no preset with that slug visible to the key, or a version it never had',
      }),
      listed: [400, 401, 404, 500],
    })
    .input(GetPresetVersionInputSchema)
    .output(GetPresetVersionOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getPresetVersion(ctx.deps, ctx.actor, input) })),
  fromChat: authedProcedure
    .meta(fromRequest('/presets/{slug}/chat/completions', 'chat-completions', '`messages` missing or not an array'))
    .input(PresetFromChatInputSchema)
    .output(PresetFromRequestOutputSchema)
    .mutation(async ({ ctx, input }) => ({
      data: await presetFromRequest(ctx.deps, ctx.actor, { kind: 'chat', body: input }),
    })),
  fromMessages: authedProcedure
    .meta(
      fromRequest(
        '/presets/{slug}/messages',
        'messages-style',
        '`model` missing or not a string, or the `messages` key missing or neither an array nor null; `system` over 100,000 characters (text blocks joined)',
      ),
    )
    .input(PresetFromMessagesInputSchema)
    .output(PresetFromRequestOutputSchema)
    .mutation(async ({ ctx, input }) => ({
      data: await presetFromRequest(ctx.deps, ctx.actor, { kind: 'messages', body: input }),
    })),
  fromResponses: authedProcedure
    .meta(fromRequest('/presets/{slug}/responses', 'responses-style', '`instructions` over 100,000 characters'))
    .input(PresetFromResponsesInputSchema)
    .output(PresetFromRequestOutputSchema)
    .mutation(async ({ ctx, input }) => ({
      data: await presetFromRequest(ctx.deps, ctx.actor, { kind: 'responses', body: input }),
    })),

  // Internal (tRPC only): presets written by name and config directly (REST writes them only from request bodies, D6–D8).
  create: managementProcedure
    .meta({ scope: 'presets:write' })
    .input(CreatePresetInputSchema.extend(IdempotencyField))
    .output(CreatePresetOutputSchema)
    .mutation(
      idempotent('presets.create', async ({ ctx, input }) => {
        const { preset, version } = await createPreset(ctx.deps, ctx.actor, input);
        return { data: preset, version };
      }),
    ),
  createVersion: managementProcedure
    .meta({ scope: 'presets:write' })
    .input(CreatePresetVersionInputSchema.extend(IdempotencyField))
    .output(PresetVersionOutputSchema)
    .mutation(
      idempotent('presets.createVersion', async ({ ctx, input }) => ({
        data: await createPresetVersion(ctx.deps, ctx.actor, input),
      })),
    ),
  deleteVersion: managementProcedure
    .meta({ scope: 'presets:write' })
    .input(DeletePresetVersionInputSchema)
    .output(DeletePresetVersionOutputSchema)
    .mutation(({ ctx, input }) => deletePresetVersion(ctx.deps, ctx.actor, input)),
});
