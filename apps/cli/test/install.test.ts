// The standalone install of docs/cli.md ("Installing it on its own"), run as the page writes it: the
// commands are read from the Markdown, not copied here, and run from the repository root by bash,
// with a HOME of their own that has no ~/.local/bin and a PATH without it (CI runs as root, with no
// second account to try it as). Then the installed `switchyard demo`, from outside the checkout,
// fills a real server with its own copy of the catalog.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inheritedEnv, startTestServer, type TestServer } from '@switchyard/api/testing';
import { scaled } from '@switchyard/db/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { VERSION } from '../src/cli.js';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('../../..', import.meta.url));

/** The lines of the first ```sh block under the heading `heading` of a Markdown page (comments kept: bash reads them as such). */
function shellBlockUnder(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const at = lines.findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, '') === heading);
  if (at < 0) throw new Error(`no heading "${heading}"`);
  const open = lines.findIndex((line, i) => i > at && line.trim() === '```sh');
  const nextHeading = lines.findIndex((line, i) => i > at && /^#+ /.test(line));
  if (open < 0 || (nextHeading >= 0 && open > nextHeading)) throw new Error(`no sh block under "${heading}"`);
  const close = lines.findIndex((line, i) => i > open && line.trim() === '```');
  return lines.slice(open + 1, close).filter((line) => line.trim() !== '');
}

let server: TestServer;
let home: string;
let store: string;
beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-install-home-'));
  // The packages come from the user's pnpm store (--offline): the one this checkout was installed from.
  store = (await exec('pnpm', ['store', 'path'], { cwd: root })).stdout.trim();
});
afterAll(async () => {
  await server?.close();
  if (home) await fs.rm(home, { recursive: true, force: true });
});

describe('docs/cli.md: installing the CLI on its own', () => {
  it(
    'works as written, with a HOME that has no ~/.local/bin and a PATH without it; the installed demo finds its catalog',
    async () => {
      const block = shellBlockUnder(await fs.readFile(path.join(root, 'docs', 'cli.md'), 'utf8'), 'Installing it on its own');
      expect(block.at(-1)).toBe('switchyard --version');
      expect(existsSync(path.join(home, '.local', 'bin'))).toBe(false);
      const localBins = new Set([path.join(home, '.local', 'bin'), path.join(os.homedir(), '.local', 'bin')]);
      const PATH = (process.env.PATH ?? '')
        .split(':')
        .filter((dir) => !localBins.has(dir))
        .join(':');
      const env = {
        PATH,
        HOME: home,
        npm_config_store_dir: store,
        // pnpm turns Node's compile cache on for itself: without the run's switch it would write one
        // into the run's temporary directory.
        ...inheritedEnv(),
      };
      const installed = await exec('bash', ['-eo', 'pipefail', '-c', block.join('\n')], { cwd: root, env, timeout: scaled(540_000) }).catch(
        (e: { stdout: string; stderr: string; code: number }) => {
          throw new Error(`the documented install failed (${e.code}):\n${e.stdout}\n${e.stderr}`.slice(-8000));
        },
      );
      expect(installed.stdout.trimEnd().split('\n').at(-1)).toBe(VERSION);
      expect((await fs.lstat(path.join(home, '.local', 'bin', 'switchyard'))).isSymbolicLink()).toBe(true);

      // From outside the checkout, the PATH as the page leaves it (its export line), the installed demo.
      const exports = block.filter((line) => line.startsWith('export '));
      expect(exports.length).toBeGreaterThan(0);
      const elsewhere = await fs.mkdtemp(path.join(home, 'work-'));
      const demo = await exec('bash', ['-eo', 'pipefail', '-c', [...exports, 'switchyard demo --json'].join('\n')], {
        cwd: elsewhere,
        env: { ...env, SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: server.managementKey, SWITCHYARD_PLATFORM_KEY: server.platformKey },
        timeout: scaled(120_000),
      }).catch((e: { stdout: string; stderr: string; code: number }) => {
        throw new Error(`the installed switchyard demo failed (${e.code}):\n${e.stderr}`.slice(-8000));
      });
      // Its catalog: the one of the repository, copied by the build.
      const catalog = JSON.parse(await fs.readFile(path.join(root, 'demo', 'catalog.json'), 'utf8')) as { models: { id: string }[] };
      const summary = JSON.parse(demo.stdout) as { workspace_slug: string; model: string };
      expect(summary.workspace_slug).toBe('demo-team');
      expect(catalog.models.map((m) => m.id)).toContain(summary.model);
    },
    scaled(600_000),
  );
});
