// The machine's Chromium, driven by playwright-core (no browser is downloaded): CHROMIUM_PATH, or
// Debian's /usr/bin/chromium (.ci/run installs it), or another usual place. Each launch gets a
// fresh profile, removed on close. A test without a browser is skipped, except in CI (CI=true),
// where it fails.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const BROWSERS = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
export const executablePath = BROWSERS.find((p): p is string => !!p && existsSync(p));
export const inCI = process.env.CI === 'true';
/** Skip the browser test: no browser, and not in CI. */
export const noBrowser = !executablePath && !inCI;
/** What a browser test's title adds when it is skipped. */
export const BROWSER_SKIP_REASON = noBrowser
  ? ` (skipped: no Chromium in ${BROWSERS.filter(Boolean).join(', ')}; apt-get install chromium, or set CHROMIUM_PATH)`
  : '';

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Chromium, headless, with a fresh profile and nothing of its own reaching the network. */
export async function launchChromium(viewport = { width: 1400, height: 1000 }): Promise<Browser> {
  if (!executablePath)
    throw new Error(`no Chromium in ${BROWSERS.filter(Boolean).join(', ')} (CI=true): install it (apt-get install chromium) or set CHROMIUM_PATH`);
  const userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport,
  });
  return {
    context,
    async close() {
      await context.close();
      await fs.rm(userDataDir, { recursive: true, force: true });
    },
  };
}
