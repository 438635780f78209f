#!/usr/bin/env node
// The `switchyard` command (the package's bin): runs the compiled CLI in dist/ straight away, with
// no build step. `pnpm switchyard` at the repository root builds first, then runs this.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('switchyard: the CLI is not built yet: run `pnpm build` (or `pnpm switchyard`, which builds first)\n');
  process.exit(1);
}
await import(main.href);
