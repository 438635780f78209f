// The console's pages (apps/console, docs/console.md) in a real browser (the machine's Chromium,
// driven by playwright-core) against the real server and real PostgreSQL: the navigation lists every
// view of apps/console/src/views.json, and on each page a write through its form, the read that
// shows it, and the change in the audit log page (before and after). A refused input shows the
// server's message beside its field. Every page, signed out and in, light and dark, has no serious
// or critical axe-core violation (axe-core's script evaluated in the page: the console's CSP allows
// no inline script, and DevTools evaluation is not subject to it). With CONSOLE_SCREENSHOTS=1 (the
// `console:screenshots` script) the same walk writes docs/console/<view>-<scheme>.png; without it, a
// test checks that the committed set is exactly one per view and scheme.
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { scaled } from '@switchyard/db/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../src/testing/test-server.js';
import { testServer } from '../fixtures.js';
import { BROWSER_SKIP_REASON, type Browser, launchChromium, noBrowser } from '../fixtures-browser.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const VIEWS = JSON.parse(readFileSync(path.join(ROOT, 'apps/console/src/views.json'), 'utf8')) as { path: string; title: string; roles: string[] }[];
/** Every page a screenshot shows: the sign-in, then each view. */
const PAGES = ['sign-in', ...VIEWS.map((v) => v.path.slice(1))];
const SCHEMES = ['light', 'dark'] as const;
const SHOTS_DIR = path.join(ROOT, 'docs/console');
const WRITE_SHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const wait = { timeout: scaled(30_000) };
const skip = noBrowser;

let server: TestServer;
let browser: Browser | undefined;
let page: Page;
const problems: string[] = [];
const dialogs: string[] = [];

beforeAll(async () => {
  server = await testServer();
  if (skip) return;
  browser = await launchChromium({ width: 1280, height: 800 });
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  // Chromium logs every 4xx answer as a console error: the refused inputs below make some on purpose.
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4'))
      problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Goes to a view through the navigation, as a person would. */
async function open(title: string, urlPath: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: title, exact: true }).click();
  await page.waitForURL(`${server.url}/console${urlPath}`, wait);
  await page.getByRole('heading', { level: 1, name: title }).waitFor(wait);
}

/** The message shown beside a form's field. */
const fieldError = (label: string) => page.locator('.field', { has: page.getByLabel(label, { exact: true }) }).locator('.field-error');

/** A table row holding this text. */
const row = (testId: string, text: string) => page.getByTestId(testId).locator('tbody tr', { hasText: text });

/**
 * The audit log page, opened at a shared URL with a filter: the newest entry of this action (and
 * target) is listed, and its change's before and after are shown. Answers them as text.
 */
async function audited(filter: { action: string; target_type?: string; target_id?: string }): Promise<{ before: string; after: string }> {
  await page.goto(`${server.url}/console/audit?${new URLSearchParams(filter).toString()}`);
  await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor(wait);
  const entry = row('audit', filter.action).first();
  await entry.waitFor(wait);
  expect(await page.getByLabel('Action', { exact: true }).inputValue()).toBe(filter.action);
  await entry.getByText('Before and after').click();
  const before = (await entry.getByTestId('before').innerText()).trim();
  const after = (await entry.getByTestId('after').innerText()).trim();
  return { before, after };
}

