import {
  AssignGuardrailOutputSchema,
  CreateGuardrailInputSchema,
  DeleteGuardrailOutputSchema,
  GuardrailIdInputSchema,
  GuardrailKeysInputSchema,
  GuardrailMembersInputSchema,
  GuardrailOutputSchema,
  ListAllGuardrailAssignmentsInputSchema,
  ListGuardrailAssignmentsInputSchema,
  ListGuardrailKeyAssignmentsOutputSchema,
  ListGuardrailMemberAssignmentsOutputSchema,
  ListGuardrailsInputSchema,
  ListGuardrailsOutputSchema,
  UnassignGuardrailOutputSchema,
  UpdateGuardrailInputSchema,
} from '@switchyard/schema';
import { authedProcedure, managementProcedure, router } from '../../trpc/init.js';
import { guardrailWriteProcedure, heavyGuardrailWriteProcedure } from './guardrail-write.js';
import { routesOf } from '../../trpc/openapi-meta.js';
import {
  assignGuardrailKeys,
  assignGuardrailMembers,
  createGuardrail,
  deleteGuardrail,
  getGuardrail,
  listAllGuardrailKeyAssignments,
  listAllGuardrailMemberAssignments,
  listGuardrailKeyAssignments,
  listGuardrailMemberAssignments,
  listGuardrails,
  unassignGuardrailKeys,
  unassignGuardrailMembers,
  updateGuardrail,
} from './guardrails.service.js';
import { answers, WHY } from '@switchyard/schema';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

const openapi = routesOf('Guardrails');

