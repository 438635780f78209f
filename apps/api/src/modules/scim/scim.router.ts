import {
  CreateScimGroupMappingInputSchema,
  ListScimGroupMappingsInputSchema,
  ListScimGroupMappingsOutputSchema,
  ScimGroupMappingOutputSchema,
  UpdateScimGroupMappingInputSchema,
} from '@switchyard/schema';
import { managementProcedure, router } from '../../trpc/init.js';
import { createScimGroupMapping, listScimGroupMappings, updateScimGroupMapping } from './scim.service.js';
import { answers, WHY } from '../../http/statuses.js';

export const scimRouter = router({
  updateGroupMapping: managementProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/scim/group-mappings/{id}',
        protect: true,
        tags: ['SCIM'],
        summary: 'Update a SCIM group mapping',
        description: 'Updates the role (admin or member) of a SCIM group mapping. Management key required.',
      },
      statuses: answers({
        400: `id not a UUID, role not admin or member; ${WHY.invalidBody}; ${WHY.unstorable}; a body over 1 MB (413 is not listed)`,
        403: WHY.managementOnly,
        404: "no mapping with that id in the key's organization",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(UpdateScimGroupMappingInputSchema)
    .output(ScimGroupMappingOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await updateScimGroupMapping(ctx.db, ctx.actor, input) })),

  // Internal (tRPC only).
  listGroupMappings: managementProcedure
    .input(ListScimGroupMappingsInputSchema)
    .output(ListScimGroupMappingsOutputSchema)
    .query(({ ctx, input }) => listScimGroupMappings(ctx.db, ctx.actor, input)),
  createGroupMapping: managementProcedure
    .input(CreateScimGroupMappingInputSchema)
    .output(ScimGroupMappingOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await createScimGroupMapping(ctx.db, ctx.actor, input) })),
});
