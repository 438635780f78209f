// The two ids that name things inside a container sandbox:
// - container ids: "sess_" + the sanitised session key, "-r<nonce>" for a restarted session;
// - file ids: "cfile_" + base64url(path) (@switchyard/schema's containerFileId), where the path must be a
//   clean relative path.
// Paths never reach the filesystem (bytes live under server-made storage keys), but a path that is
// not clean is still refused, so that no id can even name something outside its sandbox.
import { createHash, randomBytes } from 'node:crypto';
import { CONTAINER_FILE_ID_PREFIX as FILE_ID_PREFIX, containerFileId } from '@switchyard/schema';
import { Invalid } from '../../lib/errors.js';

const CLEAN_KEY = /^[A-Za-z0-9_-]{1,64}$/;
/** The restart suffix; a raw session key that looks like one is not taken as clean. */
const RESTART_SUFFIX = /-r[0-9a-f]{12}$/;

/**
 * The canonical container id of a session. A key that is already clean ([A-Za-z0-9_-], at most 64
 * characters) is kept as is; any other key is sanitised (other characters become "_", cut to 64) and
 * suffixed with a hash of the raw key, so two different session keys never share a sandbox.
 */
export function containerIdOf(sessionKey: string, restart = false): string {
  let clean = sessionKey;
  if (!CLEAN_KEY.test(sessionKey) || RESTART_SUFFIX.test(sessionKey)) {
    const digest = createHash('sha256').update(sessionKey).digest('hex').slice(0, 12);
    clean = `${sessionKey.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 64)}_${digest}`;
  }
  return `sess_${clean}${restart ? `-r${randomBytes(6).toString('hex')}` : ''}`;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const MAX_PATH_BYTES = 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function invalidFileId(reason: string): Invalid {
  return new Invalid(`file_id: ${reason}`, { parameter: 'file_id', reason });
}

/** Throws Invalid unless `path` is a clean relative path inside a sandbox. */
export function assertSandboxPath(path: string): void {
  if (path.length === 0) throw invalidFileId('empty path');
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw invalidFileId(`path longer than ${MAX_PATH_BYTES} bytes`);
  if (path.includes('\0')) throw invalidFileId('NUL byte in path');
  if (path.includes('\\')) throw invalidFileId('backslash in path');
  // eslint-disable-next-line no-control-regex
  if (/[\u0001-\u001f\u007f]/.test(path)) throw invalidFileId('control character in path');
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) throw invalidFileId('absolute path');
  for (const segment of path.split('/')) {
    if (segment === '') throw invalidFileId('empty path segment');
    if (segment === '.' || segment === '..') throw invalidFileId(`"${segment}" segment in path`);
  }
}

/** "cfile_" + base64url(path) -> path. Anything else (bad prefix, bad base64url, unclean path): 400. */
export function decodeFileId(fileId: string): string {
  if (!fileId.startsWith(FILE_ID_PREFIX)) throw invalidFileId('must start with cfile_');
  let encoded = fileId.slice(FILE_ID_PREFIX.length);
  // Unpadded is canonical; correct "=" padding (as Python's urlsafe_b64encode writes) is accepted.
  const padding = /={1,2}$/.exec(encoded)?.[0].length ?? 0;
  if (padding > 0) {
    if (encoded.length % 4 !== 0) throw invalidFileId('bad base64url padding');
    encoded = encoded.slice(0, -padding);
  }
  if (!BASE64URL.test(encoded) || encoded.length % 4 === 1) throw invalidFileId('not base64url');
  const bytes = Buffer.from(encoded, 'base64url');
  // Non-zero trailing bits would let two ids name one path.
  if (bytes.toString('base64url') !== encoded) throw invalidFileId('not canonical base64url');
  let path: string;
  try {
    path = utf8.decode(bytes);
  } catch {
    throw invalidFileId('path is not UTF-8');
  }
  assertSandboxPath(path);
  return path;
}

/** path -> "cfile_" + base64url(path) (the definition is @switchyard/schema's, which the client shares). */
export const encodeFileId = containerFileId;
