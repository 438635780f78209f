// After tsc: copies the repository's prisma/migrations into dist/migrations, so that the built
// package carries the migrations it applies at start (a `pnpm deploy` folder has no repository
// around it). src/migrate.ts reads this copy when it runs from dist/, the repository's folder
// when it runs from src/.
import { cp, rm } from 'node:fs/promises';

const source = new URL('../../../prisma/migrations/', import.meta.url);
const target = new URL('../dist/migrations/', import.meta.url);
await rm(target, { recursive: true, force: true });
await cp(source, target, { recursive: true });
