// GET /session/oidc/start and GET /session/oidc/callback (docs/sessions.md): signing in through the
// organization's identity provider. Byte routes, like the key sign-in (decision 0044): their answers
// are redirects that set cookies. Public: a browser on its way to sign in holds no credential; the
// start's input is the organization, the callback's the provider's code with the sealed login
// cookie the start set. A refusal answers in the error envelope (JSON), with its status and why in
// error.metadata.reason; nothing is redirected on a failure.
import { OIDC_CALLBACK_PATH, OIDC_START_PATH, SESSION_PREFIX } from '@switchyard/schema';
import type { Request } from 'express';
import { Invalid } from '../../lib/errors.js';
import type { RawRoute } from '../../raw-routes/route.js';
import { finishSignIn, OIDC_LOGIN_COOKIE, OIDC_LOGIN_TTL_MS, startSignIn } from './oidc-sign-in.js';
import { sessionCookie } from './sign-in.routes.js';

/** Where a signed-in browser goes: the console, served from this origin. */
export const CONSOLE_PATH = '/console';

/** This server's origin as the browser sees it (through TRUST_PROXY's proxies, as req.secure is). */
function originOf(req: Request): string {
  return `${req.protocol}://${req.get('host')}`;
}

/**
 * The login cookie: only the callback reads it (Path), HttpOnly, SameSite=Lax because the callback
 * is a top-level navigation the provider's site starts (Strict would not send it), and it lives as
 * long as a sign-in may take.
 */
function loginCookie(value: string, maxAgeMs: number, secure: boolean): string {
  const attributes = [`${OIDC_LOGIN_COOKIE}=${value}`, `Path=${SESSION_PREFIX}/oidc`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${Math.floor(maxAgeMs / 1000)}`];
  if (secure) attributes.push('Secure');
  return attributes.join('; ');
}

function loginCookieOf(req: Request): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === OIDC_LOGIN_COOKIE) return part.slice(at + 1).trim() || null;
  }
  return null;
}

export const OIDC_ROUTES: readonly RawRoute[] = [
  {
    method: 'get',
    path: OIDC_START_PATH,
    access: 'public',
    async handle(deps, req, res) {
      const organization = typeof req.query.organization === 'string' ? req.query.organization : '';
      if (!organization) throw new Invalid('the query parameter organization (the organization id) is required');
      const { location, cookie } = await startSignIn(deps, organization, originOf(req));
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Set-Cookie', loginCookie(cookie, OIDC_LOGIN_TTL_MS, req.secure));
      res.redirect(302, location);
    },
  },
  {
    method: 'get',
    path: OIDC_CALLBACK_PATH,
    access: 'public',
    async handle(deps, req, res) {
      res.setHeader('Cache-Control', 'no-store');
      // A login cookie serves one callback, whatever its outcome.
      res.setHeader('Set-Cookie', loginCookie('', 0, req.secure));
      const currentUrl = new URL(req.originalUrl, originOf(req));
      const { token, session } = await finishSignIn(deps, loginCookieOf(req), currentUrl);
      res.setHeader('Set-Cookie', [loginCookie('', 0, req.secure), sessionCookie(token, Date.parse(session.expires_at) - deps.now().getTime(), req.secure)]);
      res.redirect(302, CONSOLE_PATH);
    },
  },
];
