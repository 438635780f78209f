import {
  AddWorkspaceMembersInputSchema,
  AddWorkspaceMembersOutputSchema,
  CreateWorkspaceInputSchema,
  ListWorkspaceMembersInputSchema,
  ListWorkspaceMembersOutputSchema,
  ListWorkspacesInputSchema,
  ListWorkspacesOutputSchema,
  UpdateWorkspaceInputSchema,
  WorkspaceSchema,
} from '@switchyard/schema';
import { authedProcedure, managementProcedure, router } from '../../trpc/init.js';
import {
  addWorkspaceMembers,
  createWorkspace,
  listWorkspaceMembers,
  listWorkspaces,
  updateWorkspace,
} from './workspaces.service.js';
import { answers, WHY } from '../../http/statuses.js';

export const workspacesRouter = router({
  addMembers: managementProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/workspaces/{id}/members/add',
        protect: true,
        tags: ['Workspaces'],
        summary: 'Add members to a workspace',
        description:
          'Adds several organization members to a workspace; each is given the role held in the organization. Management key required.',
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
    .mutation(({ ctx, input }) => addWorkspaceMembers(ctx.db, ctx.actor, input)),

  members: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/workspaces/{id}/members',
        protect: true,
        tags: ['Workspaces'],
        summary: 'List workspace members',
        description: 'Lists members of a workspace. A regular key sees only its own workspace.',
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.longId}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        403: 'a regular key asking for another workspace of its organization',
        404: "no workspace with that UUID or slug in the key's organization",
      }),
      listed: [401, 403, 404, 500],
    })
    .input(ListWorkspaceMembersInputSchema)
    .output(ListWorkspaceMembersOutputSchema)
    .query(({ ctx, input }) => listWorkspaceMembers(ctx.db, ctx.actor, input)),

  // Internal (tRPC only): workspace administration.
  list: managementProcedure
    .input(ListWorkspacesInputSchema)
    .output(ListWorkspacesOutputSchema)
    .query(({ ctx, input }) => listWorkspaces(ctx.db, ctx.actor, input)),
  create: managementProcedure
    .input(CreateWorkspaceInputSchema)
    .output(WorkspaceSchema)
    .mutation(({ ctx, input }) => createWorkspace(ctx.db, ctx.actor, input)),
  update: managementProcedure
    .input(UpdateWorkspaceInputSchema)
    .output(WorkspaceSchema)
    .mutation(({ ctx, input }) => updateWorkspace(ctx.db, ctx.actor, input)),
});
