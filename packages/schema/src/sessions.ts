// Sessions for people (docs/sessions.md): a browser signs in once (POST /session/sign-in with a
// management key) and then calls /trpc with an HttpOnly cookie instead of a key, sending the CSRF
// token in a header on every state-changing call.
import { z } from 'zod';
import { TimestampSchema } from './common.js';

/** The cookie that carries a session's token (HttpOnly: scripts never read it). */
export const SESSION_COOKIE = 'switchyard_session';

/** The header a state-changing call made with a session cookie carries its session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

export const SESSION_METHODS = ['key', 'oidc'] as const;

export const SessionSchema = z
  .object({
    id: z.string().describe('The session id (not its token, which only the cookie carries)'),
    organization_id: z.string(),
    user_id: z.string().describe('The person the session acts as (a key-made session: the key’s creator)'),
    method: z.enum(SESSION_METHODS).describe('How it was made: key (a management key exchanged once) or oidc (the organization’s identity provider)'),
    key_hash: z.string().nullable().describe('A key-made session’s key (its stable hash); null otherwise'),
    created_at: TimestampSchema,
    idle_expires_at: TimestampSchema.describe('It ends unless used before this (moved forward by each use, never past expires_at)'),
    expires_at: TimestampSchema.describe('Its absolute end, which use never moves'),
    csrf_token: z.string().describe('Send it back in the X-CSRF-Token header on every state-changing call made with the session'),
  })
  .describe('A signed-in session');
export type Session = z.infer<typeof SessionSchema>;

export const CurrentSessionSchema = z
  .object({
    organization_id: z.string(),
    user_id: z.string(),
    session: SessionSchema.nullable().describe('The session the call was made with; null for a call made with a key'),
  })
  .describe('Who is calling');
export type CurrentSession = z.infer<typeof CurrentSessionSchema>;

export const SignOutSchema = z.object({ ended: z.number().int().describe('How many sessions this ended') });
