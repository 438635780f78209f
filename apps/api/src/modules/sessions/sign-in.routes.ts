// POST /session/sign-in (docs/sessions.md): a browser exchanges a management key, once, for a
// session. A byte route, not a procedure, because its answer sets the session cookie: a route owns
// its response (docs/decisions/0044-sessions-sign-in-is-a-byte-route.md). Its bearer is the key;
// the route's rule (management) refuses every other caller before the handler runs: no key 401, a
// regular key or a platform key 403, an access token 403. A session cookie is never read here, so
// a session cannot make another (which would outlive its own absolute end).
import { SESSION_COOKIE } from '@switchyard/schema';
import { credentialOf } from '../../access/credentials.js';
import { EVERY_KEY } from '../../access/rules.js';
import { Forbidden } from '../../lib/errors.js';
import type { RawRoute } from '../../raw-routes/route.js';
import { signIn } from './sessions.service.js';

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (a browser sends it on no
 * request another site starts: the console is served from this origin, so nothing it needs is
 * lost), Path=/, Secure when the request came over https (req.secure: through TRUST_PROXY's proxies
 * as everywhere else), and a Max-Age that ends it with the session's absolute end.
 */
export function sessionCookie(token: string, maxAgeMs: number, secure: boolean): string {
  const attributes = [`${SESSION_COOKIE}=${token}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${Math.floor(maxAgeMs / 1000)}`];
  if (secure) attributes.push('Secure');
  return attributes.join('; ');
}

export const SIGN_IN_ROUTES: readonly RawRoute[] = [
  {
    method: 'post',
    path: '/sign-in',
    access: 'management',
    scope: EVERY_KEY,
    async handle(deps, req, res, actor) {
      // It reads no body.
      req.resume();
      const secretHash = credentialOf(req).keyHash;
      const found = secretHash ? await deps.keys.find(deps.db, secretHash) : null;
      // A former secret still in a rotation's grace period authenticates, but a session made from
      // it would end at its first use (a rotation ends the key's sessions).
      if (!secretHash || found?.kind !== 'tenant' || found.secretExpiresAt !== null) {
        const reason = "a rotated key's former secret cannot sign in: use its current secret";
        throw new Forbidden(reason, undefined, { reason });
      }
      const { token, session } = await signIn(deps, actor, { secretHash });
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Set-Cookie', sessionCookie(token, Date.parse(session.expires_at) - deps.now().getTime(), req.secure));
      res.status(201).json({ data: session });
    },
  },
];
