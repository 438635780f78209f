// `pnpm openapi`: writes the OpenAPI document to openapi.json at the repository root (the file is
// committed, so that every change to the contract shows in review). `--check` only compares: exit
// 1 when the file is out of date. A test compares the served document with the file too.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from './http/openapi.js';
import { API_PREFIX } from '@switchyard/schema';
import { appRouter } from './router.js';
import { BYTE_ROUTE_MOUNTS } from './modules.js';

/** openapi.json at the repository root (this file is apps/api/src/ or apps/api/dist/). */
export const OPENAPI_FILE = fileURLToPath(new URL('../../../openapi.json', import.meta.url));

/** The file's exact text for a document: two-space JSON and a final newline. */
export function openApiText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

async function main(args: string[]): Promise<number> {
  const text = openApiText(openApiDocument(appRouter, API_PREFIX, BYTE_ROUTE_MOUNTS));
  const current = await readFile(OPENAPI_FILE, 'utf8').catch(() => null);
  if (args.includes('--check')) {
    if (current === text) return 0;
    process.stderr.write(`${OPENAPI_FILE} is out of date: run \`pnpm openapi\` and commit it\n`);
    return 1;
  }
  if (current !== text) await writeFile(OPENAPI_FILE, text);
  process.stdout.write(`${current === text ? 'unchanged' : 'wrote'} ${OPENAPI_FILE}\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
