import {
  AssignGuardrailKeysOutputSchema,
  AssignGuardrailMembersOutputSchema,
  CreateGuardrailInputSchema,
  GuardrailKeysInputSchema,
  GuardrailMembersInputSchema,
  GuardrailSchema,
  ListGuardrailAssignmentsInputSchema,
  ListGuardrailKeyAssignmentsOutputSchema,
  ListGuardrailMemberAssignmentsOutputSchema,
  ListGuardrailsInputSchema,
  ListGuardrailsOutputSchema,
  UnassignGuardrailOutputSchema,
  UpdateGuardrailInputSchema,
} from '@switchyard/schema';
import { authedProcedure, managementProcedure, router } from '../../trpc/init.js';
import {
  assignGuardrailKeys,
  assignGuardrailMembers,
  createGuardrail,
  listGuardrailKeyAssignments,
  listGuardrailMemberAssignments,
  listGuardrails,
  unassignGuardrailKeys,
  unassignGuardrailMembers,
  updateGuardrail,
} from './guardrails.service.js';
import { answers, WHY } from '../../http/statuses.js';

export const guardrailsRouter = router({
  keyAssignments: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/guardrails/{id}/assignments/keys',
        protect: true,
        tags: ['Guardrails'],
        summary: 'List key assignments of a guardrail',
        description: "Lists the keys assigned to a guardrail, with each key's hash, name and masked label.",
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.longId}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        404: "no guardrail with that id in the key's organization (for a regular key: in its workspace), including ids that are no UUID",
      }),
      listed: [401, 404, 500],
    })
    .input(ListGuardrailAssignmentsInputSchema)
    .output(ListGuardrailKeyAssignmentsOutputSchema)
    .query(({ ctx, input }) => listGuardrailKeyAssignments(ctx.db, ctx.actor, input)),
  memberAssignments: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/guardrails/{id}/assignments/members',
        protect: true,
        tags: ['Guardrails'],
        summary: 'List member assignments of a guardrail',
        description: 'Lists the organization members assigned to a guardrail.',
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.longId}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        404: "no guardrail with that id in the key's organization (for a regular key: in its workspace), including ids that are no UUID",
      }),
      listed: [401, 404, 500],
    })
    .input(ListGuardrailAssignmentsInputSchema)
    .output(ListGuardrailMemberAssignmentsOutputSchema)
    .query(({ ctx, input }) => listGuardrailMemberAssignments(ctx.db, ctx.actor, input)),
  list: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/guardrails',
        protect: true,
        tags: ['Guardrails'],
        summary: 'List guardrails',
        description:
          'Lists the guardrails of a workspace (workspace_id), or of the default workspace when it is omitted. ' +
          'A workspace the key may not look into (unknown, another organization\'s, or another workspace for a regular key) is an empty page.',
      },
      statuses: answers({
        400: `${WHY.invalidPage}, or workspace_id not a UUID; ${WHY.unstorable} (not listed: no listed status fits)`,
      }),
      listed: [401, 500],
    })
    .input(ListGuardrailsInputSchema)
    .output(ListGuardrailsOutputSchema)
    .query(({ ctx, input }) => listGuardrails(ctx.db, ctx.actor, input)),

  // Internal (tRPC only).
  create: managementProcedure
    .input(CreateGuardrailInputSchema)
    .output(GuardrailSchema)
    .mutation(({ ctx, input }) => createGuardrail(ctx.db, ctx.actor, input)),
  update: managementProcedure
    .input(UpdateGuardrailInputSchema)
    .output(GuardrailSchema)
    .mutation(({ ctx, input }) => updateGuardrail(ctx.db, ctx.actor, input)),
  assignKeys: managementProcedure
    .input(GuardrailKeysInputSchema)
    .output(AssignGuardrailKeysOutputSchema)
    .mutation(({ ctx, input }) => assignGuardrailKeys(ctx.db, ctx.actor, input)),
  unassignKeys: managementProcedure
    .input(GuardrailKeysInputSchema)
    .output(UnassignGuardrailOutputSchema)
    .mutation(({ ctx, input }) => unassignGuardrailKeys(ctx.db, ctx.actor, input)),
  assignMembers: managementProcedure
    .input(GuardrailMembersInputSchema)
    .output(AssignGuardrailMembersOutputSchema)
    .mutation(({ ctx, input }) => assignGuardrailMembers(ctx.db, ctx.actor, input)),
  unassignMembers: managementProcedure
    .input(GuardrailMembersInputSchema)
    .output(UnassignGuardrailOutputSchema)
    .mutation(({ ctx, input }) => unassignGuardrailMembers(ctx.db, ctx.actor, input)),
});
