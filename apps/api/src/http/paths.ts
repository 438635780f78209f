/** Where the REST surface is mounted. */
export const API_PREFIX = '/api/v1';
