// The console's initial JavaScript, as a browser fetches it for the first page: the module scripts
// its index.html names and the chunks it preloads (Vite writes a modulepreload link for each static
// import), each gzipped as a server or CDN would send it.
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

export interface ConsoleBundle {
  files: { file: string; bytes: number; gzipBytes: number }[];
  gzipBytes: number;
}

/** The budget line: the console's initial JavaScript at most this, gzipped. */
export const CONSOLE_JS_BUDGET_BYTES = 250 * 1024;

/** The initial JavaScript of the console built in `distDir` (its index.html and assets), or null when it is not built. */
export function consoleBundle(distDir: string): ConsoleBundle | null {
  const page = path.join(distDir, 'index.html');
  if (!fs.existsSync(page)) return null;
  const html = fs.readFileSync(page, 'utf8');
  const urls = [
    ...[...html.matchAll(/<script\b[^>]*\btype="module"[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]!),
    ...[...html.matchAll(/<link\b[^>]*\brel="modulepreload"[^>]*\bhref="([^"]+)"/g)].map((m) => m[1]!),
  ];
  const files = [...new Set(urls)].map((url) => {
    // Assets are named from the console's base (/console/): the file is that path under dist/.
    const file = path.join(distDir, url.replace(/^\/console\//, '').replace(/^\//, ''));
    const bytes = fs.readFileSync(file);
    return { file: path.relative(distDir, file), bytes: bytes.length, gzipBytes: gzipSync(bytes).length };
  });
  return { files, gzipBytes: files.reduce((sum, f) => sum + f.gzipBytes, 0) };
}
