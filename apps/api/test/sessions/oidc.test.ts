// Signing in through the organization's identity provider (docs/sessions.md), against a real OpenID
// provider on loopback: oidc-provider, in this process, with a client registered for the test
// server's callback and a small account store. A browser is played by fetch, following redirects by
// hand and carrying each origin's cookies; the provider's login and consent are finished by a
// test-only interaction route (interactionFinished), its dev interactions off. Covers the login, the
// identity provider's settings (sealed secret, never answered), the refusals (issuer, audience,
// replayed code, state, membership, unverified e-mail, domain), the person's role (org:admin acts as
// a management key, org:member only on what every key calls about itself), a removed or deactivated
// member's session ending at once, and expiry on the server's fixed clock.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ERROR_MESSAGES, SESSION_COOKIE, SESSION_PREFIX, type Session } from '@switchyard/schema';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { createOrganization, type OrgFixture } from '../fixtures.js';
import { createScimUser, patchOp, scim, scimToken } from '../fixtures-scim.js';
import { ok, sessionCall, trpc } from '../fixtures-trpc.js';
import { finishingInteractions } from '../fixtures-openid.js';

const IDLE_MS = 10 * 60_000;
const MAX_AGE_MS = 60 * 60_000;
const CLIENT_ID = 'switchyard-console';
const CLIENT_SECRET = `secret-${randomUUID()}`;
const OTHER_CLIENT_ID = 'another-relying-party';
const OTHER_CLIENT_SECRET = `secret-${randomUUID()}`;
const DOMAIN = 'people.example';

let server: TestServer;
let other: OrgFixture;
let issuer: string;
/** A second provider, on its own port, that claims the first one's issuer in its discovery. */
let impostor: string;
const httpServers: Server[] = [];
let clock = new Date('2026-12-01T10:00:00.000Z');
const advance = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
  server.setNow(clock);
};

/** The provider's people: sub -> claims. */
const accounts = new Map<string, { email: string; email_verified: boolean }>();
const person = (email: string, verified = true) => {
  const sub = `sub-${randomUUID()}`;
  accounts.set(sub, { email, email_verified: verified });
  return sub;
};

/** A loopback http server on a free port (its handler set later, once the provider exists). */
async function listening(): Promise<{ http: Server; origin: string; handle: (h: (req: IncomingMessage, res: ServerResponse) => void) => void }> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const http = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  httpServers.push(http);
  return { http, origin: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, handle: (h) => (handler = h) };
}

/** An OpenID provider claiming `claimedIssuer`, its interactions finished by the test route `/interaction/:uid?account=<sub>`. */
function openIdProvider(claimedIssuer: string, callback: string): (req: IncomingMessage, res: ServerResponse) => void {
  const provider = new Provider(claimedIssuer, {
    clients: [
      { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [callback], token_endpoint_auth_method: 'client_secret_post' },
      { client_id: OTHER_CLIENT_ID, client_secret: OTHER_CLIENT_SECRET, redirect_uris: [callback], token_endpoint_auth_method: 'client_secret_post' },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    features: { devInteractions: { enabled: false } },
    cookies: { keys: [randomUUID()] },
    async findAccount(_ctx, sub) {
      const claims = accounts.get(sub);
      return claims ? { accountId: sub, claims: async () => ({ sub, ...claims }) } : undefined;
    },
  });
  return finishingInteractions(provider, (url) => url.searchParams.get('account')!);
}

beforeAll(async () => {
  const real = await listening();
  const fake = await listening();
  issuer = real.origin;
  impostor = fake.origin;
  server = await startTestServer({
    adminUrl: inject('pgAdminUrl'),
    template: inject('pgTemplate'),
    env: {
      SESSION_IDLE_TIMEOUT_MS: String(IDLE_MS),
      SESSION_MAX_AGE_MS: String(MAX_AGE_MS),
      UPSTREAM_ALLOWED_HOSTS: `${new URL(issuer).host},${new URL(impostor).host}`,
    },
  });
  server.setNow(clock);
  const callback = `${server.url}${SESSION_PREFIX}/oidc/callback`;
  real.handle(openIdProvider(issuer, callback));
  fake.handle(openIdProvider(issuer, callback));
  other = await createOrganization(server.db);
  await setProvider(server.managementKey);
});
afterAll(async () => {
  await server?.close();
  for (const http of httpServers) await new Promise((resolve) => http.close(resolve));
});

function setProvider(key: string, input: Partial<{ issuer: string; client_id: string; client_secret: string; allowed_email_domains: string[] }> = {}) {
  return ok(
    server,
    'sessions.setIdentityProvider',
    { issuer, client_id: CLIENT_ID, client_secret: CLIENT_SECRET, allowed_email_domains: [DOMAIN], ...input },
    { key },
  );
}

/** A browser's cookies for one origin: name -> value. */
class Jar {
  readonly #cookies = new Map<string, string>();
  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      const gone = value === '' || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (gone) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }
}

