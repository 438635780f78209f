import { API_PREFIX } from '@switchyard/schema';
import { OAUTH_ROUTES } from './oauth-token.routes.js';
import { authRouter, federationPoliciesRouter } from './auth.router.js';
import { defineModule } from '../manifest.js';

export const authModule = defineModule({
  name: 'auth',
  routers: { auth: authRouter, federationPolicies: federationPoliciesRouter },
  byteRoutes: [{ prefix: API_PREFIX, routes: OAUTH_ROUTES }],
});
