// Signing in through the organization's identity provider (docs/sessions.md): the authorization-code
// flow with PKCE (S256), a state and a nonce, as a relying party through openid-client. Every call to
// the provider (discovery, the token endpoint, its JWKS, UserInfo) goes through the upstream policy
// (upstreamFetch: the allowed hosts, the server's own addresses refused, no redirects, a deadline, a
// bounded answer), since its URL is a tenant's; plain http only where that policy allows it.
//
// What the start hands the callback (the organization, state, nonce, PKCE verifier, its end) rides
// in a short-lived cookie sealed with the secret box: nothing is stored for a sign-in that is never
// finished, and a cookie forged, altered or of another sign-in does not open.
import type { Db } from '@switchyard/db';
import { OIDC_CALLBACK_PATH, SESSION_PREFIX, type Session } from '@switchyard/schema';
import * as client from 'openid-client';
import type { Actor } from '../../access/callers.js';
import { personActorKey, type PersonRole } from '../../access/ceiling.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import { csrfTokenOf, newSessionToken, sessionTokenHash, type SessionRef } from '../../access/sessions.js';
import { Forbidden, Invalid, NotFound, Unauthorized } from '../../lib/errors.js';
import type { Uses } from '../../trpc/context.js';
import { storedUrlProblem, upstreamFetch, upstreamPolicyOf } from '../../upstream/index.js';
import { appendAudit, auditOfTenant } from '../audit/audit.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { clientSecretAd, providerOf } from './identity-provider-row.js';
import { answerOf } from './session-answer.js';

/** The cookie that carries a sign-in's sealed state from the start to the callback. */
export const OIDC_LOGIN_COOKIE = 'switchyard_oidc_login';
/** How long a sign-in may take at the provider. */
export const OIDC_LOGIN_TTL_MS = 10 * 60_000;
const LOGIN_AD = 'oidc-login';

interface LoginState {
  organizationId: string;
  state: string;
  nonce: string;
  verifier: string;
  /** Its end (ms since the epoch, the server's clock). */
  endsAt: number;
}

/** What the sign-in reads of the person: the ID token's sub, and the e-mail and whether it is verified. */
interface Claims {
  sub: string;
  email?: unknown;
  email_verified?: unknown;
}

type Deps = Uses<'db' | 'secrets' | 'media' | 'now'>;

