import { accountRouter } from './modules/account/account.router.js';
import { auditRouter } from './modules/audit/audit.router.js';
import { analyticsRouter } from './modules/analytics/analytics.router.js';
import { budgetsRouter } from './modules/budgets/budgets.router.js';
import { byokRouter } from './modules/byok/byok.router.js';
import { destinationsRouter } from './modules/destinations/destinations.router.js';
import { filesRouter } from './modules/files/files.router.js';
import { generationsRouter } from './modules/generations/generations.router.js';
import { guardrailsRouter } from './modules/guardrails/guardrails.router.js';
import { keysRouter } from './modules/keys/keys.router.js';
import { modelsRouter } from './modules/models/models.router.js';
import { organizationRouter } from './modules/organization/organization.router.js';
import { organizationsRouter } from './modules/organizations/organizations.router.js';
import { presetsRouter } from './modules/presets/presets.router.js';
import { authRouter, federationPoliciesRouter } from './modules/auth/auth.router.js';
import { routingRouter } from './modules/routing/routing.router.js';
import { scimRouter } from './modules/scim/scim.router.js';
import { settingsRouter } from './modules/settings/settings.router.js';
import { videosRouter } from './modules/videos/videos.router.js';
import { workspacesRouter } from './modules/workspaces/workspaces.router.js';
import { router } from './trpc/init.js';

export const appRouter = router({
  keys: keysRouter,
  models: modelsRouter,
  generations: generationsRouter,
  organization: organizationRouter,
  organizations: organizationsRouter,
  workspaces: workspacesRouter,
  budgets: budgetsRouter,
  byok: byokRouter,
  guardrails: guardrailsRouter,
  presets: presetsRouter,
  scim: scimRouter,
  analytics: analyticsRouter,
  account: accountRouter,
  files: filesRouter,
  videos: videosRouter,
  routing: routingRouter,
  auth: authRouter,
  federationPolicies: federationPoliciesRouter,
  destinations: destinationsRouter,
  settings: settingsRouter,
  audit: auditRouter,
});

export type AppRouter = typeof appRouter;
