import {
  CreateOrganizationInputSchema,
  CreateOrganizationOutputSchema,
  ListOrganizationsInputSchema,
  ListOrganizationsOutputSchema,
  OrganizationRefInputSchema,
  OrganizationSchema,
} from '@switchyard/schema';
import { platformProcedure, router } from '../../trpc/init.js';
import { createOrganization, disableOrganization, listOrganizations } from './organizations.service.js';

// Internal (tRPC only, platform keys): the platform creates, lists and disables organizations.
export const organizationsRouter = router({
  create: platformProcedure
    .input(CreateOrganizationInputSchema)
    .output(CreateOrganizationOutputSchema)
    .mutation(({ ctx, input }) => createOrganization(ctx.db, input)),
  list: platformProcedure
    .input(ListOrganizationsInputSchema)
    .output(ListOrganizationsOutputSchema)
    .query(({ ctx, input }) => listOrganizations(ctx.db, input)),
  disable: platformProcedure
    .input(OrganizationRefInputSchema)
    .output(OrganizationSchema)
    .mutation(({ ctx, input }) => disableOrganization(ctx.db, ctx.keys, input.organization_id, ctx.now())),
});
