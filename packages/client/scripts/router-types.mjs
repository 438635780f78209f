// After tsc: replaces dist/router.d.ts (a re-export from @switchyard/api, which is not installed
// with the package) with the router's own declaration, as the server's build emitted it
// (apps/api/dist/router.d.ts). tsc writes that declaration fully expanded: every procedure's input
// and output are plain object types. It names only three outside types: @trpc/server's (a
// dependency of this package; a subscription's tracked events name its core's TrackedData), and the server's context and meta types (the server's services,
// Prisma and the access rules), which no client uses; those two become `object`. Anything else
// stops the build, so the package never ships a type it cannot resolve.
//
// Written here rather than with a declaration bundler (rollup-plugin-dts, api-extractor): those
// follow every import, so they would inline the context type and with it Prisma's client types.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const serverEntry = createRequire(import.meta.url).resolve('@switchyard/api');
const source = path.join(path.dirname(serverEntry), 'router.d.ts');
const target = new URL('../dist/router.d.ts', import.meta.url);

let text = await readFile(source, 'utf8');
const replacements = [
  ['import("./trpc/context.js").Context', 'object'],
  ['import("./trpc/init.js").ProcedureMeta', 'object'],
  ['export declare const appRouter:', 'declare const appRouter:'],
];
for (const [from, to] of replacements) {
  if (!text.includes(from)) throw new Error(`${source} no longer contains ${from}: update ${import.meta.url}`);
  text = text.replaceAll(from, to);
}
text = text.replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n');
const foreign = [...new Set([...text.matchAll(/import\("([^"]+)"\)/g)].map((m) => m[1]))].filter(
  (m) => m !== '@trpc/server' && m !== '@trpc/server/unstable-core-do-not-import',
);
if (foreign.length > 0) throw new Error(`${source} names types of ${foreign.join(', ')}, which the client package cannot resolve`);
if (/^import /m.test(text)) throw new Error(`${source} has import statements; expected only inline import() types`);

await writeFile(
  target,
  `// The Switchyard server's router type, generated from its build by scripts/router-types.mjs.\n// Server-side types (the request context, procedure meta) are \`object\` here.\n${text}`,
);
await rm(new URL('../dist/router.d.ts.map', import.meta.url), { force: true });
