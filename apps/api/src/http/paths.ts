/** Where the REST surface is mounted. */
export const API_PREFIX = '/api/v1';

/** Where the platform's internal byte routes are mounted (PUT /internal/containers/...). */
export const INTERNAL_PREFIX = '/internal';
