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

const tags = ['Workspaces'];

export const workspacesRouter = router({
  addMembers: managementProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/workspaces/{id}/members/add',
        protect: true,
        tags,
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
        tags,
        summary: 'List workspace members',
        description: 'Lists members of a workspace. A regular key sees only its own workspace.',
      },
    })
    .input(ListWorkspaceMembersInputSchema)
    .output(ListWorkspaceMembersOutputSchema)
    .query(({ ctx, input }) => listWorkspaceMembers(ctx.db, ctx.actor, input)),

  removeMembers: managementProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/workspaces/{id}/members/remove',
        protect: true,
        tags,
        summary: 'Remove members from a workspace',
        description:
          'Removes these users from the workspace; members with active keys in it cannot be removed. Management key required.',
      },
    })
    .input(RemoveWorkspaceMembersInputSchema)
    .output(RemoveWorkspaceMembersOutputSchema)
    .mutation(({ ctx, input }) => removeWorkspaceMembers(ctx.db, ctx.actor, input)),

  create: managementProcedure
    .meta({
      openapi: { method: 'POST', path: '/workspaces', protect: true, tags, summary: 'Create a workspace', description: 'Management key required.' },
      successStatus: 201,
    })
    .input(CreateWorkspaceInputSchema)
    .output(WorkspaceOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await createWorkspace(ctx.db, ctx.actor, input) })),
  list: managementProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/workspaces',
        protect: true,
        tags,
        summary: 'List workspaces',
        description: "The organization's workspaces, oldest first. Management key required.",
      },
    })
    .input(ListWorkspacesInputSchema)
    .output(ListWorkspacesOutputSchema)
    .query(({ ctx, input }) => listWorkspaces(ctx.db, ctx.actor, input)),
  get: managementProcedure
    .meta({
      openapi: { method: 'GET', path: '/workspaces/{id}', protect: true, tags, summary: 'Get a workspace', description: 'By UUID or slug. Management key required.' },
    })
    .input(WorkspaceRefInputSchema)
    .output(WorkspaceOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getWorkspace(ctx.db, ctx.actor, input.id) })),
  update: managementProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/workspaces/{id}',
        protect: true,
        tags,
        summary: 'Update a workspace',
        description: 'Changes the fields given. Management key required.',
      },
    })
    .input(UpdateWorkspaceInputSchema)
    .output(WorkspaceOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await updateWorkspace(ctx.db, ctx.actor, input) })),
  delete: managementProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/workspaces/{id}',
        protect: true,
        tags,
        summary: 'Delete a workspace',
        description:
          'Refused (400) for the default workspace and for a workspace with active keys. Removes its budgets, guardrails and memberships; its generations and spend stay. Management key required.',
      },
    })
    .input(DeleteWorkspaceInputSchema)
    .output(DeletedOutputSchema)
    .mutation(({ ctx, input }) => deleteWorkspace(ctx.db, ctx.keys, ctx.actor, input)),
});
