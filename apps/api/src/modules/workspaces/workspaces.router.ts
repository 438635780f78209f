import {
  AddWorkspaceMembersInputSchema,
  AddWorkspaceMembersOutputSchema,
  CreateWorkspaceInputSchema,
  DeletedOutputSchema,
  DeleteWorkspaceInputSchema,
  ListWorkspaceMembersInputSchema,
  ListWorkspaceMembersOutputSchema,
  ListWorkspacesInputSchema,
  ListWorkspacesOutputSchema,
  RemoveWorkspaceMembersInputSchema,
  RemoveWorkspaceMembersOutputSchema,
  UpdateWorkspaceInputSchema,
  WorkspaceOutputSchema,
  WorkspaceRefInputSchema,
} from '@switchyard/schema';
import { authedProcedure, managementProcedure, router } from '../../trpc/init.js';
import { guardrailWriteProcedure } from '../guardrails/guardrail-write.js';
import {
  addWorkspaceMembers,
  createWorkspace,
  deleteWorkspace,
  getWorkspace,
  listWorkspaceMembers,
  listWorkspaces,
  removeWorkspaceMembers,
  updateWorkspace,
} from './workspaces.service.js';
import { answers, WHY } from '@switchyard/schema';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

const tags = ['Workspaces'];

export const workspacesRouter = router({
  addMembers: managementProcedure
    .meta({
      scope: 'members:write',
      openapi: {
        method: 'POST',
        path: '/workspaces/{id}/members/add',
        protect: true,
        tags,
        summary: 'Add members to a workspace',
        description: 'Adds several organization members to a workspace; each is given the role held in the organization. Management key required.',
      },
      statuses: answers({
        400: `user_ids missing, empty, over 100, or not ids of 1 to 200 characters, or naming users who are not members of the organization (error.metadata.invalid_user_ids, nothing added); ${WHY.invalidBody}; ${WHY.unstorable}; a body over 1 MB (413 is not listed)`,
        403: WHY.managementOnly,
        404: "no workspace with that UUID or slug in the key's organization",
      }),
      listed: [400, 401, 403, 404, 500],
    })
    .input(AddWorkspaceMembersInputSchema)
    .output(AddWorkspaceMembersOutputSchema)
    .mutation(async ({ ctx, input }) => {
      const added = await addWorkspaceMembers(ctx.deps, ctx.actor, input);
      return { added_count: added.length, data: added };
    }),

  members: authedProcedure
    .meta({
      scope: 'members:read',
      openapi: {
        method: 'GET',
        path: '/workspaces/{id}/members',
        protect: true,
        tags,
        summary: 'List workspace members',
        description: 'Lists members of a workspace. A regular key sees only its own workspace.',
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.longId}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        403: `a regular key asking for another workspace of its organization; ${WHY.scopedKey}`,
        404: "no workspace with that UUID or slug in the key's organization",
      }),
      listed: [401, 403, 404, 500],
    })
    .input(ListWorkspaceMembersInputSchema)
    .output(ListWorkspaceMembersOutputSchema)
    .query(({ ctx, input }) => listWorkspaceMembers(ctx.deps, ctx.actor, input)),

  removeMembers: managementProcedure
    .meta({
      scope: 'members:write',
      openapi: {
        method: 'POST',
        path: '/workspaces/{id}/members/remove',
        protect: true,
        tags,
        summary: 'Remove members from a workspace',
        description: 'Removes these users from the workspace; members with active keys in it cannot be removed. Management key required.',
      },
      statuses: answers({
        400: `user_ids missing, empty or over 100; the default workspace (its members are the organization's); a member with an active key in the workspace (error.metadata.user_ids_with_active_keys, nothing removed); ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        404: WHY.noWorkspace,
      }),
      listed: [400, 401, 403, 404, 500],
    })
    .input(RemoveWorkspaceMembersInputSchema)
    .output(RemoveWorkspaceMembersOutputSchema)
    .mutation(({ ctx, input }) => removeWorkspaceMembers(ctx.deps, ctx.actor, input)),

  create: managementProcedure
    .meta({
      scope: 'workspaces:write',
      openapi: { method: 'POST', path: '/workspaces', protect: true, tags, summary: 'Create a workspace', description: 'Management key required.' },
      successStatus: 201,
      statuses: answers({
        400: `name or slug refused (a slug is lowercase and never UUID-shaped), a taken slug (reason: slug taken); ${WHY.invalidBody}; ${WHY.idempotencyKey}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
      }),
      listed: [400, 401, 403, 500],
    })
    .input(CreateWorkspaceInputSchema.extend(IdempotencyField))
    .output(WorkspaceOutputSchema)
    .mutation(idempotent('workspaces.create', async ({ ctx, input }) => ({ data: await createWorkspace(ctx.deps, ctx.actor, input) }))),
  list: managementProcedure
    .meta({
      scope: 'workspaces:read',
      openapi: {
        method: 'GET',
        path: '/workspaces',
        protect: true,
        tags,
        summary: 'List workspaces',
        description: "The organization's workspaces, oldest first. Management key required.",
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        403: WHY.managementOnly,
      }),
      listed: [401, 500],
    })
    .input(ListWorkspacesInputSchema)
    .output(ListWorkspacesOutputSchema)
    .query(({ ctx, input }) => listWorkspaces(ctx.deps, ctx.actor, input)),
  get: managementProcedure
    .meta({
      scope: 'workspaces:read',
      openapi: {
        method: 'GET',
        path: '/workspaces/{id}',
        protect: true,
        tags,
        summary: 'Get a workspace',
        description: 'By UUID or slug. Management key required.',
      },
      statuses: answers({
        403: WHY.managementOnly,
        404: `${WHY.noWorkspace}; ${WHY.namesNothing}`,
      }),
      listed: [401, 404, 500],
    })
    .input(WorkspaceRefInputSchema)
    .output(WorkspaceOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getWorkspace(ctx.deps, ctx.actor, input) })),
  update: managementProcedure
    .meta({
      scope: 'workspaces:write',
      openapi: {
        method: 'PATCH',
        path: '/workspaces/{id}',
        protect: true,
        tags,
        summary: 'Update a workspace',
        description: 'Changes the fields given. Management key required.',
      },
      statuses: answers({
        400: `a field refused, a taken slug, a new slug for the default workspace; ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        404: WHY.noWorkspace,
      }),
      listed: [400, 401, 403, 404, 500],
    })
    .input(UpdateWorkspaceInputSchema)
    .output(WorkspaceOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await updateWorkspace(ctx.deps, ctx.actor, input) })),
  // The workspace's guardrails go with it; its data follows in a job (workspace.delete).
  delete: guardrailWriteProcedure
    .meta({
      scope: 'workspaces:write',
      openapi: {
        method: 'DELETE',
        path: '/workspaces/{id}',
        protect: true,
        tags,
        summary: 'Delete a workspace',
        description:
          "Refused (400) for the default workspace and for a workspace with active keys. Removes its budgets, guardrails and memberships at once, then, in the background, its generations and their content, rollups, documents, files and every other row of it; the organization's credit totals stay. Management key required.",
      },
      statuses: answers({
        400: `the default workspace; a workspace with active keys (error.metadata.active_keys); confirm_default_workspace_deletion not true or false; ${WHY.longId}; ${WHY.unstorable}`,
        403: WHY.managementOnly,
        404: WHY.noWorkspace,
      }),
      listed: [400, 401, 403, 404, 500],
    })
    .input(DeleteWorkspaceInputSchema)
    .output(DeletedOutputSchema)
    .mutation(({ ctx, input }) => deleteWorkspace(ctx.deps, ctx.actor, input)),
});
