// The console (apps/console, docs/console.md) served at /console by the real server, with real
// PostgreSQL. Over HTTP: its page for every view's URL, its hashed files, and the strict
// Content-Security-Policy on all of it. In a real browser (the machine's Chromium, driven by
// playwright-core): signing in with the organization's management key (which the browser then does
// not keep), the keys list, creating a key whose secret shows once, a hostile key name that stays
// text, disabling a key, and signing out (the old cookie is refused from then on), with no console
// error (a CSP violation would be one) and nothing fetched from anywhere but the server.
import fs from 'node:fs/promises';
import path from 'node:path';
import { SESSION_COOKIE } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_DIST, CONSOLE_HEADERS } from '../../src/http/console.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { testServer } from '../fixtures.js';
import { launchChromium, noBrowser, BROWSER_SKIP_REASON } from '../fixtures-browser.js';
import { scaled } from '@switchyard/db/testing';

const HOSTILE_NAME = '<img src=x onerror=alert(1)>';

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});
afterAll(async () => {
  await server?.close();
});

function expectConsoleHeaders(res: Response): void {
  for (const [name, value] of Object.entries(CONSOLE_HEADERS)) expect(res.headers.get(name), name).toBe(value);
}

describe('GET /console over HTTP', () => {
  it("answers the console's page for every view's URL, with the strict CSP and nosniff, and no key", async () => {
    const built = await fs.readFile(path.join(CONSOLE_DIST, 'index.html'), 'utf8');
    for (const url of ['/console', '/console/', '/console/sign-in', '/console/keys', '/console/no/such/view']) {
      const res = await server.request(url, { key: null });
      expect(res.status, url).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toBe(
        "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      );
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expectConsoleHeaders(res);
      expect(await res.text()).toBe(built);
    }
    // Its script and stylesheet are files of the build: no inline script or style for the CSP to refuse.
    expect(built).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(built).not.toMatch(/<style|\sstyle=/);
  });

  it('serves the hashed files as immutable, and an unknown one as a 404 in the envelope', async () => {
    const files = await fs.readdir(path.join(CONSOLE_DIST, 'assets'));
    const script = files.find((f) => f.endsWith('.js'))!;
    const res = await server.request(`/console/assets/${script}`, { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(res.headers.get('cache-control')).toMatch(/immutable/);
    expectConsoleHeaders(res);
    expect(Buffer.from(await res.arrayBuffer()).equals(await fs.readFile(path.join(CONSOLE_DIST, 'assets', script)))).toBe(true);

    const missing = await server.request('/console/assets/nothing.js', { key: null });
    expect(missing.status).toBe(404);
    expectConsoleHeaders(missing);
    expect(await missing.json()).toMatchObject({ error: { code: 404 } });
  });
});

describe('the console in Chromium', () => {
  it.skipIf(noBrowser)(`signs in, lists, creates and disables keys, keeps hostile names as text, and signs out${BROWSER_SKIP_REASON}`, async () => {
    const browser = await launchChromium({ width: 1200, height: 900 });
    const wait = { timeout: scaled(30_000) };
    try {
      const page = browser.context.pages()[0] ?? (await browser.context.newPage());
      const problems: string[] = [];
      const elsewhere: string[] = [];
      const dialogs: string[] = [];
      const refusedCalls: string[] = [];
      // Chromium logs every 4xx answer as a console error; those are checked below, one by one.
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4'))
          problems.push(`console: ${message.text()}`);
      });
      page.on('response', (response) => {
        if (response.status() >= 400) refusedCalls.push(`${response.status()} ${new URL(response.url()).pathname}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('request', (request) => {
        const url = request.url();
        if (!url.startsWith(`${server.url}/`) && !/^(data|blob):/.test(url)) elsewhere.push(url);
      });
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });

      // Not signed in: every view is the sign-in, at its own URL.
      const answer = await page.goto(`${server.url}/console/keys`);
      expect(answer?.headers()['content-security-policy']).toBe(CONSOLE_HEADERS['Content-Security-Policy']);
      await page.waitForURL(`${server.url}/console/sign-in`, wait);

      // By keyboard alone: the key field is the first stop, Enter submits.
      const keyField = page.getByLabel('Management key');
      await keyField.waitFor(wait);
      await page.keyboard.press('Tab');
      // (Page code as strings: this package's types have no DOM.)
      await expect.poll(() => page.evaluate<string | null>('document.activeElement?.getAttribute("name") ?? null'), wait).toBe('management-key');
      await page.keyboard.type(server.managementKey);
      await page.keyboard.press('Enter');
      await page.waitForURL(`${server.url}/console/keys`, wait);
      const table = page.getByTestId('keys');
      await table.waitFor(wait);
      await expect.poll(() => page.getByTestId('organization').innerText(), wait).toContain(server.organizationId);

      // The key is nowhere in the page or its storage, and the session cookie is out of scripts' reach.
      const kept = await page.evaluate<{ local: string; session: string; cookie: string; html: string }>(`({
        local: JSON.stringify({ ...localStorage }),
        session: JSON.stringify({ ...sessionStorage }),
        cookie: document.cookie,
        html: document.documentElement.outerHTML,
      })`);
      for (const place of Object.values(kept)) expect(place).not.toContain(server.managementKey);
      expect(kept.cookie).not.toContain(SESSION_COOKIE);
      expect(kept.local).toBe('{}');
      expect(kept.session).toBe('{}');
      const cookie = (await browser.context.cookies(server.url)).find((c) => c.name === SESSION_COOKIE);
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });

      // The list holds the organization's management key.
      const own = (await (await server.request('/api/v1/key')).json()) as { data: { label: string } };
      await table.getByText(own.data.label).waitFor(wait);

      // A key made here: its secret once, gone after a reload.
      await page.getByLabel('Name', { exact: true }).fill('console-made');
      await page.getByLabel('Limit (USD, empty for none)').fill('5');
      await page.getByRole('button', { name: 'Create' }).click();
      const secretBox = page.getByTestId('new-secret');
      await secretBox.waitFor(wait);
      const secret = (await secretBox.locator('code').innerText()).trim();
      expect(secret).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
      const made = page.locator('tr', { has: page.getByRole('cell', { name: 'console-made', exact: true }) });
      await made.waitFor(wait);
      await expect.poll(() => made.innerText(), wait).toContain('$5.00');
      const madeKey = (await (await server.request('/api/v1/key', { key: secret })).json()) as { data: { label: string; limit: number } };
      expect(madeKey.data.limit).toBe(5);

      await page.reload();
      await page.waitForURL(`${server.url}/console/keys`, wait);
      await made.waitFor(wait);
      expect(await secretBox.count()).toBe(0);
      expect(await page.content()).not.toContain(secret);

      // A hostile name is shown as the text it is: no element made of it, no script run (the CSP would
      // refuse the inline handler too; the page must not even make the element).
      const rows = table.locator('tbody tr');
      const before = await rows.count();
      await page.getByLabel('Name', { exact: true }).fill(HOSTILE_NAME);
      await page.getByRole('button', { name: 'Create' }).click();
      await secretBox.waitFor(wait);
      await expect.poll(() => rows.count(), wait).toBe(before + 1);
      expect(await page.locator('img').count()).toBe(0);
      expect(await rows.first().locator('td').first().innerText()).toBe(HOSTILE_NAME);
      expect(await secretBox.locator('strong').innerText()).toBe(HOSTILE_NAME);
      expect(dialogs).toEqual([]);
      await page.getByRole('button', { name: 'Done' }).click();
      expect(await secretBox.count()).toBe(0);

      // Disabling: the row says so, and the server refuses the key.
      await page.getByRole('button', { name: 'Disable console-made' }).click();
      await expect.poll(() => made.innerText(), wait).toContain('disabled');
      expect(await page.getByRole('button', { name: 'Disable console-made' }).count()).toBe(0);
      expect((await server.request('/api/v1/key', { key: secret })).status).toBe(401);

      // Signing out (by keyboard): back to the sign-in, and the old cookie is refused.
      const signOut = page.getByRole('button', { name: 'Sign out' });
      await signOut.focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(`${server.url}/console/sign-in`, wait);
      const refused = await server.request('/trpc/keys.list?input=%7B%7D', { key: null, headers: { cookie: `${SESSION_COOKIE}=${cookie!.value}` } });
      expect(refused.status).toBe(401);
      await page.reload();
      await page.getByLabel('Management key').waitFor(wait);

      expect(dialogs).toEqual([]);
      // The only refusals: the console asking for a session where there was none (on the first load,
      // and after the sign-out).
      expect(refusedCalls).toEqual(['401 /trpc/sessions.current', '401 /trpc/sessions.current']);
      expect(problems).toEqual([]);
      expect(elsewhere).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
