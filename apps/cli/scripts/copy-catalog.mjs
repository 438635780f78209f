// The build keeps a copy of the repository's demo/catalog.json in dist/, so that `switchyard demo`
// installed on its own (a `pnpm deploy` folder, a packed tarball) has its default catalog.
import { copyFileSync } from 'node:fs';

copyFileSync(new URL('../../../demo/catalog.json', import.meta.url), new URL('../dist/demo-catalog.json', import.meta.url));
