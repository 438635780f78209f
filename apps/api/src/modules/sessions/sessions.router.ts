// sessions.current, sessions.signOut, sessions.signOutEverywhere: tRPC only (docs/sessions.md). The
// sign-in itself is a byte route (sign-in.routes.ts, oidc.routes.ts): it answers a Set-Cookie. The
// organization's identity provider: sessions.identityProvider, setIdentityProvider,
// deleteIdentityProvider (tRPC only; the scope of the organization's provisioning, scim).
import {
  CurrentSessionSchema,
  DeleteIdentityProviderOutputSchema,
  IdentityProviderOutputSchema,
  SetIdentityProviderInputSchema,
  SetIdentityProviderOutputSchema,
  SignOutSchema,
} from '@switchyard/schema';
import { EVERY_KEY } from '../../access/rules.js';
import { authedProcedure, managementProcedure, router } from '../../trpc/init.js';
import { deleteIdentityProvider, getIdentityProvider, setIdentityProvider } from './identity-provider.service.js';
import { currentSession } from './session-answer.js';
import { signOut, signOutEverywhere } from './sessions.service.js';

export const sessionsRouter = router({
  /** Who is calling, and with which session (its CSRF token with it, for a console that reloaded). */
  current: authedProcedure
    .meta({ scope: EVERY_KEY })
    .output(CurrentSessionSchema)
    .query(({ ctx }) => currentSession(ctx.actor)),
  /** Ends the session the call is made with (a call made with a key ends none). */
  signOut: authedProcedure
    .meta({ scope: EVERY_KEY })
    .output(SignOutSchema)
    .mutation(({ ctx }) => signOut(ctx.deps, ctx.actor)),
  /** Ends every session of the caller's person in the organization that the caller's authority covers (the ceiling). */
  signOutEverywhere: authedProcedure
    .meta({ scope: EVERY_KEY })
    .output(SignOutSchema)
    .mutation(({ ctx }) => signOutEverywhere(ctx.deps, ctx.actor)),
  /** The organization's OpenID Connect identity provider, its client secret never answered (null: none). */
  identityProvider: managementProcedure
    .meta({ scope: 'scim:read' })
    .output(IdentityProviderOutputSchema)
    .query(({ ctx }) => getIdentityProvider(ctx.deps, ctx.actor)),
  /** Sets the organization's identity provider (an unscoped management key: it decides who signs in as its people). */
  setIdentityProvider: managementProcedure
    .meta({ scope: 'scim:write' })
    .input(SetIdentityProviderInputSchema)
    .output(SetIdentityProviderOutputSchema)
    .mutation(({ ctx, input }) => setIdentityProvider(ctx.deps, ctx.actor, input)),
  /** Deletes it: nobody signs in through it any more. */
  deleteIdentityProvider: managementProcedure
    .meta({ scope: 'scim:write' })
    .output(DeleteIdentityProviderOutputSchema)
    .mutation(({ ctx }) => deleteIdentityProvider(ctx.deps, ctx.actor)),
});
