// After tsc: the built client imports a few dependency-free modules of @switchyard/schema (the
// container file id, the demo's sample video URL), a workspace package that is not installed with
// the client (only @trpc/* are its dependencies). This copies those modules' build into dist/ and
// points the imports at the copies, so that each has one definition and the package still installs
// on its own. Anything else the build imports from @switchyard/* stops the build.
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

const MODULES = ['file-ids', 'samples'];
const require = createRequire(import.meta.url);
const dist = new URL('../dist/', import.meta.url);

for (const name of MODULES) {
  const built = require.resolve(`@switchyard/schema/${name}`); // .../packages/schema/dist/<name>.js
  await copyFile(built, new URL(`${name}.js`, dist));
  await copyFile(built.replace(/\.js$/, '.d.ts'), new URL(`${name}.d.ts`, dist));
}
for (const file of await readdir(dist)) {
  if (!/\.(js|d\.ts)$/.test(file)) continue;
  const url = new URL(file, dist);
  const text = await readFile(url, 'utf8');
  let local = text;
  for (const name of MODULES) {
    local = local.replaceAll(`'@switchyard/schema/${name}'`, `'./${name}.js'`);
    if (file === `${name}.js` || file === `${name}.d.ts`) local = local.replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n');
  }
  const foreign = /from '(@switchyard\/[^']+)'/.exec(local);
  if (foreign) throw new Error(`dist/${file} imports ${foreign[1]}, which the client package does not carry`);
  if (local !== text) await writeFile(url, local);
}
