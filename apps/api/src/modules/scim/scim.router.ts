import {
  GetSyncJobInputSchema,
  SyncJobOutputSchema,
  CreateScimGroupMappingInputSchema,
  CreateScimTokenOutputSchema,
  DeletedOutputSchema,
  ListScimGroupsInputSchema,
  ListScimGroupsOutputSchema,
  ListScimTokensOutputSchema,
  ScimTokenIdInputSchema,
  DeleteScimGroupMappingInputSchema,
  DeleteScimGroupMappingOutputSchema,
  ListScimGroupMappingsInputSchema,
  ListScimGroupMappingsOutputSchema,
  ScimGroupMappingIdInputSchema,
  ScimGroupMappingOutputSchema,
  UpdateScimGroupMappingInputSchema,
} from '@switchyard/schema';
import { managementProcedure, router } from '../../trpc/init.js';
import { routesOf } from '../../trpc/openapi-meta.js';
import { createScimGroupMapping, deleteScimGroupMapping, getScimGroupMapping, listScimGroupMappings, updateScimGroupMapping } from './scim.service.js';
import { answers, WHY } from '@switchyard/schema';
import { z } from 'zod';
import { listScimGroups } from './directory.service.js';
import { createScimToken, listScimTokens, revokeScimToken } from './scim-tokens.service.js';
import { getSyncJob, startSyncJob } from './sync-jobs.service.js';
import { API_PREFIX } from '@switchyard/schema';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

const openapi = routesOf('SCIM');

