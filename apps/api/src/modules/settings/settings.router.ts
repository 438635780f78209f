import { auditOfTenant } from '../audit/audit.js';
import { AlertSettingsInputSchema, OrganizationAlertsOutputSchema } from '@switchyard/schema';
import { z } from 'zod';
import { managementProcedure, router } from '../../trpc/init.js';
import { getAlertSettings, updateAlertSettings } from './alerts.service.js';

// The organization's own settings that its management keys set (tRPC only; decision 0026): the
// thresholds of its spend alerts. Setting them takes the budgets scope: whoever may set the
// organization's budgets may set when it hears about them.
export const settingsRouter = router({
  alerts: managementProcedure
    .meta({ scope: 'budgets:read' })
    .input(z.void())
    .output(OrganizationAlertsOutputSchema)
    .query(({ ctx }) => getAlertSettings(ctx.db, ctx.actor)),

  updateAlerts: managementProcedure
    .meta({ scope: 'budgets:write' })
    .input(AlertSettingsInputSchema)
    .output(OrganizationAlertsOutputSchema)
    .mutation(({ ctx, input }) => updateAlertSettings(ctx.db, ctx.actor, input, auditOfTenant(ctx.actor, ctx))),
});
