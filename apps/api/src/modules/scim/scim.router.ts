import {
  CreateScimGroupMappingInputSchema,
  DeleteScimGroupMappingInputSchema,
  DeleteScimGroupMappingOutputSchema,
  ListScimGroupMappingsInputSchema,
  ListScimGroupMappingsOutputSchema,
  ScimGroupMappingIdInputSchema,
  ScimGroupMappingOutputSchema,
  UpdateScimGroupMappingInputSchema,
} from '@switchyard/schema';
import { managementProcedure, router } from '../../trpc/init.js';
import { routesOf } from '../../trpc/route.js';
import {
  createScimGroupMapping,
  deleteScimGroupMapping,
  getScimGroupMapping,
  listScimGroupMappings,
  updateScimGroupMapping,
} from './scim.service.js';

const openapi = routesOf('SCIM');

export const scimRouter = router({
  createGroupMapping: managementProcedure
    .meta({
      openapi: {
        ...openapi(
          'POST',
          '/scim/group-mappings',
          'Create a SCIM group mapping',
          'Maps a SCIM group to a workspace (UUID or slug) with a role. The same mapping again succeeds; another role for a mapped group and workspace is 409. Management key required.',
        ).openapi,
        // 409: another role for a mapped group and workspace (admin-api.md A28).
        errorResponses: [400, 401, 403, 404, 409, 500],
      },
      successStatus: 201,
    })
    .input(CreateScimGroupMappingInputSchema)
    .output(ScimGroupMappingOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await createScimGroupMapping(ctx.db, ctx.actor, input) })),
  listGroupMappings: managementProcedure
    .meta(
      openapi(
        'GET',
        '/scim/group-mappings',
        'List SCIM group mappings',
        "Lists the organization's SCIM group mappings across all workspaces, oldest first. Management key required.",
      ),
    )
    .input(ListScimGroupMappingsInputSchema)
    .output(ListScimGroupMappingsOutputSchema)
    .query(({ ctx, input }) => listScimGroupMappings(ctx.db, ctx.actor, input)),
  getGroupMapping: managementProcedure
    .meta(openapi('GET', '/scim/group-mappings/{id}', 'Get a SCIM group mapping', 'Returns one SCIM group mapping. Management key required.'))
    .input(ScimGroupMappingIdInputSchema)
    .output(ScimGroupMappingOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getScimGroupMapping(ctx.db, ctx.actor, input) })),
  updateGroupMapping: managementProcedure
    .meta(
      openapi(
        'PATCH',
        '/scim/group-mappings/{id}',
        'Update a SCIM group mapping',
        'Updates the role (admin or member) of a SCIM group mapping. Management key required.',
      ),
    )
    .input(UpdateScimGroupMappingInputSchema)
    .output(ScimGroupMappingOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await updateScimGroupMapping(ctx.db, ctx.actor, input) })),
  deleteGroupMapping: managementProcedure
    .meta(
      openapi(
        'DELETE',
        '/scim/group-mappings/{id}',
        'Delete a SCIM group mapping',
        'Deletes a SCIM group mapping. keep_members (true or false) is required. Management key required.',
      ),
    )
    .input(DeleteScimGroupMappingInputSchema)
    .output(DeleteScimGroupMappingOutputSchema)
    .mutation(({ ctx, input }) => deleteScimGroupMapping(ctx.db, ctx.actor, input)),
});
