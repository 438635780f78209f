import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { consoleBundle } from '../src/console-bundle.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-bundle-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('consoleBundle', () => {
  it('is null while the console is not built', () => {
    expect(consoleBundle(path.join(dir, 'missing'))).toBeNull();
  });

  it("sums the gzipped size of the page's module scripts and preloaded chunks, each once, and nothing else", () => {
    fs.mkdirSync(path.join(dir, 'assets'));
    const entry = 'import "./vendor.js";\n'.repeat(200);
    const vendor = 'export const x = 1;\n'.repeat(500);
    fs.writeFileSync(path.join(dir, 'assets', 'index-a.js'), entry);
    fs.writeFileSync(path.join(dir, 'assets', 'vendor-b.js'), vendor);
    fs.writeFileSync(path.join(dir, 'assets', 'lazy-c.js'), 'export const lazy = 2;\n'.repeat(900));
    fs.writeFileSync(path.join(dir, 'assets', 'index-d.css'), 'body{}');
    fs.writeFileSync(
      path.join(dir, 'index.html'),
      [
        '<script type="module" crossorigin src="/console/assets/index-a.js"></script>',
        '<link rel="modulepreload" crossorigin href="/console/assets/vendor-b.js">',
        '<link rel="modulepreload" crossorigin href="/console/assets/vendor-b.js">',
        '<link rel="stylesheet" crossorigin href="/console/assets/index-d.css">',
      ].join('\n'),
    );
    const bundle = consoleBundle(dir)!;
    expect(bundle.files.map((f) => f.file)).toEqual([path.join('assets', 'index-a.js'), path.join('assets', 'vendor-b.js')]);
    expect(bundle.files[0]).toEqual({ file: path.join('assets', 'index-a.js'), bytes: entry.length, gzipBytes: gzipSync(entry).length });
    expect(bundle.gzipBytes).toBe(gzipSync(entry).length + gzipSync(vendor).length);
  });
});