interface Browser {
  jars: Map<string, Jar>;
  /** Every answer the browser saw, in order. */
  seen: { url: string; status: number; location: string | null; body?: string }[];
}

const newBrowser = (): Browser => ({ jars: new Map(), seen: [] });
const jarOf = (browser: Browser, url: URL) => {
  let jar = browser.jars.get(url.origin);
  if (!jar) browser.jars.set(url.origin, (jar = new Jar()));
  return jar;
};

/** One GET as a browser sends it, cookies in and out; no redirect followed. */
async function visit(browser: Browser, url: URL): Promise<Response> {
  const jar = jarOf(browser, url);
  const res = await fetch(url, { redirect: 'manual', headers: jar.header() ? { cookie: jar.header() } : {} });
  jar.take(res);
  browser.seen.push({ url: url.href, status: res.status, location: res.headers.get('location') });
  return res;
}

/**
 * Follows redirects from `start` as a browser does, logging in at the provider as `account`, and
 * stops before the callback (answering its URL) when `stopAtCallback`, else at the first answer that
 * is no redirect or that leaves for the console.
 */
async function travel(browser: Browser, start: URL, account: string, stopAtCallback = false): Promise<{ res: Response; url: URL }> {
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    if (url.pathname.startsWith('/interaction/')) url.searchParams.set('account', account);
    if (stopAtCallback && url.pathname === `${SESSION_PREFIX}/oidc/callback`) return { res: new Response(null), url };
    const res = await visit(browser, url);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location || new URL(location, url).pathname === '/console') return { res, url };
    url = new URL(location, url);
  }
  throw new Error(`too many redirects: ${JSON.stringify(browser.seen)}`);
}

const startUrl = (organizationId = server.organizationId) =>
  new URL(`${server.url}${SESSION_PREFIX}/oidc/start?organization=${encodeURIComponent(organizationId)}`);

interface SignedIn {
  cookie: string;
  csrf: string;
  session: Session;
}

/** A whole sign-in as `account`; answers the session cookie and what sessions.current says. */
async function signInAs(account: string, organizationId = server.organizationId): Promise<SignedIn> {
  const browser = newBrowser();
  const { res } = await travel(browser, startUrl(organizationId), account);
  expect(res.status, JSON.stringify(browser.seen)).toBe(302);
  expect(res.headers.get('location')).toBe('/console');
  const token = jarOf(browser, new URL(server.url)).get(SESSION_COOKIE)!;
  expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  const cookie = `${SESSION_COOKIE}=${token}`;
  const me = await call('sessions.current', undefined, { cookie }, true);
  expect(me.status, JSON.stringify(me.error)).toBe(200);
  const session = (me.data as { session: Session }).session;
  return { cookie, csrf: session.csrf_token, session };
}

/** A sign-in that ends in an error answer: its status and envelope. */
async function refusedSignIn(
  account: string,
  organizationId = server.organizationId,
): Promise<{ status: number; error: { code: number; message: string; metadata?: { reason?: string } } }> {
  const browser = newBrowser();
  const { res } = await travel(browser, startUrl(organizationId), account);
  expect(jarOf(browser, new URL(server.url)).get(SESSION_COOKIE)).toBeUndefined();
  const body = (await res.json()) as { error: { code: number; message: string; metadata?: { reason?: string } } };
  return { status: res.status, error: body.error };
}

