import { API_PREFIX } from '@switchyard/schema';
import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { authRouter, federationPoliciesRouter } from './auth.router.js';
import { workloadIdentity, type WorkloadIdentity } from './identity.js';
import { OAUTH_ROUTES } from './oauth-token.routes.js';

declare module '../../trpc/service-deps.js' {
  /** What the auth module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** Workload identity: signing keys, access tokens, issuers' keys (the token exchange). */
    identity: WorkloadIdentity;
  }
}

export const authModule = defineModule({
  name: 'auth',
  routers: { auth: authRouter, federationPolicies: federationPoliciesRouter },
  byteRoutes: [{ prefix: API_PREFIX, routes: OAUTH_ROUTES }],
  async create(config: Config, { db, now, logger, secrets, media }: ModuleShared) {
    const identity = workloadIdentity({ db, secrets, now, media, rotationMs: config.signingKeyRotationMs, cacheTtlMs: config.cacheTtlMs });
    // Signing keys sealed with an older SWITCHYARD_SECRET_KEY move to the current one (decision 0022).
    const sealing = await identity.signingKeys.resealAll();
    if (sealing.resealed > 0) logger.info({ resealed: sealing.resealed }, 'signing keys resealed with the current secret key');
    if (sealing.unopenable.length > 0) {
      logger.warn(
        { kids: sealing.unopenable },
        'signing keys sealed with a secret key this server lacks: token exchanges answer 503 until SWITCHYARD_SECRET_KEY holds it',
      );
    }
    // GET /oauth/jwks publishes a key from the first start (a verifier may read it once, at its own start).
    await identity.signingKeys.ensure();
    return { deps: { identity, accessTokens: identity.tokens } };
  },
});