/** openid-client's fetch, through the upstream policy (Fetch API in, Fetch API out). */
function guardedFetch(deps: Pick<Deps, 'media'>): client.CustomFetch {
  const policy = upstreamPolicyOf(deps.media);
  return async (url, options) => {
    const body = options.body;
    const answer = await upstreamFetch(policy, url, {
      method: options.method,
      headers: options.headers,
      body:
        body === undefined || body === null
          ? undefined
          : typeof body === 'string'
            ? body
            : body instanceof URLSearchParams
              ? body.toString()
              : Buffer.from(body as ArrayBuffer),
      signal: options.signal ?? undefined,
      maxBodyBytes: 512 * 1024,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
    }
    return new Response(answer.status === 204 || answer.status === 304 ? null : new Uint8Array(answer.body), { status: answer.status, headers });
  };
}

/**
 * The provider's configuration (discovery at <issuer>/.well-known/openid-configuration; its
 * `issuer` must be the configured one, openid-client checks it), with the client's credentials.
 */
async function configurationOf(deps: Deps, organizationId: string): Promise<client.Configuration> {
  const provider = await providerOf(deps.db, { organizationId });
  if (!provider) throw new NotFound('the organization has no identity provider');
  const customFetch = guardedFetch(deps);
  // Plain http only where the upstream policy allows it: a loopback host UPSTREAM_ALLOWED_HOSTS names.
  const insecure = new URL(provider.issuer).protocol === 'http:';
  if (insecure && storedUrlProblem(provider.issuer, deps.media.upstreamAllowedHosts)) {
    throw new Unauthorized('the identity provider is not reachable under the upstream policy');
  }
  const secret = deps.secrets.open(provider.client_secret_sealed, clientSecretAd(organizationId));
  try {
    return await client.discovery(new URL(provider.issuer), provider.client_id, undefined, client.ClientSecretPost(secret), {
      [client.customFetch]: customFetch,
      execute: insecure ? [client.allowInsecureRequests] : [],
    });
  } catch (error) {
    throw refusedBy('discovery', error);
  }
}

/** A failure of the provider's flow as a 401, what went wrong in error.metadata.reason. */
function refusedBy(step: string, error: unknown): Unauthorized | NotFound {
  if (error instanceof NotFound || error instanceof Unauthorized) return error as Unauthorized;
  const message = error instanceof Error ? error.message : String(error);
  // openid-client wraps what it found wrong (the state, the issuer, the audience...) as the cause.
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return new Unauthorized(`identity provider ${step} failed: ${message}${cause}`);
}

/** The organization of a sign-in, by its id (401 if it has none or no provider: nothing to say about others). */
async function organizationOf(db: Db, organization: string): Promise<string> {
  const row = await db.organization.findUnique({ where: { id: organization }, select: { id: true, disabled_at: true } });
  if (!row || row.disabled_at) throw new NotFound('no such organization');
  return row.id;
}

/**
 * The start: where to send the browser (the provider's authorization endpoint) and the sealed
 * state for the login cookie. `origin` is this server's as the browser sees it (the callback's).
 */
export async function startSignIn(deps: Deps, organization: string, origin: string): Promise<{ location: string; cookie: string }> {
  const organizationId = await organizationOf(deps.db, organization);
  const config = await configurationOf(deps, organizationId);
  const login: LoginState = {
    organizationId,
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier: client.randomPKCECodeVerifier(),
    endsAt: deps.now().getTime() + OIDC_LOGIN_TTL_MS,
  };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${origin}${SESSION_PREFIX}${OIDC_CALLBACK_PATH}`,
    scope: 'openid email',
    state: login.state,
    nonce: login.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(login.verifier),
    code_challenge_method: 'S256',
  });
  return { location: url.href, cookie: sealLogin(deps.secrets, login) };
}

function sealLogin(box: SecretBox, login: LoginState): string {
  return Buffer.from(box.seal(JSON.stringify(login), LOGIN_AD)).toString('base64url');
}

function openLogin(box: SecretBox, sealed: string | null, now: Date): LoginState {
  if (!sealed) throw new Invalid('no sign-in in progress (its cookie is missing): start again');
  let login: LoginState;
  try {
    login = JSON.parse(box.open(Buffer.from(sealed, 'base64url').toString(), LOGIN_AD)) as LoginState;
  } catch {
    throw new Invalid("the sign-in's cookie does not open: start again");
  }
  if (login.endsAt <= now.getTime()) throw new Invalid('the sign-in took too long: start again');
  return login;
}

/**
 * The callback: exchanges the code (PKCE verifier, state and nonce checked; the ID token's issuer,
 * audience, signature and times checked by openid-client), links the person by (issuer, sub) and
 * makes their session in the organization. On first sign-in the e-mail must be verified and of an
 * allowed domain, and name a user; the user must be a member (not deactivated) of the organization.
 */
export async function finishSignIn(
  deps: Uses<'db' | 'secrets' | 'media' | 'now' | 'sessionLifetimes' | 'requestId' | 'clientAddress'>,
  sealedLogin: string | null,
  currentUrl: URL,
): Promise<{ token: string; session: Session }> {
  const login = openLogin(deps.secrets, sealedLogin, deps.now());
  const config = await configurationOf(deps, login.organizationId);
  let claims: Claims;
  try {
    const tokens = await client.authorizationCodeGrant(config, currentUrl, {
      pkceCodeVerifier: login.verifier,
      expectedState: login.state,
      expectedNonce: login.nonce,
      idTokenExpected: true,
    });
    const idToken = tokens.claims()!;
    claims = idToken;
    // Providers that answer the email scope's claims from the UserInfo endpoint rather than in the
    // ID token (oidc-provider does, once an access token is issued): asked there, for the same sub.
    if (idToken.email === undefined) {
      const info = await client.fetchUserInfo(config, tokens.access_token, idToken.sub);
      claims = { sub: idToken.sub, email: info.email, email_verified: info.email_verified };
    }
  } catch (error) {
    throw refusedBy('sign-in', error);
  }
  const issuer = config.serverMetadata().issuer;
  const tenant = { organizationId: login.organizationId };
  const provider = (await providerOf(deps.db, tenant))!;
  const userId = await linkedUser(deps.db, issuer, claims, provider.allowed_email_domains);
  const member = await deps.db.organizationMember.findUnique({
    where: { organization_id_user_id: { ...tenantWhere(tenant), user_id: userId } },
    select: { role: true, scim_user: { select: { active: true } } },
  });
  if (!member || member.scim_user?.active === false) {
    const reason = 'the person is not a member of the organization';
    throw new Forbidden(reason, undefined, { reason });
  }
  return createPersonSession(deps, login.organizationId, userId, member.role === 'admin' ? 'org:admin' : 'org:member', issuer, claims.sub);
}

/** The user of (issuer, sub): linked before, or linked now by a verified e-mail of an allowed domain. */
async function linkedUser(db: Db, issuer: string, claims: Claims, allowedDomains: readonly string[]): Promise<string> {
  const linked = await db.oidcIdentity.findUnique({ where: { issuer_sub: { issuer, sub: claims.sub } }, select: { user_id: true } });
  if (linked) return linked.user_id;
  const refuse = (reason: string) => new Forbidden(reason, undefined, { reason });
  const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : null;
  if (!email) throw refuse('the identity provider gave no e-mail (scope email)');
  if (claims.email_verified !== true) throw refuse("the person's e-mail is not verified at the identity provider");
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (!allowedDomains.includes(domain)) throw refuse("the person's e-mail domain is not allowed by the organization");
  const user = await db.user.findFirst({ where: { email: { equals: email, mode: 'insensitive' } }, select: { id: true } });
  if (!user) throw refuse('the person is not a member of the organization');
  // Two first sign-ins at once link once; the loser reads the winner's link.
  await db.oidcIdentity.createMany({ data: [{ issuer, sub: claims.sub, user_id: user.id }], skipDuplicates: true });
  const now = await db.oidcIdentity.findUniqueOrThrow({ where: { issuer_sub: { issuer, sub: claims.sub } }, select: { user_id: true } });
  return now.user_id;
}

async function createPersonSession(
  deps: Uses<'db' | 'now' | 'sessionLifetimes' | 'requestId' | 'clientAddress'>,
  organizationId: string,
  userId: string,
  role: PersonRole,
  issuer: string,
  sub: string,
): Promise<{ token: string; session: Session }> {
  const organization = await deps.db.organization.findUniqueOrThrow({ where: { id: organizationId }, select: { default_workspace_id: true } });
  const token = newSessionToken();
  const now = deps.now();
  const { idleMs, maxAgeMs } = deps.sessionLifetimes;
  const expiresAt = new Date(now.getTime() + maxAgeMs);
  const idleExpiresAt = new Date(Math.min(now.getTime() + idleMs, expiresAt.getTime()));
  const row = await deps.db.$transaction(async (tx) => {
    const made = await tx.session.create({
      data: {
        token_hash: sessionTokenHash(token),
        ...tenantData({ organizationId }),
        user_id: userId,
        method: 'oidc',
        created_at: now,
        last_seen_at: now,
        idle_expires_at: idleExpiresAt,
        expires_at: expiresAt,
      },
      select: { id: true },
    });
    const ref: SessionRef = { id: made.id, method: 'oidc', role, createdAt: now, idleExpiresAt, expiresAt, csrfToken: csrfTokenOf(token) };
    const actor: Actor = {
      kind: 'tenant',
      key: personActorKey(role, { sessionId: made.id, organizationId, workspaceId: organization.default_workspace_id!, userId, createdAt: now }),
      organizationId,
      workspaceId: organization.default_workspace_id!,
      userId,
      via: 'session',
      session: ref,
    };
    await appendAudit(tx, auditOfTenant(actor, deps), {
      action: 'sessions.signIn',
      targetType: 'session',
      targetId: made.id,
      changes: { after: { method: 'oidc', user_id: userId, role, issuer, sub, expires_at: expiresAt.toISOString() } },
    });
    return { actor, ref };
  });
  return { token, session: answerOf(row.actor, row.ref) };
}
