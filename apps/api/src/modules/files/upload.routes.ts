// POST /api/v1/files (platform-api.md D9): a multipart/form-data upload with exactly one part, named
// `file`, with a filename. A plain express route (trpc-to-openapi reads only JSON bodies): busboy
// parses the form as it streams, and the part's bytes go straight to the store, never held whole
// (documents.service.ts uploadDocument). The answer is 200 with the new File record, bare, in the
// request's File shape. app.ts mounts it through rawRoutes().
import { API_PREFIX, answers, WHY, UploadDocumentQuerySchema } from '@switchyard/schema';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { Request } from 'express';
import { declaredAnswer, DomainError, Invalid, httpErrorOf, logIfInternal } from '../../lib/errors.js';
import { uploadDocument, uploadTarget, type DocumentUpload } from './documents.service.js';
import { fileShapeOf } from './file-shapes.js';
import { WORKSPACE_QUERY } from './files.routes.js';
import { routeOf, type RawRoute } from '../../raw-routes/route.js';
import { requestErrorOf, sendError } from '../../raw-routes/send-error.js';
import { rawInputOf, type RawOperation } from '../../raw-routes/contracts.js';
import { loggerOf } from '../../lib/request-scope.js';

/** The longest filename kept (bytes of UTF-8), as common filesystems allow. */
const MAX_FILENAME_BYTES = 255;

const badForm = (reason: string) => new Invalid(`multipart body: ${reason}`, { parameter: 'file', reason });

/** A part's filename, if it is a plain name: no control characters, no U+FFFD (bytes that were not UTF-8), not too long. */
function filenameOf(name: string | undefined): string {
  const filename = (name ?? '').trim();
  if (filename === '') throw badForm('the file part has no filename');
  if (/[\u0000-\u001f\u007f\ufffd]/.test(filename) || /[\ud800-\udfff]/.test(filename.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''))) {
    throw badForm('the filename holds control characters or bytes that are not UTF-8');
  }
  if (Buffer.byteLength(filename, 'utf8') > MAX_FILENAME_BYTES) throw badForm(`the filename is over ${MAX_FILENAME_BYTES} bytes`);
  return filename;
}

interface FilePart {
  filename: string;
  /** Its bytes; a malformed or abandoned form fails them with the form's error (400). */
  body: AsyncIterable<Uint8Array>;
}

interface Form {
  /** The `file` part, once its headers are read. */
  file: Promise<FilePart>;
  /** The whole body read and the form well-formed. */
  complete: Promise<void>;
  /** Stops reading the request (after a failure). */
  stop(): void;
}

/** Reads the request as a form of exactly one part, `file`, with a filename; anything else is 400. */
function readForm(req: Request): Form {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // One file part at most: a second one trips filesLimit, and any field at all fieldsLimit.
      limits: { files: 1, fields: 0, fieldNameSize: 100, headerPairs: 20 },
      defParamCharset: 'utf8',
    });
  } catch {
    throw badForm('Content-Type must be multipart/form-data with a boundary');
  }
  let current: Readable | undefined;
  let seen = false;
  let failed: Error | undefined;
  let resolveFile!: (file: FilePart) => void;
  let rejectFile!: (error: Error) => void;
  let resolveComplete!: () => void;
  let rejectComplete!: (error: Error) => void;
  const file = new Promise<FilePart>((resolve, reject) => {
    resolveFile = resolve;
    rejectFile = reject;
  });
  const complete = new Promise<void>((resolve, reject) => {
    resolveComplete = resolve;
    rejectComplete = reject;
  });
  // Whoever awaits them later sees the rejection; until then it is not unhandled.
  file.catch(() => undefined);
  complete.catch(() => undefined);

  // busboy fails a part's stream with a plain Error (an unexpected end, say): the client's fault.
  async function* guarded(stream: Readable): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of stream) yield chunk as Uint8Array;
    } catch (error) {
      throw failed ?? (error instanceof DomainError ? error : badForm('malformed multipart body'));
    }
  }

  const fail = (error: Error) => {
    if (failed) return;
    failed = error;
    rejectFile(error);
    rejectComplete(error);
    // The store's write fails with it, so the bytes go.
    current?.destroy(error);
  };

  parser.on('file', (name, stream, info) => {
    // Its errors reach whoever reads it (the store's write); one after the write stopped reading is moot.
    stream.on('error', () => undefined);
    if (seen || failed) {
      stream.resume();
      return;
    }
    seen = true;
    if (name !== 'file') {
      stream.resume();
      // busboy gives no name (undefined, whatever its types say) for a part whose disposition has none.
      const named = typeof name === 'string' ? `named ${JSON.stringify(name.slice(0, 100))}` : 'without a name';
      fail(badForm(`the part is ${named}, not "file"`));
      return;
    }
    let filename: string;
    try {
      filename = filenameOf(info.filename);
    } catch (error) {
      stream.resume();
      fail(error as Error);
      return;
    }
    current = stream;
    resolveFile({ filename, body: guarded(stream) });
  });
  parser.on('field', () => fail(badForm('a form field besides the file part (only one part, "file", is taken)')));
  parser.on('filesLimit', () => fail(badForm('more than one file part')));
  parser.on('fieldsLimit', () => fail(badForm('a form field besides the file part (only one part, "file", is taken)')));
  parser.on('error', () => fail(badForm('malformed multipart body')));
  parser.on('close', () => {
    if (!seen) fail(badForm('no part named "file" with a filename'));
    else if (!failed) resolveComplete();
  });
  // A client that goes away mid-upload: the write fails, so the temp bytes go too.
  req.once('close', () => {
    if (!req.complete) fail(new Invalid('upload aborted by the client'));
  });
  req.pipe(parser);
  return {
    file,
    complete,
    stop() {
      req.unpipe(parser);
      current?.resume();
    },
  };
}

