// After tsc: the built client imports containerFileId from @switchyard/schema/file-ids, a workspace
// package that is not installed with the client (only @trpc/* are its dependencies). This copies
// that module's build (one dependency-free function) into dist/ and points the import at the copy,
// so that the id has one definition and the package still installs on its own. Anything else
// the build imports from @switchyard/* stops the build.
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

const SPECIFIER = '@switchyard/schema/file-ids';
const built = createRequire(import.meta.url).resolve(SPECIFIER); // .../packages/schema/dist/file-ids.js
const dist = new URL('../dist/', import.meta.url);

await copyFile(built, new URL('file-ids.js', dist));
await copyFile(built.replace(/\.js$/, '.d.ts'), new URL('file-ids.d.ts', dist));
for (const name of await readdir(dist)) {
  if (!/\.(js|d\.ts)$/.test(name)) continue;
  const file = new URL(name, dist);
  const text = await readFile(file, 'utf8');
  const local = text.replaceAll(`'${SPECIFIER}'`, "'./file-ids.js'").replace(/\n\/\/# sourceMappingURL=file-ids\..*\n?$/, '\n');
  const foreign = /from '(@switchyard\/[^']+)'/.exec(local);
  if (foreign) throw new Error(`dist/${name} imports ${foreign[1]}, which the client package does not carry`);
  if (local !== text) await writeFile(file, local);
}
