import {
  CreatePresetInputSchema,
  CreatePresetOutputSchema,
  CreatePresetVersionInputSchema,
  DeletePresetVersionInputSchema,
  DeletePresetVersionOutputSchema,
  ListPresetVersionsInputSchema,
  ListPresetVersionsOutputSchema,
  PresetVersionOutputSchema,
} from '@switchyard/schema';
import { authedProcedure, managementProcedure, router } from '../../trpc/init.js';
import { createPreset, createPresetVersion, deletePresetVersion, listPresetVersions } from './presets.service.js';
import { answers, WHY } from '../../http/statuses.js';

export const presetsRouter = router({
  versions: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/presets/{slug}/versions',
        protect: true,
        tags: ['Presets'],
        summary: 'List versions of a preset',
        description: 'Lists the versions of a preset in ascending order; a deleted version keeps its place as null.',
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.longId}; ${WHY.unstorable}`,
        404: "no preset with that slug in the key's organization (for a regular key: in its workspace)",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(ListPresetVersionsInputSchema)
    .output(ListPresetVersionsOutputSchema)
    .query(({ ctx, input }) => listPresetVersions(ctx.db, ctx.actor, input)),

  // Internal (tRPC only).
  create: managementProcedure
    .input(CreatePresetInputSchema)
    .output(CreatePresetOutputSchema)
    .mutation(({ ctx, input }) => createPreset(ctx.db, ctx.actor, input)),
  createVersion: managementProcedure
    .input(CreatePresetVersionInputSchema)
    .output(PresetVersionOutputSchema)
    .mutation(({ ctx, input }) => createPresetVersion(ctx.db, ctx.actor, input)),
  deleteVersion: managementProcedure
    .input(DeletePresetVersionInputSchema)
    .output(DeletePresetVersionOutputSchema)
    .mutation(({ ctx, input }) => deletePresetVersion(ctx.db, ctx.actor, input)),
});
