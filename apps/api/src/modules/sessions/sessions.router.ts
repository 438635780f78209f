// sessions.current, sessions.signOut, sessions.signOutEverywhere: tRPC only (docs/sessions.md). The
// sign-in itself is a byte route (sign-in.routes.ts): it answers a Set-Cookie.
import { CurrentSessionSchema, SignOutSchema } from '@switchyard/schema';
import { EVERY_KEY } from '../../access/rules.js';
import { authedProcedure, router } from '../../trpc/init.js';
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
    .mutation(({ ctx }) => signOut(ctx, ctx.actor)),
  /** Ends every session of the caller's person in the organization that the caller's authority covers (the ceiling). */
  signOutEverywhere: authedProcedure
    .meta({ scope: EVERY_KEY })
    .output(SignOutSchema)
    .mutation(({ ctx }) => signOutEverywhere(ctx, ctx.actor)),
});