const call = (path: string, input: unknown, as: { cookie: string; csrf?: string }, query = false) => sessionCall(server, path, input, as, query);

/** A member of the server's organization with an e-mail of the allowed domain, and their account at the provider. */
async function member(role: 'org:admin' | 'org:member' = 'org:admin', verified = true): Promise<{ userId: string; sub: string; email: string }> {
  const email = `p-${randomUUID().slice(0, 8)}@${DOMAIN}`;
  const made = await ok(server, 'organization.createMember', { email, role });
  return { userId: made.id, sub: person(email, verified), email };
}

describe("the organization's identity provider (settings)", () => {
  it('answers the settings without the secret (a masked label, has_secret), and audits the write without it', async () => {
    const read = await ok(server, 'sessions.identityProvider', undefined, { query: true });
    expect(read.data).toMatchObject({
      organization_id: server.organizationId,
      issuer,
      client_id: CLIENT_ID,
      has_secret: true,
      client_secret_label: `${CLIENT_SECRET.slice(0, 3)}...${CLIENT_SECRET.slice(-4)}`,
      allowed_email_domains: [DOMAIN],
      redirect_uri_path: `${SESSION_PREFIX}/oidc/callback`,
    });
    expect(JSON.stringify(read)).not.toContain(CLIENT_SECRET);
    const row = await server.db.oidcProvider.findUniqueOrThrow({ where: { organization_id: server.organizationId } });
    expect(row.client_secret_sealed).toMatch(/^v1\./);
    expect(row.client_secret_sealed).not.toContain(CLIENT_SECRET);
    const entry = await server.db.auditLog.findFirstOrThrow({ where: { organization_id: server.organizationId, action: 'sessions.setIdentityProvider' } });
    expect(JSON.stringify(entry.changes)).not.toContain(CLIENT_SECRET);
  });

  it('refuses an issuer the upstream policy would not fetch (http to a host UPSTREAM_ALLOWED_HOSTS does not name), and a scoped key (403)', async () => {
    const http = await trpc(server, 'sessions.setIdentityProvider', {
      issuer: 'http://127.0.0.1:9/',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      allowed_email_domains: [DOMAIN],
    });
    expect(http.status).toBe(400);
    const scoped = await ok(server, 'keys.create', { name: `scim-${randomUUID().slice(0, 6)}`, is_management_key: true, scopes: ['scim:write'] });
    const refused = await trpc(
      server,
      'sessions.setIdentityProvider',
      { issuer, client_id: CLIENT_ID, client_secret: CLIENT_SECRET, allowed_email_domains: [DOMAIN] },
      { key: scoped.key },
    );
    expect(refused.status).toBe(403);
  });
});

