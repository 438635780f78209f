// compat.md: a File is answered in the shape the caller's SDK expects. native is the default; an
// anthropic-version header selects compat_a; an OpenAI SDK request (an OpenAI-Beta header, or
// x-stainless-* headers with a User-Agent starting "OpenAI/") selects compat_b.
import type { IncomingHttpHeaders } from 'node:http';
import type { Document } from '@switchyard/db';
import type { File, FileShape } from '@switchyard/schema';
import { FilePurposeSchema } from '@switchyard/schema';

/** The File shape a request answers in, in a service's input (fileShapeOf: the HTTP layer reads it from the headers). */
export interface Shaped {
  shape: FileShape;
}

export function fileShapeOf(headers: IncomingHttpHeaders): FileShape {
  if (headers['anthropic-version'] !== undefined) return 'compat_a';
  if (headers['openai-beta'] !== undefined) return 'compat_b';
  const userAgent = headers['user-agent'];
  if (typeof userAgent === 'string' && userAgent.startsWith('OpenAI/') && Object.keys(headers).some((name) => name.startsWith('x-stainless-'))) {
    return 'compat_b';
  }
  return 'native';
}

/** A document as a File record of the given shape; every field of that shape is present. */
export function fileRecordOf(document: Document, shape: FileShape): File {
  if (shape === 'compat_b') {
    const purpose = FilePurposeSchema.safeParse(document.purpose);
    return {
      _shape: 'compat_b',
      id: document.id,
      object: 'file',
      bytes: Number(document.size_bytes),
      created_at: Math.floor(document.created_at.getTime() / 1000),
      filename: document.filename,
      purpose: purpose.success ? purpose.data : 'assistants',
      status: 'processed',
    } satisfies File;
  }
  return {
    _shape: shape,
    id: document.id,
    type: 'file',
    filename: document.filename,
    mime_type: document.mime_type,
    size_bytes: Number(document.size_bytes),
    created_at: document.created_at.toISOString(),
    downloadable: document.downloadable,
  } satisfies File;
}
