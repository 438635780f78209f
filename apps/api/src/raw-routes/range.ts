// Range requests (RFC 9110, section 14) for downloads of stored bytes: one byte range per request.
// Anything else (several ranges, another unit, a malformed or unsatisfiable range, an If-Range
// validator that does not match) is ignored, as the RFC allows, and the whole file is served with 200.
import type { IncomingHttpHeaders } from 'node:http';
import type { ByteRange } from '../storage/storage.js';

const BYTES = /^bytes=(\d*)-(\d*)$/;

/** The range the request asks for, within `size` bytes whose strong ETag is `etag`; undefined: all. */
export function requestedRange(headers: IncomingHttpHeaders, size: number, etag: string): ByteRange | undefined {
  const header = headers.range;
  if (typeof header !== 'string') return undefined;
  const ifRange = headers['if-range'];
  if (ifRange !== undefined && ifRange !== etag) return undefined;
  const match = BYTES.exec(header.trim());
  if (!match || size === 0) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '') {
    // bytes=-n: the last n bytes.
    const suffix = Number(last);
    if (last === '' || suffix === 0) return undefined;
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (!Number.isSafeInteger(start) || start >= size || end < start) return undefined;
  return { start, end };
}
