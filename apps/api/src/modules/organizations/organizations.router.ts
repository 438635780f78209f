import {
  CreateKeyOutputSchema,
  CreateOrganizationInputSchema,
  CreateOrganizationOutputSchema,
  DeleteOrganizationInputSchema,
  GetOrganizationDeletionInputSchema,
  OrganizationDeletionOutputSchema,
  ListOrganizationsInputSchema,
  ListOrganizationsOutputSchema,
  IssueManagementKeyInputSchema,
  OrganizationRefInputSchema,
  OrganizationSchema,
  OrganizationSettingsOutputSchema,
  UpdateOrganizationSettingsInputSchema,
} from '@switchyard/schema';
import { platformProcedure, router } from '../../trpc/init.js';
import { issueManagementKey } from '../keys/keys.service.js';
import { createOrganization, disableOrganization, getOrganizationSettings, listOrganizations, updateOrganizationSettings } from './organizations.service.js';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';
import { getOrganizationDeletion, startOrganizationDeletion } from './offboarding.service.js';

// Internal (tRPC only, platform keys): the platform creates, lists and disables organizations, sets
// the quotas it grants each (its settings row), issues one a new management key, and deletes one
// with everything it owns (offboarding.service.ts).
export const organizationsRouter = router({
  create: platformProcedure
    .input(CreateOrganizationInputSchema.extend(IdempotencyField))
    .output(CreateOrganizationOutputSchema)
    .mutation(idempotent('organizations.create', ({ ctx, input }) => createOrganization(ctx.deps, ctx.platform, input))),
  list: platformProcedure
    .input(ListOrganizationsInputSchema)
    .output(ListOrganizationsOutputSchema)
    .query(({ ctx, input }) => listOrganizations(ctx.deps, ctx.platform, input)),
  disable: platformProcedure
    .input(OrganizationRefInputSchema)
    .output(OrganizationSchema)
    .mutation(({ ctx, input }) => disableOrganization(ctx.deps, ctx.platform, input)),
  /** Offboarding: disables the organization now and queues the deletion of everything it owns. */
  delete: platformProcedure
    .input(DeleteOrganizationInputSchema)
    .output(OrganizationDeletionOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await startOrganizationDeletion(ctx.deps, ctx.platform, input) })),
  deletion: platformProcedure
    .input(GetOrganizationDeletionInputSchema)
    .output(OrganizationDeletionOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getOrganizationDeletion(ctx.deps, ctx.platform, input) })),
  issueManagementKey: platformProcedure
    .input(IssueManagementKeyInputSchema)
    .output(CreateKeyOutputSchema)
    .mutation(async ({ ctx, input }) => {
      const { secret, key } = await issueManagementKey(ctx.deps, ctx.platform, input);
      return { data: key, key: secret };
    }),
  settings: platformProcedure
    .input(OrganizationRefInputSchema)
    .output(OrganizationSettingsOutputSchema)
    .query(({ ctx, input }) => getOrganizationSettings(ctx.deps, ctx.platform, input)),
  updateSettings: platformProcedure
    .input(UpdateOrganizationSettingsInputSchema)
    .output(OrganizationSettingsOutputSchema)
    .mutation(({ ctx, input }) => updateOrganizationSettings(ctx.deps, ctx.platform, input)),
});
