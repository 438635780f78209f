// Which views the console shows a person (docs/console.md, "Which views a session sees"), in
// Chromium: a person signs in through the organization's identity provider (a real OpenID provider,
// oidc-provider, on loopback; its login finished for the person by the test's interaction route),
// and the console shows the views of the person's role. An org:member sees only their session (the
// server refuses a member the rest), and another view's URL is "not found" with no call refused; an
// org:admin sees every view and its data.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { scaled } from '@switchyard/db/testing';
import { SESSION_PREFIX } from '@switchyard/schema';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { BROWSER_SKIP_REASON, launchChromium, noBrowser } from '../fixtures-browser.js';
import { ok } from '../fixtures-trpc.js';
import { finishingInteractions } from '../fixtures-openid.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const VIEWS = JSON.parse(readFileSync(path.join(ROOT, 'apps/console/src/views.json'), 'utf8')) as { path: string; title: string; roles: string[] }[];
const CLIENT_ID = 'switchyard-console';
const CLIENT_SECRET = `secret-${randomUUID()}`;
const DOMAIN = 'people.example';
const wait = { timeout: scaled(30_000) };

let server: TestServer;
let http: Server;
let issuer: string;
/** The provider's people: sub -> claims. */
const accounts = new Map<string, { email: string; email_verified: boolean }>();
/** Whom the provider's login signs in next. */
let signingIn = '';

/** The provider's login and consent, finished at once for `signingIn` (its own pages are off). */
function openIdProvider(callback: string): (req: IncomingMessage, res: ServerResponse) => void {
  const provider = new Provider(issuer, {
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [callback], token_endpoint_auth_method: 'client_secret_post' }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    features: { devInteractions: { enabled: false } },
    cookies: { keys: [randomUUID()] },
    async findAccount(_ctx, sub) {
      const claims = accounts.get(sub);
      return claims ? { accountId: sub, claims: async () => ({ sub, ...claims }) } : undefined;
    },
  });
  return finishingInteractions(provider, () => signingIn);
}

beforeAll(async () => {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  http = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  server = await startTestServer({
    adminUrl: inject('pgAdminUrl'),
    template: inject('pgTemplate'),
    env: { UPSTREAM_ALLOWED_HOSTS: new URL(issuer).host },
  });
  handler = openIdProvider(`${server.url}${SESSION_PREFIX}/oidc/callback`);
  await ok(server, 'sessions.setIdentityProvider', { issuer, client_id: CLIENT_ID, client_secret: CLIENT_SECRET, allowed_email_domains: [DOMAIN] });
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => http?.close(resolve));
});

/** A member of the organization with this role, and their account at the provider. */
async function person(role: 'org:admin' | 'org:member'): Promise<string> {
  const email = `p-${randomUUID().slice(0, 8)}@${DOMAIN}`;
  await ok(server, 'organization.createMember', { email, role });
  const sub = `sub-${randomUUID()}`;
  accounts.set(sub, { email, email_verified: true });
  return sub;
}

/** Chromium signed in as the person, through the provider, on the console's first view. */
async function signedIn(sub: string) {
  const browser = await launchChromium({ width: 1280, height: 800 });
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const refused: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) refused.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  signingIn = sub;
  await page.goto(`${server.url}${SESSION_PREFIX}/oidc/start?organization=${encodeURIComponent(server.organizationId)}`);
  await page.getByRole('navigation', { name: 'Views' }).waitFor(wait);
  return { browser, page, refused };
}

describe.skipIf(noBrowser)(`the views a person sees, by role${BROWSER_SKIP_REASON}`, () => {
  it("an org:member sees only their session, and another view's URL is not found", async () => {
    const { browser, page, refused } = await signedIn(await person('org:member'));
    try {
      await page.waitForURL(`${server.url}/console/session`, wait);
      const links = page.getByRole('navigation', { name: 'Views' }).getByRole('link');
      expect(await links.allInnerTexts()).toEqual(VIEWS.filter((v) => v.roles.includes('member')).map((v) => v.title));
      await expect.poll(() => page.getByTestId('session').innerText(), wait).toContain('through the identity provider');
      expect(await page.getByTestId('session').innerText()).toContain('org:member');

      // A view the role may not use: not shown, and not called either.
      await page.goto(`${server.url}/console/keys`);
      await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor(wait);
      expect(await page.getByTestId('keys').count()).toBe(0);
      expect(refused).toEqual([]);
      // The server refuses the member anyway.
      const keys = await page.evaluate<number>('fetch("/trpc/keys.list?input=%7B%7D").then((r) => r.status)');
      expect(keys).toBe(403);
    } finally {
      await browser.close();
    }
  });

  it('an org:admin sees every view, and its data', async () => {
    const { browser, page, refused } = await signedIn(await person('org:admin'));
    try {
      await page.waitForURL(`${server.url}/console/keys`, wait);
      const links = page.getByRole('navigation', { name: 'Views' }).getByRole('link');
      expect(await links.allInnerTexts()).toEqual(VIEWS.map((v) => v.title));
      await page.getByTestId('keys').locator('tbody tr').first().waitFor(wait);
      await links.filter({ hasText: 'Members' }).click();
      await expect.poll(() => page.getByTestId('members').locator('tbody tr').count(), wait).toBeGreaterThanOrEqual(3);
      expect(refused).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
