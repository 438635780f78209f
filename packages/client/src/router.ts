// The server's router type, which the client is typed against. In this repository it comes from
// the server's sources (a devDependency); the built package carries a self-contained copy in
// dist/router.d.ts instead (scripts/router-types.mjs), so that it installs and type-checks
// without the server.
export type { AppRouter } from '@switchyard/api';
