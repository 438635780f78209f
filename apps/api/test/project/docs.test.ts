// GET /docs: the API reference page. Over HTTP: the page and Scalar's bundle from node_modules. In
// a real browser (the machine's Chromium, driven by playwright-core): every operation's summary
// of the live document renders, nothing is fetched from anywhere but the server, no console
// errors; a screenshot is left in apps/api/test-artifacts/docs.png. Without a browser the browser
// test is skipped, except in CI (CI=true), where it fails.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCALAR_BUNDLE_FILE } from '../../src/http/docs.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { testServer } from '../fixtures.js';
import { launchChromium, noBrowser, BROWSER_SKIP_REASON } from '../fixtures-browser.js';
import { scaled } from '@switchyard/db/testing';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});
afterAll(async () => {
  await server?.close();
});

describe('GET /docs over HTTP', () => {
  it('serves the page without a key, pointing Scalar at the live document', async () => {
    const res = await server.request('/docs', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('"url":"/api/v1/openapi.json"');
    expect(html).toContain('<script src="/docs/scalar.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
  });

  it("serves Scalar's bundle from the installed package", async () => {
    const res = await server.request('/docs/scalar.js', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(Buffer.from(await res.arrayBuffer()).equals(await fs.readFile(SCALAR_BUNDLE_FILE))).toBe(true);
  });
});

describe('GET /docs in Chromium', () => {
  it.skipIf(noBrowser)(`renders every operation of the live document, with no console error and nothing from the internet${BROWSER_SKIP_REASON}`, async () => {
    const openapi = (await (await server.request('/api/v1/openapi.json', { key: null })).json()) as {
      paths: Record<string, Record<string, { summary: string }>>;
    };
    const summaries = Object.values(openapi.paths).flatMap((ops) => Object.values(ops).map((op) => op.summary));
    // Every operation of the document (the 21 of the contract and those added since) has a summary.
    expect(summaries.length).toBe(Object.values(openapi.paths).reduce((n, ops) => n + Object.keys(ops).length, 0));
    expect(summaries.length).toBeGreaterThan(21);

    const browser = await launchChromium();
    try {
      const page = browser.context.pages()[0] ?? (await browser.context.newPage());
      const problems: string[] = [];
      const elsewhere: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      let lastRequest = Date.now();
      page.on('request', (request) => {
        lastRequest = Date.now();
        const url = request.url();
        if (!url.startsWith(`${server.url}/`) && !/^(data|blob):/.test(url)) elsewhere.push(url);
      });
      page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));

      const answer = await page.goto(`${server.url}/docs`, { waitUntil: 'load' });
      expect(answer?.status()).toBe(200);
      await page
        .getByText(summaries[0]!)
        .first()
        .waitFor({ timeout: scaled(30_000) });
      // Whatever the page loads late (fonts, images, telemetry) has had a second to show up.
      for (let i = 0; i < 100 && Date.now() - lastRequest < 1000; i++) await page.waitForTimeout(100);
      const text = await page.locator('body').innerText();
      for (const summary of summaries) expect(text, summary).toContain(summary);

      await fs.mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'docs.png') });
      expect(problems).toEqual([]);
      expect(elsewhere).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