describe('signing in through the identity provider', () => {
  it('ends with the session cookie, acting as the person in that organization with their role; org:admin does what a management key does', async () => {
    const admin = await member('org:admin');
    const browser = newBrowser();
    const start = await visit(browser, startUrl());
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(authorize.searchParams.get('client_id')).toBe(CLIENT_ID);
    const loginCookie = start.headers.getSetCookie().find((c) => c.startsWith('switchyard_oidc_login='))!;
    expect(loginCookie).toContain('HttpOnly');
    expect(loginCookie).toContain('SameSite=Lax');

    const { res } = await travel(browser, authorize, admin.sub);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/console');
    const set = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(set).toContain('HttpOnly');
    expect(set).toContain('SameSite=Strict');
    const cookie = set.split(';')[0]!;

    const me = await call('sessions.current', undefined, { cookie }, true);
    expect(me.data).toMatchObject({
      organization_id: server.organizationId,
      user_id: admin.userId,
      session: { method: 'oidc', role: 'org:admin', key_hash: null, user_id: admin.userId },
    });
    const csrf = (me.data as { session: Session }).session.csrf_token;
    // A management operation, and a write (with the CSRF token), as the person.
    expect((await call('keys.list', {}, { cookie }, true)).status).toBe(200);
    const slug = `ws-${randomUUID().slice(0, 6)}`;
    const withoutCsrf = await call('workspaces.create', { slug, name: 'By a person' }, { cookie });
    expect(withoutCsrf.status).toBe(403);
    const made = await call('workspaces.create', { slug, name: 'By a person' }, { cookie, csrf });
    expect(made.status, JSON.stringify(made.error)).toBe(200);
    // Within the ceiling of an unscoped management key: it makes one, created by the person.
    const key = await call('keys.create', { name: `by-${randomUUID().slice(0, 6)}`, is_management_key: true }, { cookie, csrf });
    expect(key.status, JSON.stringify(key.error)).toBe(200);
    expect((key.data as { data: { creator_user_id: string } }).data.creator_user_id).toBe(admin.userId);
    const entry = await server.db.auditLog.findFirstOrThrow({
      where: { action: 'workspaces.create', target_id: (made.data as { data: { id: string } }).data.id },
    });
    expect(entry).toMatchObject({ actor_kind: 'session', actor_user_id: admin.userId, actor_key_hash: null });
    const signIn = await server.db.auditLog.findFirstOrThrow({ where: { action: 'sessions.signIn', actor_user_id: admin.userId } });
    expect(signIn.changes).toMatchObject({ after: { method: 'oidc', role: 'org:admin', issuer, sub: admin.sub } });
    // Linked by (issuer, sub).
    expect(await server.db.oidcIdentity.findUnique({ where: { issuer_sub: { issuer, sub: admin.sub } } })).toMatchObject({ user_id: admin.userId });
  });

  it('an org:member session calls only what every key calls about itself: 403 elsewhere, with the reason', async () => {
    const plain = await member('org:member');
    const signed = await signInAs(plain.sub);
    expect(signed.session.role).toBe('org:member');
    const list = await call('keys.list', {}, signed, true);
    expect(list.status).toBe(403);
    expect(String(list.error?.data.metadata?.reason)).toContain("an org:member's session calls only");
    // It has no key to describe: keys.current says so (403), sessions.current says who it is.
    const key = await call('keys.current', undefined, signed, true);
    expect(key.status).toBe(403);
    expect(String(key.error?.data.metadata?.reason)).toContain('has no key');
    expect((await call('sessions.signOut', undefined, signed)).data).toEqual({ ended: 1 });
    expect((await call('sessions.current', undefined, signed, true)).status).toBe(401);
  });

  it('refuses a provider whose discovery names another issuer (401 in the envelope; no redirect)', async () => {
    await setProvider(server.managementKey, { issuer: impostor });
    try {
      const res = await visit(newBrowser(), startUrl());
      expect(res.status).toBe(401);
      const body = (await res.json()) as { error: { code: number; message: string; metadata: { reason: string } } };
      expect(body.error.message).toBe(ERROR_MESSAGES[401]);
      expect(body.error.metadata.reason).toMatch(/discovery failed.*issuer/);
    } finally {
      await setProvider(server.managementKey);
    }
  });

  it('refuses a code issued to another client (audience): the exchange fails, no session', async () => {
    const admin = await member();
    const browser = newBrowser();
    const { url } = await travel(browser, startUrl(), admin.sub, true);
    await setProvider(server.managementKey, { client_id: OTHER_CLIENT_ID, client_secret: OTHER_CLIENT_SECRET });
    try {
      const res = await visit(browser, url);
      expect(res.status).toBe(401);
      expect(jarOf(browser, new URL(server.url)).get(SESSION_COOKIE)).toBeUndefined();
    } finally {
      await setProvider(server.managementKey);
    }
  });

  it('refuses a replayed code (with the same login cookie), and a callback without its login cookie (400)', async () => {
    const admin = await member();
    const browser = newBrowser();
    const { url } = await travel(browser, startUrl(), admin.sub, true);
    const loginCookie = jarOf(browser, new URL(server.url)).header();
    const first = await visit(browser, url);
    expect(first.status).toBe(302);
    const replay = await fetch(url, { redirect: 'manual', headers: { cookie: loginCookie } });
    expect(replay.status).toBe(401);
    expect(replay.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false);
    // A refused callback clears the login cookie too: it serves one callback.
    expect(replay.headers.getSetCookie()).toContainEqual(expect.stringMatching(/^switchyard_oidc_login=;.*Max-Age=0/));
    const bare = await fetch(url, { redirect: 'manual' });
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as { error: { metadata: { reason: string } } }).error.metadata.reason).toContain('no sign-in in progress');
  });

  it('refuses a state that is not the sign-in’s', async () => {
    const admin = await member();
    const browser = newBrowser();
    const { url } = await travel(browser, startUrl(), admin.sub, true);
    url.searchParams.set('state', 'not-the-state');
    const res = await visit(browser, url);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { metadata: { reason: string } } }).error.metadata.reason).toMatch(/state/);
  });

  it('refuses a person who is not a member of the organization (a user of another organization), 403', async () => {
    const email = `o-${randomUUID().slice(0, 8)}@${DOMAIN}`;
    await ok(server, 'organization.createMember', { email }, { key: other.managementKey });
    const refused = await refusedSignIn(person(email));
    expect(refused.status).toBe(403);
    expect(refused.error.metadata?.reason).toBe('the person is not a member of the organization');
    // A verified e-mail of an allowed domain that names no user at all.
    expect((await refusedSignIn(person(`nobody-${randomUUID().slice(0, 6)}@${DOMAIN}`))).status).toBe(403);
  });

  it('on first sign-in, refuses an unverified e-mail and a domain not allowed (403), and links nothing', async () => {
    const unverified = await member('org:admin', false);
    const refused = await refusedSignIn(unverified.sub);
    expect(refused.status).toBe(403);
    expect(refused.error.metadata?.reason).toContain('not verified');
    const email = `x-${randomUUID().slice(0, 8)}@elsewhere.example`;
    await ok(server, 'organization.createMember', { email, role: 'org:admin' });
    const sub = person(email);
    const domain = await refusedSignIn(sub);
    expect(domain.status).toBe(403);
    expect(domain.error.metadata?.reason).toContain('domain is not allowed');
    expect(await server.db.oidcIdentity.count({ where: { sub: { in: [unverified.sub, sub] } } })).toBe(0);
  });

  it("ends a removed member's sessions at once, and those of a person SCIM deactivates or deletes", async () => {
    const removed = await member('org:admin');
    const signed = await signInAs(removed.sub);
    await ok(server, 'organization.removeMember', { user_id: removed.userId });
    const after = await call('sessions.current', undefined, signed, true);
    expect(after.status).toBe(401);
    expect(after.error?.message).toBe(ERROR_MESSAGES[401]);

    const token = await scimToken(server);
    for (const deprovision of ['deactivate', 'delete'] as const) {
      const email = `s-${randomUUID().slice(0, 8)}@${DOMAIN}`;
      const provisioned = await createScimUser(server, token, email);
      const session = await signInAs(person(email));
      expect((await call('sessions.current', undefined, session, true)).status).toBe(200);
      const answer =
        deprovision === 'delete'
          ? await scim(server, token, `/Users/${provisioned.id}`, { method: 'DELETE' })
          : await scim(server, token, `/Users/${provisioned.id}`, { method: 'PATCH', body: patchOp({ op: 'replace', path: 'active', value: false }) });
      expect(answer.status, deprovision).toBeLessThan(300);
      expect((await call('sessions.current', undefined, session, true)).status, deprovision).toBe(401);
    }
  });

  it('a session ends at its idle end and at its absolute end (the fixed clock)', async () => {
    const admin = await member('org:admin');
    const idle = await signInAs(admin.sub);
    advance(IDLE_MS);
    expect((await call('sessions.current', undefined, idle, true)).status).toBe(401);

    const kept = await signInAs(admin.sub);
    expect(kept.session.expires_at).toBe(new Date(clock.getTime() + MAX_AGE_MS).toISOString());
    const end = clock.getTime() + MAX_AGE_MS;
    while (clock.getTime() + IDLE_MS / 2 < end) {
      advance(IDLE_MS / 2);
      expect((await call('sessions.current', undefined, kept, true)).status).toBe(200);
    }
    advance(end - clock.getTime());
    expect((await call('sessions.current', undefined, kept, true)).status).toBe(401);
  });
});
