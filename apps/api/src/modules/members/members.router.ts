import {
  CreateOrganizationMemberInputSchema,
  ListOrganizationMembersInputSchema,
  ListOrganizationMembersOutputSchema,
  OrganizationMemberSchema,
  RemoveOrganizationMemberInputSchema,
  RemoveOrganizationMemberOutputSchema,
  UpdateOrganizationMemberInputSchema,
} from '@switchyard/schema';
import { heavyManagementProcedure, managementProcedure, router } from '../../trpc/init.js';
import { guardrailWriteProcedure } from '../guardrails/guardrail-write.js';
import { createOrganizationMember, listOrganizationMembers, removeOrganizationMember, updateOrganizationMember } from './members.service.js';
import { answers, WHY } from '@switchyard/schema';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

export const organizationRouter = router({
  members: heavyManagementProcedure
    .meta({
      scope: 'members:read',
      openapi: {
        method: 'GET',
        path: '/organization/members',
        protect: true,
        tags: ['Organization'],
        summary: 'List organization members',
        description: 'Lists members of the organization of the management key. Management key required.',
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable} (not listed: no listed status fits a bad page)`,
        403: WHY.managementOnly,
      }),
      listed: [401, 404, 500],
    })
    .input(ListOrganizationMembersInputSchema)
    .output(ListOrganizationMembersOutputSchema)
    .query(({ ctx, input }) => listOrganizationMembers(ctx.deps, ctx.actor, input)),

  // Internal (tRPC only): membership administration.
  createMember: managementProcedure
    .meta({ scope: 'members:write' })
    .input(CreateOrganizationMemberInputSchema.extend(IdempotencyField))
    .output(OrganizationMemberSchema)
    .mutation(idempotent('organization.createMember', ({ ctx, input }) => createOrganizationMember(ctx.deps, ctx.actor, input))),
  updateMember: managementProcedure
    .meta({ scope: 'members:write' })
    .input(UpdateOrganizationMemberInputSchema)
    .output(OrganizationMemberSchema)
    .mutation(({ ctx, input }) => updateOrganizationMember(ctx.deps, ctx.actor, input)),
  // The member's guardrail assignments go with them.
  removeMember: guardrailWriteProcedure
    .meta({ scope: 'members:write' })
    .input(RemoveOrganizationMemberInputSchema)
    .output(RemoveOrganizationMemberOutputSchema)
    .mutation(({ ctx, input }) => removeOrganizationMember(ctx.deps, ctx.actor, input)),
});
