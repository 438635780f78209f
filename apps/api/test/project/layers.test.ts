// The layer count (scripts/layers.mjs, which `pnpm lint` runs): on a scratch tree of known imports it
// must find each upward import (type-only ones marked), the circle across rooms, startServer's
// length and the files whose code names a byte route; fail on an upward import the allowed list
// lacks, on a listed one that is gone (and --prune drop it), and on a room it does not place; and
// pass on the repository's own tree, whose upward imports lint/layers-allowed.json lists.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const script = path.join(root, 'scripts', 'layers.mjs');

interface Report {
  upward: { from: string; to: string; typeOnly: boolean }[];
  circles: string[][];
  runtimeCircles: string[][];
  startServerLines: number | null;
  byteRoutes: { name: string; file: string; method: string; path: string; src: string[]; tests: string[] }[];
  unplaced: string[];
  added: string[];
  gone: string[];
}

const run = (...args: string[]) =>
  promisify(execFile)(process.execPath, [script, ...args], { cwd: root }).then(
    (out) => ({ code: 0, stdout: out.stdout, stderr: out.stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

/** The scratch tree: file path (under the tree) to its text. */
const TREE: Record<string, string> = {
  'src/lib/log.ts': "import type { Config } from '../config.js';\nexport const log = (c: Config) => c;\n",
  'src/config.ts': "import { log } from './lib/log.js';\nexport interface Config { on: boolean }\nexport const config = log({ on: true });\n",
  'src/access/rules.ts': "import { KEY } from '../modules/keys/key-format.js';\nexport const rule = KEY;\n",
  'src/modules/keys/key-format.ts': "import { config } from '../../config.js';\nexport const KEY = config.on ? 'k' : 'x';\n",
  'src/modules/keys/keys.service.ts': "import { rule } from '../../access/rules.js';\nexport const keys = rule;\n",
  'src/modules/keys/keys.streams.ts': [
    "import { KEY_CONTENT } from '../../raw-routes/operations.js';",
    '// GET /keys/{id}/content: a comment names no route.',
    'export const route = { operation: KEY_CONTENT };',
    '',
  ].join('\n'),
  'src/modules/keys/keys.router.ts': "export const meta = { method: 'POST', path: '/keys/{id}/content' };\n",
  'src/raw-routes/operations.ts': [
    'interface RawOperation { method: string; prefix: string; path: string }',
    "export const KEY_CONTENT = { method: 'GET', prefix: '/api/v1', path: '/keys/{id}/content' } as const satisfies RawOperation;",
    '',
  ].join('\n'),
  'src/http/openapi.ts': "export const paths = { '/keys/{id}/content': { get: {} } };\n",
  'src/server.ts': "import { keys } from './modules/keys/keys.service.js';\nexport async function startServer() {\n  const a = keys;\n  return a;\n}\n",
  'test/keys.test.ts': 'const id = 1;\nexport const url = `GET /api/v1/keys/{id}/content ${id}`;\nexport const express = `/api/v1/keys/:id/content`;\n',
  'test/other.test.ts': "export const other = '/keys';\n",
};

const UPWARD = ['access/rules.ts -> modules/keys/key-format.ts', 'lib/log.ts -> config.ts (type)'];

const scratch = mkdtempSync(path.join(tmpdir(), 'layers-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
for (const [file, text] of Object.entries(TREE)) {
  mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
  writeFileSync(path.join(scratch, file), text);
}
const allowedFile = path.join(scratch, 'allowed.json');
const allow = (upward: string[]) => writeFileSync(allowedFile, `${JSON.stringify({ about: 'scratch', upward }, null, 2)}\n`);
const onScratch = (...args: string[]) => run('--src', path.join(scratch, 'src'), '--tests', path.join(scratch, 'test'), '--allowed', allowedFile, ...args);

describe('scripts/layers.mjs', () => {
  it('counts the upward imports, the circles, startServer and the places that name a byte route', async () => {
    allow(UPWARD);
    const out = await onScratch('--json');
    expect(out.code, out.stdout + out.stderr).toBe(0);
    const report = JSON.parse(out.stdout) as Report;
    expect(report.upward).toEqual([
      { from: 'access/rules.ts', to: 'modules/keys/key-format.ts', typeOnly: false },
      { from: 'lib/log.ts', to: 'config.ts', typeOnly: true },
    ]);
    // access -> modules/keys -> access; lib <-> config.ts only through a type-only import.
    expect(report.circles).toEqual([
      ['access', 'modules/keys'],
      ['config.ts', 'lib'],
    ]);
    expect(report.runtimeCircles).toEqual([['access', 'modules/keys']]);
    expect(report.startServerLines).toBe(4);
    // Its constant (operations.ts, keys.streams.ts) or its path in a string (openapi.ts); not the
    // comment, not POST's meta, not '/keys'.
    expect(report.byteRoutes).toEqual([
      {
        name: 'KEY_CONTENT',
        file: 'raw-routes/operations.ts',
        method: 'GET',
        path: '/keys/{id}/content',
        src: ['http/openapi.ts', 'modules/keys/keys.streams.ts', 'raw-routes/operations.ts'],
        tests: ['keys.test.ts'],
      },
    ]);
    expect([report.unplaced, report.added, report.gone]).toEqual([[], [], []]);
  });

  it('prints the report, type-only imports counted apart', async () => {
    allow(UPWARD);
    const out = await onScratch();
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('upward imports: 2 file edges (1 of them type-only, which count), 2 room edges (1 type-only);');
    expect(out.stdout).toContain('import circles across rooms: 2 (1 without the type-only imports);');
    expect(out.stdout).toContain('startServer (server.ts): 4 lines;');
    expect(out.stdout).toContain('GET /keys/{id}/content (KEY_CONTENT): 3 in src');
  });

  it('fails on an upward import the allowed list lacks', async () => {
    allow(UPWARD.slice(1));
    const out = await onScratch();
    expect(out.code).toBe(1);
    expect(out.stdout).toContain('error: a new upward import, against the layer order: access/rules.ts -> modules/keys/key-format.ts');
  });

  it('fails on a listed upward import that is gone, and --prune drops it from the list', async () => {
    const gone = 'http/openapi.ts -> server.ts';
    allow([...UPWARD, gone]);
    const out = await onScratch();
    expect(out.code).toBe(1);
    expect(out.stdout).toContain(`upward import(s) in ${path.relative(root, allowedFile)} are gone`);
    expect(out.stdout).toContain(`  ${gone}`);
    const pruned = await onScratch('--prune');
    expect(pruned.code, pruned.stdout + pruned.stderr).toBe(0);
    expect((JSON.parse(readFileSync(allowedFile, 'utf8')) as { upward: string[] }).upward).toEqual(UPWARD);
  });

  it('fails on a room the order does not place', async () => {
    allow(UPWARD);
    const file = path.join(scratch, 'src', 'widgets', 'widget.ts');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, 'export const widget = 1;\n');
    try {
      const out = await onScratch();
      expect(out.code).toBe(1);
      expect(out.stdout).toContain('error: the room widgets has no place in ROOMS');
    } finally {
      rmSync(path.dirname(file), { recursive: true });
    }
  });

  it("passes on the repository's own tree: every room placed, every upward import listed", async () => {
    const out = await run('--json');
    expect(out.code, out.stdout + out.stderr).toBe(0);
    const report = JSON.parse(out.stdout) as Report;
    expect(report.startServerLines).toBeGreaterThan(0);
    expect(report.byteRoutes.map((r) => r.name)).toContain('ORGANIZATION_EXPORT');
    for (const route of report.byteRoutes) expect(route.src, route.name).toContain(route.file);
  });
});
