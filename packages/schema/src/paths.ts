// Where the API's surfaces are mounted: contract data, shared by the server, its routers and its docs.
/** Where the REST surface is mounted. */
export const API_PREFIX = '/api/v1';

/** Where the platform's internal byte routes are mounted (PUT /internal/containers/...). */
export const INTERNAL_PREFIX = '/internal';

/** Where a browser signs in and gets its session cookie (docs/sessions.md): not part of the REST surface. */
export const SESSION_PREFIX = '/session';