/** How much of a refused body is read and dropped, and for how long, before the connection is cut. */
const DRAIN_MAX_BYTES = 128 * 1024 * 1024;
const DRAIN_MAX_MS = 30_000;

/**
 * The rest of a refused body, read and dropped. A client still sending it gets the answer once it
 * has sent it: fetch (undici) writes the whole body before it reads an answer, and a connection
 * closed under it fails the call with a broken pipe (seen on Node 22) instead of the 400 or 413.
 * Past DRAIN_MAX_BYTES (more than any upload may hold) or DRAIN_MAX_MS, the connection is cut.
 */
function drainRefused(req: Request): void {
  let bytes = 0;
  const cut = () => req.socket.destroy();
  const timer = setTimeout(cut, DRAIN_MAX_MS).unref();
  const done = () => clearTimeout(timer);
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > DRAIN_MAX_BYTES) {
      done();
      cut();
    }
  });
  req.once('end', done);
  req.once('close', done);
  req.resume();
}

export const DOCUMENT_UPLOAD = {
  method: 'POST',
  prefix: API_PREFIX,
  path: '/files',
  input: UploadDocumentQuerySchema,
  body: 'multipart',
  scope: 'files:write',
  statuses: answers({
    400:
      'not a multipart/form-data body, or not exactly one part named "file" with a filename (no part, two parts, a form field, a malformed or cut-off body, ' +
      `a filename with control characters or over 255 bytes); an empty file; content of no supported type; the upload aborted by the client; provider given (only the platform's own storage); ${WHY.unknownWorkspace}; ${WHY.unstorable}`,
    403: `a regular key asking for another workspace; ${WHY.scopedKey}`,
    413: 'the file exceeds MAX_FILE_BYTES (100 MiB by default), or the workspace storage quota would be exceeded (nothing stored)',
    503: 'storage cannot be written (nothing stored)',
  }),
  listed: [400, 401, 403, 413, 429, 500, 502, 503],
} as const satisfies RawOperation;

export const UPLOAD_ROUTES: readonly RawRoute[] = [
  routeOf(DOCUMENT_UPLOAD, {
    access: 'tenant',
    doc: {
      operationId: 'files-upload',
      summary: 'Upload a workspace document',
      description:
        'A `multipart/form-data` body with exactly one part, `file`, with a filename. The bytes are streamed to storage ' +
        '(at most MAX_FILE_BYTES, 100 MiB by default, and what is left of the workspace storage quota: 413 beyond either). ' +
        'The type is detected from the content, never from the filename or the part type: PDF; PNG, JPEG, GIF, WebP; ' +
        'DOCX, XLSX, PPTX; MP3, WAV, FLAC, OGG; or UTF-8 text, reported by its structure as application/json, ' +
        'application/x-ndjson, text/csv, text/markdown or text/plain. Anything else, and an empty file, is 400. ' +
        'Answers 200 with the new File record (bare, in the request\'s File shape; compat_b: purpose "user_data"), ' +
        'listed by GET /files at once. Uploaded files are not downloadable. Regular keys: their own workspace only.',
      tags: ['Files'],
      contentType: 'application/json',
      query: WORKSPACE_QUERY,
      multipart: true,
    },
    async handle(deps, req, res, actor) {
      let form: Form | undefined;
      try {
        const input = rawInputOf(DOCUMENT_UPLOAD, req);
        const shape = fileShapeOf(req.headers);
        const target = await uploadTarget(deps, actor, input);
        form = readForm(req);
        const { filename, body } = await form.file;
        const upload: DocumentUpload = { filename, body, complete: form.complete };
        const file = await uploadDocument(deps, actor, { target, upload, shape });
        res.status(200).json(file);
      } catch (caught) {
        form?.stop();
        // D9 lists no 404: a workspace_id that names nothing is input it will not take (400).
        const error = declaredAnswer(DOCUMENT_UPLOAD.statuses, httpErrorOf(requestErrorOf(caught)));
        logIfInternal(loggerOf(req, deps.logger), error, { method: req.method, path: req.path });
        if (res.headersSent) {
          res.destroy();
          return;
        }
        if (!req.complete) drainRefused(req);
        sendError(res, error);
      }
    },
  }),
];
