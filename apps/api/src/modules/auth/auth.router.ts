import {
  CreateAuthorizationCodeInputSchema,
  CreateAuthorizationCodeOutputSchema,
  ExchangeAuthorizationCodeInputSchema,
  CreateFederationPolicyInputSchema,
  DeletedOutputSchema,
  ExchangedKeySchema,
  FederationPolicyIdInputSchema,
  FederationPolicySchema,
  JwksOutputSchema,
  ListFederationPoliciesInputSchema,
  ListFederationPoliciesOutputSchema,
} from '@switchyard/schema';
import { answers, WHY } from '@switchyard/schema';
import { authedProcedure, catalogProcedure, managementProcedure, router } from '../../trpc/init.js';
import { ANONYMOUS } from '../../access/callers.js';
import { routesOf } from '../../trpc/openapi-meta.js';
import { createAuthorizationCode, exchangeAuthorizationCode } from './pkce.service.js';
import { createFederationPolicy, deleteFederationPolicy, listFederationPolicies } from './federation.service.js';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

const authRoute = routesOf('Authorization');

// Keys issued through the authorization-code flow with PKCE (platform-api.md D10, D11).
export const authRouter = router({
  createCode: authedProcedure
    .meta({
      ...authRoute(
        'POST',
        '/auth/keys/code',
        'Create an authorization code',
        "The user's approval, on behalf of the user who owns the calling key: a single-use code, valid for 10 minutes, for a key with the label, limit, reset interval, expiry and workspace given. A regular key asks for its own workspace only, and for a limit no higher than its own remaining limit.",
      ),
      statuses: answers({
        400: `callback_url not https (nor http on localhost or 127.0.0.1 as written: 127.1, 0x7f000001, 2130706433 and [::1] are refused); code_challenge malformed, or its method without it; no S256 code_challenge while the organization requires one (pkce_require_s256); expires_at not in the future or without seconds; workspace_id naming no workspace of the organization; ${WHY.invalidBody}; ${WHY.unstorable}`,
        403: `a regular key asking for another workspace, for more than its remaining limit, or for a resetting limit while it has one; ${WHY.scopedKey}, or without every scope of the regular key a code hands out (docs/scopes.md, "The ceiling"); an access token of the token exchange (it hands out no authority)`,
        409: 'the user already holds an unexpired, unused code for this application and challenge',
      }),
      listed: [400, 401, 403, 409, 500],
      scope: 'keys:write',
    })
    .input(CreateAuthorizationCodeInputSchema)
    .output(CreateAuthorizationCodeOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await createAuthorizationCode(ctx.deps, ctx.actor, input) })),

  exchangeCode: catalogProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/auth/keys',
        protect: false,
        tags: ['Authorization'],
        summary: 'Exchange an authorization code for a key',
        description:
          'No key needed (an Authorization header is ignored): the code, with its verifier when it was made with a challenge, is the credential. Once per code; the key is shown in this answer only.',
      },
      statuses: answers(
        {
          400: `an unknown, used or expired code; a code_verifier missing (the code has a challenge) or malformed; a code_challenge_method other than the code's; a code without an S256 challenge while the organization requires one (pkce_require_s256); ${WHY.invalidBody}; ${WHY.unstorable}`,
          403: "the code_verifier does not answer the code's challenge; the key that made the code, or its organization, is disabled, deleted or expired since",
        },
        'public',
      ),
      listed: [400, 403, 500],
    })
    .input(ExchangeAuthorizationCodeInputSchema)
    .output(ExchangedKeySchema)
    .mutation(({ ctx, input }) => exchangeAuthorizationCode(ctx.deps, ANONYMOUS, input)),

  jwks: catalogProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/oauth/jwks',
        protect: false,
        tags: ['Authorization'],
        summary: "Switchyard's token-signing keys",
        description:
          'The public keys (ES256) that verify the access tokens POST /oauth/token issues: the current key and, after a rotation, the previous ones until the last token they signed has expired, plus 15 minutes. No key needed.',
      },
      statuses: answers({}, 'public'),
      listed: [500],
    })
    .output(JwksOutputSchema)
    .query(async ({ ctx }) => ({ keys: await ctx.deps.identity.signingKeys.published() })),
});

// Federation policies: which external JWTs POST /oauth/token exchanges, for which key (tRPC only).
export const federationPoliciesRouter = router({
  list: managementProcedure
    .meta({ scope: 'keys:read' })
    .input(ListFederationPoliciesInputSchema)
    .output(ListFederationPoliciesOutputSchema)
    .query(({ ctx, input }) => listFederationPolicies(ctx.deps, ctx.actor, input)),

  create: managementProcedure
    .meta({ scope: 'keys:write' })
    .input(CreateFederationPolicyInputSchema.extend(IdempotencyField))
    .output(FederationPolicySchema)
    .mutation(idempotent('federationPolicies.create', ({ ctx, input }) => createFederationPolicy(ctx.deps, ctx.actor, input))),

  delete: managementProcedure
    .meta({ scope: 'keys:write' })
    .input(FederationPolicyIdInputSchema)
    .output(DeletedOutputSchema)
    .mutation(({ ctx, input }) => deleteFederationPolicy(ctx.deps, ctx.actor, input)),
});