/** axe-core's serious and critical violations on the page as it is. */
async function violations(): Promise<string[]> {
  if (!(await page.evaluate<boolean>('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const { passed, found } = await page.evaluate<{ passed: number; found: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }>(
    'axe.run(document).then((r) => ({ passed: r.passes.length, found: r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })) }))',
  );
  // The rules that held: none would mean axe checked nothing (no page, or the script not run).
  expect(passed).toBeGreaterThan(10);
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** In each scheme: no serious or critical violation, and the page's screenshot when asked for. */
async function checkPage(name: string): Promise<void> {
  for (const scheme of SCHEMES) {
    await page.emulateMedia({ colorScheme: scheme });
    expect(await violations(), `${name}, ${scheme}`).toEqual([]);
    if (WRITE_SHOTS) await page.screenshot({ path: path.join(SHOTS_DIR, `${name}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

describe.skipIf(skip)(`the console's pages in Chromium${BROWSER_SKIP_REASON}`, () => {
  it('the sign-in page has no serious accessibility violation, and signs in', async () => {
    if (WRITE_SHOTS) await fs.mkdir(SHOTS_DIR, { recursive: true });
    await page.goto(`${server.url}/console/sign-in`);
    await page.getByLabel('Management key').waitFor(wait);
    await checkPage('sign-in');
    await page.getByLabel('Management key').fill(server.managementKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/console/keys`, wait);
  });

  it('the navigation links every view, and each opens at its own URL, also when loaded directly', async () => {
    const links = page.getByRole('navigation', { name: 'Views' }).getByRole('link');
    await expect.poll(() => links.allInnerTexts(), wait).toEqual(VIEWS.map((v) => v.title));
    for (const view of VIEWS) {
      expect(await links.filter({ hasText: view.title }).getAttribute('href')).toBe(`/console${view.path}`);
      await open(view.title, view.path);
      expect(await links.filter({ hasText: view.title }).getAttribute('aria-current')).toBe('page');
    }
    await page.goto(`${server.url}/console/budgets`);
    await page.getByRole('heading', { level: 1, name: 'Budgets' }).waitFor(wait);
  });

  it('Keys: an empty name is refused beside its field; a key created and disabled is audited with before and after', async () => {
    await open('Keys', '/keys');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect.poll(() => fieldError('Name').innerText(), wait).not.toBe('');
    expect(await page.getByTestId('new-secret').count()).toBe(0);

    await page.getByLabel('Name', { exact: true }).fill('audited-key');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByTestId('new-secret').waitFor(wait);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Disable audited-key' }).click();
    await expect.poll(() => row('keys', 'audited-key').innerText(), wait).toContain('disabled');

    const { before, after } = await audited({ action: 'keys.update', target_type: 'key' });
    expect(before).toContain('"disabled": false');
    expect(after).toContain('"disabled": true');
  });

  it("Workspaces: a refused slug shows the server's message beside it; one created is listed and audited", async () => {
    await open('Workspaces', '/workspaces');
    await page.getByLabel('Name', { exact: true }).fill('Research');
    await page.getByLabel('Slug', { exact: true }).fill('Not A Slug');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await expect.poll(() => fieldError('Slug').innerText(), wait).toContain('lowercase letters, digits and inner dashes');
    expect(await page.getByLabel('Slug', { exact: true }).getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('Slug', { exact: true }).fill('research');
    await page.getByLabel('Description', { exact: true }).fill('<b>models</b> under study');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await row('workspaces', 'research').waitFor(wait);
    expect(await row('workspaces', 'research').innerText()).toContain('<b>models</b> under study');
    expect(await page.locator('b').count()).toBe(0);
    expect(await fieldError('Slug').count()).toBe(0);

    // The same slug again: the server's reason lands beside the slug.
    await page.getByLabel('Name', { exact: true }).fill('Research again');
    await page.getByLabel('Slug', { exact: true }).fill('research');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await expect.poll(() => fieldError('Slug').innerText(), wait).toBe('slug taken');
    expect(await page.getByTestId('workspaces').locator('tbody tr').count()).toBe(2);

    const { before, after } = await audited({ action: 'workspaces.create', target_type: 'workspace' });
    expect(before).toBe('(none)');
    expect(after).toContain('"slug": "research"');
  });

  it('Members: one added is listed; a role changed is kept and audited with before and after', async () => {
    await open('Members', '/members');
    await page.getByLabel('E-mail', { exact: true }).fill('ada@example.com');
    await page.getByLabel('First name', { exact: true }).fill('Ada');
    await page.getByRole('button', { name: 'Add member' }).click();
    await row('members', 'ada@example.com').waitFor(wait);
    const role = page.getByLabel('Role of ada@example.com', { exact: true });
    expect(await role.inputValue()).toBe('org:member');

    await role.selectOption('org:admin');
    await page.getByRole('button', { name: 'Save the role of ada@example.com' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Save the role of ada@example.com' }).isDisabled(), wait).toBe(true);
    await page.reload();
    await expect.poll(() => page.getByLabel('Role of ada@example.com', { exact: true }).inputValue(), wait).toBe('org:admin');
    const listed = (await (await server.request('/api/v1/organization/members')).json()) as { data: { email: string; role: string }[] };
    expect(listed.data.find((m) => m.email === 'ada@example.com')?.role).toBe('org:admin');

    const { before, after } = await audited({ action: 'organization.updateMember' });
    expect(before).toContain('"role": "org:member"');
    expect(after).toContain('"role": "org:admin"');
  });

  it('Budgets: an empty limit is refused beside its field; a budget set is listed per workspace, deleted, and audited', async () => {
    await open('Budgets', '/budgets');
    await page.getByRole('button', { name: 'Set budget' }).click();
    await expect.poll(() => fieldError('Limit (USD)').innerText(), wait).not.toBe('');

    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research (research)' });
    await page.getByLabel('Interval', { exact: true }).selectOption('monthly');
    await page.getByLabel('Limit (USD)', { exact: true }).fill('100');
    await page.getByRole('button', { name: 'Set budget' }).click();
    await row('budgets', 'monthly').waitFor(wait);
    expect(await row('budgets', 'monthly').innerText()).toContain('$100.00');

    // A daily budget over the monthly one: the server's reason, under the form.
    await page.getByLabel('Interval', { exact: true }).selectOption('daily');
    await page.getByLabel('Limit (USD)', { exact: true }).fill('500');
    await page.getByRole('button', { name: 'Set budget' }).click();
    await expect.poll(() => page.locator('form .error').innerText(), wait).toContain('strictly smaller');
    expect(await row('budgets', 'daily').count()).toBe(0);

    // The default workspace has none of the research workspace's budgets.
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Default (default)' });
    await page.getByTestId('budgets').getByText('None yet.').waitFor(wait);
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research (research)' });
    await row('budgets', 'monthly').waitFor(wait);
    await page.getByLabel('Interval', { exact: true }).selectOption('weekly');
    await page.getByLabel('Limit (USD)', { exact: true }).fill('20');
    await page.getByRole('button', { name: 'Set budget' }).click();
    await row('budgets', 'weekly').waitFor(wait);
    await page.getByRole('button', { name: 'Delete the weekly budget' }).click();
    await expect.poll(() => row('budgets', 'weekly').count(), wait).toBe(0);

    const set = await audited({ action: 'budgets.set', target_type: 'workspace' });
    expect(set.after).toContain('"limit_usd": 20');
    const deleted = await audited({ action: 'budgets.delete' });
    expect(deleted.before).toContain('"limit_usd": 20');
  });

  it('Guardrails: one created is listed, a key is assigned to it, and both are audited', async () => {
    const made = await server.request('/api/v1/keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'guarded-key' }),
    });
    expect(made.status).toBe(201);
    const { data: key } = (await made.json()) as { data: { hash: string; label: string } };

    await open('Guardrails', '/guardrails');
    await page.getByLabel('Name', { exact: true }).fill('Team cap');
    await page.getByLabel('Limit (USD, empty for none)').fill('10');
    await page.getByLabel('Limit resets').selectOption('monthly');
    await page.getByLabel('Allowed models').fill('openai/gpt-4o-mini, anthropic/claude-3.5-haiku');
    await page.getByRole('button', { name: 'Create guardrail' }).click();
    const guardrail = row('guardrails', 'Team cap');
    await guardrail.waitFor(wait);
    expect(await guardrail.innerText()).toContain('$10.00 monthly');
    expect(await guardrail.innerText()).toContain('openai/gpt-4o-mini, anthropic/claude-3.5-haiku');

    await page.getByLabel('Key to assign to Team cap').selectOption(key.hash);
    await page.getByRole('button', { name: 'Assign the key to Team cap' }).click();
    await expect.poll(() => guardrail.locator('li').allInnerTexts(), wait).toEqual([`guarded-key ${key.label}`]);

    const created = await audited({ action: 'guardrails.create', target_type: 'guardrail' });
    expect(created.after).toContain('"name": "Team cap"');
    const assigned = await audited({ action: 'guardrails.assignKeys' });
    expect(assigned.after).toContain(key.hash);
  });

  it('BYOK credentials: one stored is listed by its label only, never its secret; deleted; both audited without the secret', async () => {
    const secret = 'sk-provider-0123456789abcdefWXYZ';
    await open('BYOK credentials', '/byok');
    await page.getByLabel('Provider', { exact: true }).fill('Not a slug');
    await page.getByLabel('Provider key', { exact: true }).fill(secret);
    await page.getByRole('button', { name: 'Add credential' }).click();
    await expect.poll(() => fieldError('Provider').innerText(), wait).toContain('a lowercase provider slug');

    await page.getByLabel('Provider', { exact: true }).fill('openai');
    await page.getByLabel('Name', { exact: true }).fill('team openai');
    await page.getByLabel('Provider key', { exact: true }).fill(secret);
    await page.getByRole('button', { name: 'Add credential' }).click();
    const credential = row('byok', 'team openai');
    await credential.waitFor(wait);
    expect(await credential.innerText()).toContain('sk-...WXYZ');
    expect(await page.getByLabel('Provider key', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('button', { name: 'Delete the openai credential sk-...WXYZ' }).click();
    await expect.poll(() => credential.count(), wait).toBe(0);

    const created = await audited({ action: 'byok.create', target_type: 'byok_credential' });
    expect(created.after).toContain('sk-...WXYZ');
    expect(await page.content()).not.toContain(secret);
    const deleted = await audited({ action: 'byok.delete' });
    expect(deleted.before).toContain('sk-...WXYZ');
    expect(await page.content()).not.toContain(secret);
  });

  it('Presets: one created is listed, its version deleted, and both audited', async () => {
    await open('Presets', '/presets');
    await page.getByLabel('Slug', { exact: true }).fill('support-bot');
    await page.getByLabel('Name', { exact: true }).fill('Support bot');
    await page.getByLabel('Model', { exact: true }).fill('openai/gpt-4o-mini');
    await page.getByLabel('System prompt', { exact: true }).fill('<script>alert(1)</script> Be brief.');
    await page.getByRole('button', { name: 'Create preset' }).click();
    const preset = row('presets', 'support-bot');
    await preset.waitFor(wait);
    expect(await preset.innerText()).toContain('Support bot');
    const stored = (await (await server.request('/api/v1/presets/support-bot')).json()) as {
      data: { designated_version: { config: { model: string }; system_prompt: string } };
    };
    expect(stored.data.designated_version.config.model).toBe('openai/gpt-4o-mini');
    expect(stored.data.designated_version.system_prompt).toBe('<script>alert(1)</script> Be brief.');

    await page.getByRole('button', { name: 'Delete the version in force of support-bot' }).click();
    await expect.poll(() => preset.innerText(), wait).toContain('none (every version deleted)');

    const created = await audited({ action: 'presets.create', target_type: 'preset' });
    expect(created.after).toContain('support-bot');
    const deleted = await audited({ action: 'presets.deleteVersion' });
    expect(deleted.before).toContain('"version": 1');
    expect(dialogs).toEqual([]);
  });

  it('Settings: the organization read-only; retention and alert thresholds changed, refused beside the field, and audited', async () => {
    await open('Settings', '/settings');
    await expect.poll(() => page.getByTestId('organization-details').innerText(), wait).toContain(server.organizationId);
    await expect.poll(() => page.getByTestId('retention').innerText(), wait).toContain('kept for good');

    await page.getByLabel('Days to keep content (empty: for good)').fill('0');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await expect.poll(() => fieldError('Days to keep content (empty: for good)').innerText(), wait).not.toBe('');
    await page.getByLabel('Days to keep content (empty: for good)').fill('30');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await expect.poll(() => page.getByTestId('retention').innerText(), wait).toContain('removed after 30 days');

    await page.getByLabel('Thresholds (percent)').fill('90, 50');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    await expect.poll(() => page.getByTestId('alerts').innerText(), wait).toContain('Limit alerts at 50%, 90%');

    const retention = await audited({ action: 'settings.updateRetention' });
    expect(retention.before).toContain('"content_retention_days": null');
    expect(retention.after).toContain('"content_retention_days": 30');
    const alerts = await audited({ action: 'settings.updateAlerts' });
    expect(alerts.after).toContain('90');
  });

  it("Audit log: filters by actor (the session's key) and target, and a refused filter shows the server's message beside it", async () => {
    const own = (await (await server.request('/api/v1/key')).json()) as { data: { label: string } };
    await open('Audit log', '/audit');
    await row('audit', 'settings.updateAlerts').first().waitFor(wait);

    await page.getByLabel('Actor (key hash)').fill('not-a-hash');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await expect.poll(() => fieldError('Actor (key hash)').innerText(), wait).not.toBe('');

    const keyHash = (await page.evaluate<string>('fetch("/trpc/sessions.current").then((r) => r.json()).then((b) => b.result.data.session.key_hash)')).trim();
    await page.getByLabel('Actor (key hash)').fill(keyHash);
    await page.getByLabel('Action', { exact: true }).fill('');
    await page.getByLabel('Target type').fill('workspace');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await row('audit', 'workspaces.create').waitFor(wait);
    for (const text of await page.getByTestId('audit').locator('tbody tr').allInnerTexts()) {
      expect(text).toContain(own.data.label);
      expect(text).toContain('workspace');
    }
    expect(new URL(page.url()).searchParams.get('actor')).toBe(keyHash);
  });

  it('every page has no serious or critical axe-core violation, light and dark', async () => {
    for (const view of VIEWS) {
      await open(view.title, view.path);
      await page
        .locator('p.status', { hasText: 'Loading' })
        .first()
        .waitFor({ state: 'detached', ...wait });
      await checkPage(view.path.slice(1));
    }
  });

  it('Your session: shows the session, and signing out everywhere ends it', async () => {
    await open('Your session', '/session');
    await expect.poll(() => page.getByTestId('session').innerText(), wait).toContain(server.organizationId);
    expect(await page.getByTestId('session').innerText()).toContain('with a management key');
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.waitForURL(`${server.url}/console/sign-in`, wait);
    expect(problems).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});

describe('the screenshots in docs/console', () => {
  it('are one PNG per page and scheme, and nothing else', async () => {
    const files = (await fs.readdir(SHOTS_DIR)).filter((f) => f.endsWith('.png')).sort();
    expect(files).toEqual(PAGES.flatMap((p) => SCHEMES.map((s) => `${p}-${s}.png`)).sort());
  });
});
