import {
  CreateScimGroupMappingInputSchema,
  ListScimGroupMappingsInputSchema,
  ListScimGroupMappingsOutputSchema,
  ScimGroupMappingOutputSchema,
  UpdateScimGroupMappingInputSchema,
} from '@switchyard/schema';
import { managementProcedure, router } from '../../trpc/init.js';
import { createScimGroupMapping, listScimGroupMappings, updateScimGroupMapping } from './scim.service.js';

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