// Routes match first come, in this order: the literal /guardrails/assignments/... paths come before
// the /guardrails/{id}... ones.
export const guardrailsRouter = router({
  allKeyAssignments: managementProcedure
    .meta({
      scope: 'guardrails:read',
      ...openapi(
        'GET',
        '/guardrails/assignments/keys',
        'List every key assignment of the organization',
        'Lists the key assignments of all guardrails of the organization, oldest first. Management key required.',
      ),
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        403: WHY.managementOnly,
      }),
      listed: [401, 500],
    })
    .input(ListAllGuardrailAssignmentsInputSchema)
    .output(ListGuardrailKeyAssignmentsOutputSchema)
    .query(({ ctx, input }) => listAllGuardrailKeyAssignments(ctx.deps, ctx.actor, input)),
  allMemberAssignments: managementProcedure
    .meta({
      scope: 'guardrails:read',
      ...openapi(
        'GET',
        '/guardrails/assignments/members',
        'List every member assignment of the organization',
        'Lists the member assignments of all guardrails of the organization, oldest first. Management key required.',
      ),
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        403: WHY.managementOnly,
      }),
      listed: [401, 500],
    })
    .input(ListAllGuardrailAssignmentsInputSchema)
    .output(ListGuardrailMemberAssignmentsOutputSchema)
    .query(({ ctx, input }) => listAllGuardrailMemberAssignments(ctx.deps, ctx.actor, input)),
  keyAssignments: authedProcedure
    .meta({
      scope: 'guardrails:read',
      ...openapi(
        'GET',
        '/guardrails/{id}/assignments/keys',
        'List key assignments of a guardrail',
        "Lists the keys assigned to a guardrail, with each key's hash, name and masked label.",
      ),
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.longId}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        403: WHY.scopedKey,
        404: "no guardrail with that id in the key's organization (for a regular key: in its workspace), including ids that are no UUID",
      }),
      listed: [401, 404, 500],
    })
    .input(ListGuardrailAssignmentsInputSchema)
    .output(ListGuardrailKeyAssignmentsOutputSchema)
    .query(({ ctx, input }) => listGuardrailKeyAssignments(ctx.deps, ctx.actor, input)),
  memberAssignments: authedProcedure
    .meta({
      scope: 'guardrails:read',
      ...openapi(
        'GET',
        '/guardrails/{id}/assignments/members',
        'List member assignments of a guardrail',
        'Lists the organization members assigned to a guardrail.',
      ),
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.longId}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        403: WHY.scopedKey,
        404: "no guardrail with that id in the key's organization (for a regular key: in its workspace), including ids that are no UUID",
      }),
      listed: [401, 404, 500],
    })
    .input(ListGuardrailAssignmentsInputSchema)
    .output(ListGuardrailMemberAssignmentsOutputSchema)
    .query(({ ctx, input }) => listGuardrailMemberAssignments(ctx.deps, ctx.actor, input)),
  list: authedProcedure
    .meta({
      scope: 'guardrails:read',
      ...openapi(
        'GET',
        '/guardrails',
        'List guardrails',
        'Lists the guardrails of a workspace (workspace_id), or of the default workspace when it is omitted.',
      ),
      statuses: answers({
        400: `${WHY.invalidPage}, or workspace_id over 200 characters; ${WHY.unstorable} (not listed: no listed status fits)`,
        403: WHY.scopedKey,
      }),
      listed: [401, 500],
    })
    .input(ListGuardrailsInputSchema)
    .output(ListGuardrailsOutputSchema)
    .query(({ ctx, input }) => listGuardrails(ctx.deps, ctx.actor, input)),
  create: guardrailWriteProcedure
    .meta({
      scope: 'guardrails:write',
      ...openapi(
        'POST',
        '/guardrails',
        'Create a guardrail',
        'Creates a guardrail in a workspace (the default workspace when workspace_id is omitted). It enforces nothing until keys or members are assigned to it. Management key required.',
      ),
      successStatus: 201,
      statuses: answers({
        400: `name, limits, reset_interval (only with limit_usd), lists or content filters refused (a custom pattern that does not compile); a deleted workspace; ${WHY.unknownWorkspace}; ${WHY.invalidBody}; ${WHY.idempotencyKey}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
      }),
      listed: [400, 401, 403, 500],
    })
    .input(CreateGuardrailInputSchema.extend(IdempotencyField))
    .output(GuardrailOutputSchema)
    .mutation(idempotent('guardrails.create', async ({ ctx, input }) => ({ data: await createGuardrail(ctx.deps, ctx.actor, input) }))),
  get: managementProcedure
    .meta({
      scope: 'guardrails:read',
      ...openapi('GET', '/guardrails/{id}', 'Get a guardrail', 'Returns one guardrail of the organization. Management key required.'),
      statuses: answers({
        403: WHY.managementOnly,
        404: `no guardrail with that id in the key's organization, including ids that are no UUID; ${WHY.namesNothing}`,
      }),
      listed: [401, 404, 500],
    })
    .input(GuardrailIdInputSchema)
    .output(GuardrailOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getGuardrail(ctx.deps, ctx.actor, input) })),
  update: guardrailWriteProcedure
    .meta({
      scope: 'guardrails:write',
      ...openapi(
        'PATCH',
        '/guardrails/{id}',
        'Update a guardrail',
        'Changes the fields given; list fields replace the stored list, null clears it. Management key required.',
      ),
      statuses: answers({
        400: `a field refused (as for POST /guardrails); ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        404: "no guardrail with that id in the key's organization, including ids that are no UUID",
      }),
      listed: [400, 401, 403, 404, 409, 500],
    })
    .input(UpdateGuardrailInputSchema)
    .output(GuardrailOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await updateGuardrail(ctx.deps, ctx.actor, input) })),
  delete: guardrailWriteProcedure
    .meta({
      scope: 'guardrails:write',
      ...openapi('DELETE', '/guardrails/{id}', 'Delete a guardrail', 'Deletes a guardrail and all its key and member assignments. Management key required.'),
      statuses: answers({
        403: WHY.managementOnly,
        404: `no guardrail with that id in the key's organization, including ids that are no UUID; ${WHY.namesNothing}`,
      }),
      listed: [401, 404, 500],
    })
    .input(GuardrailIdInputSchema)
    .output(DeleteGuardrailOutputSchema)
    .mutation(({ ctx, input }) => deleteGuardrail(ctx.deps, ctx.actor, input)),
  assignKeys: heavyGuardrailWriteProcedure
    .meta({
      scope: 'guardrails:write',
      ...openapi(
        'POST',
        '/guardrails/{id}/assignments/keys',
        'Assign keys to a guardrail',
        "Assigns keys (by hash). A key holds at most one guardrail: assigning replaces the key's earlier assignment. Answers the number of keys newly assigned here. Management key required.",
      ),
      statuses: answers({
        400: `key_hashes missing, empty or over 100, or naming keys that are not the organization's (error.metadata.invalid_key_hashes, nothing assigned); ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        404: "no guardrail with that id in the key's organization, including ids that are no UUID",
      }),
      listed: [400, 401, 403, 404, 500],
    })
    .input(GuardrailKeysInputSchema)
    .output(AssignGuardrailOutputSchema)
    .mutation(({ ctx, input }) => assignGuardrailKeys(ctx.deps, ctx.actor, input)),
  unassignKeys: heavyGuardrailWriteProcedure
    .meta({
      scope: 'guardrails:write',
      ...openapi(
        'POST',
        '/guardrails/{id}/assignments/keys/remove',
        'Unassign keys from a guardrail',
        'Removes key assignments (by hash). Management key required.',
      ),
      statuses: answers({
        400: `key_hashes missing, empty or over 100; ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        404: "no guardrail with that id in the key's organization, including ids that are no UUID",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(GuardrailKeysInputSchema)
    .output(UnassignGuardrailOutputSchema)
    .mutation(({ ctx, input }) => unassignGuardrailKeys(ctx.deps, ctx.actor, input)),
  assignMembers: heavyGuardrailWriteProcedure
    .meta({
      scope: 'guardrails:write',
      ...openapi(
        'POST',
        '/guardrails/{id}/assignments/members',
        'Assign members to a guardrail',
        'Assigns organization members (by user id); members already assigned are skipped and not counted. Management key required.',
      ),
      statuses: answers({
        400: `member_user_ids missing, empty or over 100, or naming users who are not members (error.metadata.invalid_member_user_ids, nothing assigned); ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        404: "no guardrail with that id in the key's organization, including ids that are no UUID",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(GuardrailMembersInputSchema)
    .output(AssignGuardrailOutputSchema)
    .mutation(({ ctx, input }) => assignGuardrailMembers(ctx.deps, ctx.actor, input)),
  unassignMembers: heavyGuardrailWriteProcedure
    .meta({
      scope: 'guardrails:write',
      ...openapi(
        'POST',
        '/guardrails/{id}/assignments/members/remove',
        'Unassign members from a guardrail',
        'Removes member assignments (by user id). Management key required.',
      ),
      statuses: answers({
        400: `member_user_ids missing, empty or over 100; ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        404: "no guardrail with that id in the key's organization, including ids that are no UUID",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(GuardrailMembersInputSchema)
    .output(UnassignGuardrailOutputSchema)
    .mutation(({ ctx, input }) => unassignGuardrailMembers(ctx.deps, ctx.actor, input)),
});
