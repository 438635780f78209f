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
  PresetVersionOutputSchema,
} from '@switchyard/schema';
import { authedProcedure, managementProcedure, router } from '../../trpc/init.js';
import { routesOf } from '../../trpc/route.js';
import { createPreset, createPresetVersion, deletePresetVersion, getPreset, getPresetVersion, listPresets, listPresetVersions } from './presets.service.js';
import { answers, WHY } from '../../http/statuses.js';

const presetRoute = routesOf('Presets');
const openapi = (path: `/${string}`, summary: string, description: string) => presetRoute('GET', path, summary, description);

// Any key; a regular key sees the presets of its own workspace only.
export const presetsRouter = router({
  list: authedProcedure
    .meta({
      ...openapi('/presets', 'List presets', 'Lists the presets, most recently updated first. A regular key sees its own workspace only.'),
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable}`,
      }),
      listed: [400, 401, 500],
    })
    .input(ListPresetsInputSchema)
    .output(ListPresetsOutputSchema)
    .query(({ ctx, input }) => listPresets(ctx.db, ctx.actor, input)),
  get: authedProcedure
    .meta({
      ...openapi('/presets/{slug}', 'Get a preset', 'Returns a preset with the version in force (designated_version, or null).'),
      statuses: answers({
        400: `${WHY.longId}; ${WHY.unstorable}`,
        404: "no preset with that slug in the key's organization (for a regular key: in its workspace)",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(GetPresetInputSchema)
    .output(GetPresetOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getPreset(ctx.db, ctx.actor, input) })),
  versions: authedProcedure
    .meta({
      ...openapi(
        '/presets/{slug}/versions',
        'List versions of a preset',
        'Lists the versions of a preset in ascending order; a deleted version keeps its place as null.',
      ),
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.longId}; ${WHY.unstorable}`,
        404: "no preset with that slug in the key's organization (for a regular key: in its workspace)",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(ListPresetVersionsInputSchema)
    .output(ListPresetVersionsOutputSchema)
    .query(({ ctx, input }) => listPresetVersions(ctx.db, ctx.actor, input)),
  version: authedProcedure
    .meta({
      ...openapi(
        '/presets/{slug}/versions/{version}',
        'Get a version of a preset',
        'Returns one version by number: data is null for a deleted version; 404 for a version the preset never had.',
      ),
      statuses: answers({
        400: `version not a positive integer; ${WHY.longId}; ${WHY.unstorable}`,
        404: 'no preset with that slug visible to the key, or a version it never had',
      }),
      listed: [400, 401, 404, 500],
    })
    .input(GetPresetVersionInputSchema)
    .output(GetPresetVersionOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getPresetVersion(ctx.db, ctx.actor, input) })),

  // Internal (tRPC only): no client of the API writes presets (admin-api.md gives no such operation).
  create: managementProcedure
    .input(CreatePresetInputSchema)
    .output(CreatePresetOutputSchema)
    .mutation(async ({ ctx, input }) => {
      const { preset, version } = await createPreset(ctx.db, ctx.actor, input, ctx.now());
      return { data: preset, version };
    }),
  createVersion: managementProcedure
    .input(CreatePresetVersionInputSchema)
    .output(PresetVersionOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await createPresetVersion(ctx.db, ctx.actor, input, ctx.now()) })),
  deleteVersion: managementProcedure
    .input(DeletePresetVersionInputSchema)
    .output(DeletePresetVersionOutputSchema)
    .mutation(({ ctx, input }) => deletePresetVersion(ctx.db, ctx.actor, input, ctx.now())),
});
