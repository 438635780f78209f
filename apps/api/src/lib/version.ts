// The server's version: the one of apps/api/package.json (this file is src/lib/ or dist/lib/, two levels
// below it, also in a `pnpm deploy` folder). Every package of the repository carries the same
// version; the OpenAPI document's info.version, `switchyard --version` and the
// switchyard_build_info metric say it.
import { readFileSync } from 'node:fs';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
