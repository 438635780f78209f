// A container file's id: "cfile_" + base64url (unpadded) of its path's UTF-8 bytes. The one
// definition: the server answers these ids and decodes them (apps/api/src/modules/files/sandbox-ids.ts
// checks the path); @switchyard/client builds them to write files. Dependency-free on purpose: the
// client's build copies this module into its package (packages/client/scripts/inline-packages.mjs).
export const CONTAINER_FILE_ID_PREFIX = 'cfile_';

/** "cfile_" + base64url of `path` inside the sandbox. */
export function containerFileId(path: string): string {
  return `${CONTAINER_FILE_ID_PREFIX}${Buffer.from(path, 'utf8').toString('base64url')}`;
}
