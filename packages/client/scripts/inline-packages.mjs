// After tsc: the built client carries the workspace packages it needs at run time, which are not
// installed with it (only @trpc/* are its dependencies):
// - a few dependency-free modules of @switchyard/schema (the container file id, the demo's sample
//   video URL), copied into dist/ as <name>.js;
// - @switchyard/rules, the routing decision's rules (pure, no dependencies), for a decider in the
//   routing service's own process: its whole build, copied into dist/rules/.
// The client's imports of them are pointed at the copies, so that each has one definition and the
// package still installs on its own. Anything else the build imports from @switchyard/* stops the
// build, and so does a copied module that imports anything.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SCHEMA_MODULES = ['file-ids', 'samples'];
const require = createRequire(import.meta.url);
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const withoutSourceMap = (text) => text.replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n');

/** Copies a built module (.js and .d.ts, without source maps) to `to` (a path without extension); it must import nothing but its siblings. */
async function copyModule(from, to) {
  for (const ext of ['.js', '.d.ts']) {
    const text = withoutSourceMap(await readFile(from + ext, 'utf8'));
    const outside = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]).find((s) => !s.startsWith('./'));
    if (outside) throw new Error(`${from}${ext} imports ${outside}: the client can only carry modules that import nothing`);
    await writeFile(to + ext, text);
  }
}

for (const name of SCHEMA_MODULES) {
  const built = require.resolve(`@switchyard/schema/${name}`); // .../packages/schema/dist/<name>.js
  await copyModule(built.replace(/\.js$/, ''), path.join(dist, name));
}

const rulesDist = path.dirname(require.resolve('@switchyard/rules')); // .../packages/rules/dist
await rm(path.join(dist, 'rules'), { recursive: true, force: true });
await mkdir(path.join(dist, 'rules'));
for (const file of await readdir(rulesDist)) {
  if (file.endsWith('.js')) await copyModule(path.join(rulesDist, file.slice(0, -3)), path.join(dist, 'rules', file.slice(0, -3)));
}

for (const file of await readdir(dist)) {
  if (!/\.(js|d\.ts)$/.test(file)) continue;
  const at = path.join(dist, file);
  const text = await readFile(at, 'utf8');
  let local = text;
  for (const name of SCHEMA_MODULES) local = local.replaceAll(`'@switchyard/schema/${name}'`, `'./${name}.js'`);
  local = local.replaceAll(`'@switchyard/rules'`, `'./rules/index.js'`);
  const foreign = /from '(@switchyard\/[^']+)'/.exec(local);
  if (foreign) throw new Error(`dist/${file} imports ${foreign[1]}, which the client package does not carry`);
  if (local !== text) await writeFile(at, local);
}
