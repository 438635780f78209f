import {
  AlertSettingsInputSchema,
  OrganizationAlertsOutputSchema,
  OrganizationPkceOutputSchema,
  OrganizationRetentionOutputSchema,
  UpdatePkceInputSchema,
  UpdateRetentionInputSchema,
} from '@switchyard/schema';
import { managementProcedure, router } from '../../trpc/init.js';
import { getAlertSettings, updateAlertSettings } from './alerts.service.js';
import { getPkce, updatePkce } from './pkce-setting.service.js';
import { getRetention, updateRetention } from './retention.service.js';

// The organization's own settings that its management keys set (tRPC only; decision 0026): the
// thresholds of its spend alerts. Setting them takes the budgets scope: whoever may set the
// organization's budgets may set when it hears about them. How long its generation content is
// kept (docs/operations.md#retention) takes the analytics scope, the scope of the generations'
// records and feedback (docs/scopes.md). Whether authorization codes must use PKCE with S256 takes
// the keys scope: codes make keys.
export const settingsRouter = router({
  alerts: managementProcedure
    .meta({ scope: 'budgets:read' })
    .output(OrganizationAlertsOutputSchema)
    .query(({ ctx }) => getAlertSettings(ctx.deps, ctx.actor)),

  updateAlerts: managementProcedure
    .meta({ scope: 'budgets:write' })
    .input(AlertSettingsInputSchema)
    .output(OrganizationAlertsOutputSchema)
    .mutation(({ ctx, input }) => updateAlertSettings(ctx.deps, ctx.actor, input)),

  retention: managementProcedure
    .meta({ scope: 'analytics:read' })
    .output(OrganizationRetentionOutputSchema)
    .query(({ ctx }) => getRetention(ctx.deps, ctx.actor)),

  updateRetention: managementProcedure
    .meta({ scope: 'analytics:write' })
    .input(UpdateRetentionInputSchema)
    .output(OrganizationRetentionOutputSchema)
    .mutation(({ ctx, input }) => updateRetention(ctx.deps, ctx.actor, input)),

  pkce: managementProcedure
    .meta({ scope: 'keys:read' })
    .output(OrganizationPkceOutputSchema)
    .query(({ ctx }) => getPkce(ctx.deps, ctx.actor)),

  updatePkce: managementProcedure
    .meta({ scope: 'keys:write' })
    .input(UpdatePkceInputSchema)
    .output(OrganizationPkceOutputSchema)
    .mutation(({ ctx, input }) => updatePkce(ctx.deps, ctx.actor, input)),
});
