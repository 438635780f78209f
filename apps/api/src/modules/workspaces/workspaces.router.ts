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