export const scimRouter = router({
  createGroupMapping: managementProcedure
    .meta({
      scope: 'scim:write',
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
      statuses: answers({
        400: `scim_group_id not a UUID, role not admin or member; ${WHY.invalidBody}; ${WHY.idempotencyKey}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: `${WHY.managementOnly}; ${WHY.ceiling}`,
        404: "workspace_id names no workspace of the key's organization",
        409: 'another role for a group already mapped to the workspace',
      }),
      listed: [400, 401, 404, 409, 500],
    })
    .input(CreateScimGroupMappingInputSchema.extend(IdempotencyField))
    .output(ScimGroupMappingOutputSchema)
    .mutation(
      idempotent('scim.createGroupMapping', async ({ ctx, input }) => ({
        data: await createScimGroupMapping(ctx.deps, ctx.actor, input),
      })),
    ),
  listGroupMappings: managementProcedure
    .meta({
      scope: 'scim:read',
      ...openapi(
        'GET',
        '/scim/group-mappings',
        'List SCIM group mappings',
        "Lists the organization's SCIM group mappings across all workspaces, oldest first. Management key required.",
      ),
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        403: WHY.managementOnly,
      }),
      listed: [401, 404, 500],
    })
    .input(ListScimGroupMappingsInputSchema)
    .output(ListScimGroupMappingsOutputSchema)
    .query(({ ctx, input }) => listScimGroupMappings(ctx.deps, ctx.actor, input)),
  getGroupMapping: managementProcedure
    .meta({
      scope: 'scim:read',
      ...openapi('GET', '/scim/group-mappings/{id}', 'Get a SCIM group mapping', 'Returns one SCIM group mapping. Management key required.'),
      statuses: answers({
        403: WHY.managementOnly,
        404: `no mapping with that id in the key's organization; ${WHY.namesNothing}`,
      }),
      listed: [401, 404, 500],
    })
    .input(ScimGroupMappingIdInputSchema)
    .output(ScimGroupMappingOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getScimGroupMapping(ctx.deps, ctx.actor, input) })),
  updateGroupMapping: managementProcedure
    .meta({
      scope: 'scim:write',
      ...openapi(
        'PATCH',
        '/scim/group-mappings/{id}',
        'Update a SCIM group mapping',
        'Updates the role (admin or member) of a SCIM group mapping. Management key required.',
      ),
      statuses: answers({
        400: `id not a UUID, role not admin or member; ${WHY.invalidBody}; ${WHY.unstorable}; a body over 1 MB (413 is not listed)`,
        403: `${WHY.managementOnly}; ${WHY.ceiling}`,
        404: "no mapping with that id in the key's organization",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(UpdateScimGroupMappingInputSchema)
    .output(ScimGroupMappingOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await updateScimGroupMapping(ctx.deps, ctx.actor, input) })),
  deleteGroupMapping: managementProcedure
    .meta({
      scope: 'scim:write',
      ...openapi(
        'DELETE',
        '/scim/group-mappings/{id}',
        'Delete a SCIM group mapping',
        'Deletes a SCIM group mapping. keep_members (true or false) is required. Management key required.',
      ),
      statuses: answers({
        400: `keep_members missing or not true or false; ${WHY.longId}; ${WHY.unstorable}`,
        403: `${WHY.managementOnly}; ${WHY.ceiling}`,
        404: "no mapping with that id in the key's organization",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(DeleteScimGroupMappingInputSchema)
    .output(DeleteScimGroupMappingOutputSchema)
    .mutation(({ ctx, input }) => deleteScimGroupMapping(ctx.deps, ctx.actor, input)),
  listGroups: managementProcedure
    .meta({
      ...openapi(
        'GET',
        '/scim/groups',
        'List SCIM groups',
        "Lists the organization's SCIM groups (provisioned by its identity provider at /scim/v2), oldest first. 404 when the organization has no SCIM directory (no groups and no group mappings). Management key required.",
      ),
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        403: WHY.managementOnly,
        404: 'the organization has no SCIM directory (no SCIM groups and no group mappings)',
      }),
      listed: [401, 404, 500],
      scope: 'scim:read',
    })
    .input(ListScimGroupsInputSchema)
    .output(ListScimGroupsOutputSchema)
    .query(({ ctx, input }) => listScimGroups(ctx.deps, ctx.actor, input)),

  createSyncJob: managementProcedure
    .meta({
      ...openapi(
        'POST',
        '/scim/sync-jobs',
        'Start a SCIM directory synchronization',
        'Applies every group mapping again to the current members of its group, in the background, and counts the groups synchronized and the mapped groups that no longer exist. While one is queued or running, answers that one. 202 with the job and its Location. 404 when the organization has no SCIM directory (no groups and no group mappings). Management key required.',
      ),
      successStatus: 202,
      location: (output: { data: { id: string } }) => `${API_PREFIX}/scim/sync-jobs/${output.data.id}`,
      statuses: answers({
        403: WHY.managementOnly,
        404: 'the organization has no SCIM directory (no SCIM groups and no group mappings)',
      }),
      listed: [401, 404, 500],
      scope: 'scim:write',
    })
    .output(SyncJobOutputSchema)
    .mutation(async ({ ctx }) => ({ data: await startSyncJob(ctx.deps, ctx.actor) })),

  getSyncJob: managementProcedure
    .meta({
      ...openapi(
        'GET',
        '/scim/sync-jobs/{id}',
        'Get a SCIM directory synchronization',
        'One synchronization of the organization, with its outcome once it ended. Management key required.',
      ),
      statuses: answers({
        403: WHY.managementOnly,
        404: `no sync job with that id in the key's organization; ${WHY.namesNothing}`,
      }),
      listed: [401, 404, 500],
      scope: 'scim:read',
    })
    .input(GetSyncJobInputSchema)
    .output(SyncJobOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getSyncJob(ctx.deps, ctx.actor, input) })),

  // Internal (tRPC only): the organization's SCIM bearer tokens, which authenticate /scim/v2 only.
  createToken: managementProcedure
    .meta({ scope: 'scim:write' })
    .input(z.object(IdempotencyField).optional())
    .output(CreateScimTokenOutputSchema)
    .mutation(({ ctx, input }) => {
      const create = idempotent('scim.createToken', ({ ctx: c }: { ctx: typeof ctx }) => createScimToken(c.deps, c.actor));
      return create({ ctx, input: input ?? {} });
    }),
  listTokens: managementProcedure
    .meta({ scope: 'scim:read' })
    .output(ListScimTokensOutputSchema)
    .query(({ ctx }) => listScimTokens(ctx.deps, ctx.actor)),
  revokeToken: managementProcedure
    .meta({ scope: 'scim:write' })
    .input(ScimTokenIdInputSchema)
    .output(DeletedOutputSchema)
    .mutation(({ ctx, input }) => revokeScimToken(ctx.deps, ctx.actor, input)),
});
