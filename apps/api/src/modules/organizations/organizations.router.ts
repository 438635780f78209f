import {
  CreateKeyOutputSchema,
  CreateOrganizationInputSchema,
  CreateOrganizationOutputSchema,
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
import { auditOfPlatform } from '../audit/audit.js';
import { createOrganization, disableOrganization, getOrganizationSettings, listOrganizations, updateOrganizationSettings } from './organizations.service.js';

// Internal (tRPC only, platform keys): the platform creates, lists and disables organizations, sets
// the quotas it grants each (its settings row), and issues one a new management key.
export const organizationsRouter = router({
  create: platformProcedure
    .input(CreateOrganizationInputSchema)
    .output(CreateOrganizationOutputSchema)
    .mutation(({ ctx, input }) => createOrganization(ctx.db, input, auditOfPlatform(ctx.platform, ctx))),
  list: platformProcedure
    .input(ListOrganizationsInputSchema)
    .output(ListOrganizationsOutputSchema)
    .query(({ ctx, input }) => listOrganizations(ctx.db, input)),
  disable: platformProcedure
    .input(OrganizationRefInputSchema)
    .output(OrganizationSchema)
    .mutation(({ ctx, input }) => disableOrganization(ctx.db, ctx.keys, input.organization_id, ctx.now(), auditOfPlatform(ctx.platform, ctx))),
  issueManagementKey: platformProcedure
    .input(IssueManagementKeyInputSchema)
    .output(CreateKeyOutputSchema)
    .mutation(async ({ ctx, input }) => {
      const { secret, key } = await issueManagementKey(ctx.db, input, ctx.now(), auditOfPlatform(ctx.platform, ctx));
      return { data: key, key: secret };
    }),
  settings: platformProcedure
    .input(OrganizationRefInputSchema)
    .output(OrganizationSettingsOutputSchema)
    .query(({ ctx, input }) => getOrganizationSettings(ctx.db, input)),
  updateSettings: platformProcedure
    .input(UpdateOrganizationSettingsInputSchema)
    .output(OrganizationSettingsOutputSchema)
    .mutation(({ ctx, input }) => updateOrganizationSettings(ctx.db, input, auditOfPlatform(ctx.platform, ctx))),
});
