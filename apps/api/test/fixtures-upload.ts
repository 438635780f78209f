// Helpers for the upload tests (POST /files): small real samples of every accepted type family,
// made here byte by byte (a zip writer for the Office formats: stored entries, CRC-32 from
// node:zlib), and multipart bodies, well-formed or not, sent through node:http.
import http from 'node:http';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import type { TestServer } from '../src/testing/test-server.js';

/** A zip archive of `entries` (name, text), stored (no compression). */
export function zip(entries: Array<[string, string | Buffer]>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of entries) {
    const data = Buffer.from(content);
    const fileName = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    locals.push(local, fileName, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

function office(main: string, part: string): Buffer {
  const types =
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Default Extension="xml" ContentType="application/xml"/>' +
    `<Override PartName="/${part}" ContentType="${main}"/></Types>`;
  return zip([
    ['[Content_Types].xml', types],
    [part, '<?xml version="1.0" encoding="UTF-8"?><root/>'],
  ]);
}

function riff(form: string, body: Buffer): Buffer {
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(4 + body.length, 4);
  header.write(form, 8, 'latin1');
  return Buffer.concat([header, body]);
}

function wav(): Buffer {
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'latin1');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8); // PCM
  fmt.writeUInt16LE(1, 10); // mono
  fmt.writeUInt32LE(8000, 12);
  fmt.writeUInt32LE(16000, 16);
  fmt.writeUInt16LE(2, 20);
  fmt.writeUInt16LE(16, 22);
  const samples = Buffer.alloc(800);
  const data = Buffer.alloc(8);
  data.write('data', 0, 'latin1');
  data.writeUInt32LE(samples.length, 4);
  return riff('WAVE', Buffer.concat([fmt, data, samples]));
}

function png(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0);
  ihdr.writeUInt32BE(1, 4);
  ihdr[8] = 8;
  ihdr[9] = 0;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', Buffer.from([0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01])),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function ogg(): Buffer {
  const page = Buffer.alloc(27);
  page.write('OggS', 0, 'latin1');
  page[5] = 0x02; // first page
  page[26] = 1; // one segment
  const packet = Buffer.concat([Buffer.from([0x01]), Buffer.from('vorbis', 'latin1'), Buffer.alloc(23)]);
  return Buffer.concat([page, Buffer.from([packet.length]), packet]);
}

function mp3(): Buffer {
  // An ID3v2.3 tag (empty), then MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz: 417 bytes each).
  const tag = Buffer.from([0x49, 0x44, 0x33, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat([tag, frame, frame, frame]);
}

/** One small real sample per binary type family, with the media type POST /files reports for it. */
export const BINARY_SAMPLES: Array<{ name: string; bytes: Buffer; type: string }> = [
  {
    name: 'doc.pdf',
    bytes: Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n', 'latin1'),
    type: 'application/pdf',
  },
  { name: 'pixel.png', bytes: png(), type: 'image/png' },
  {
    name: 'photo.jpg',
    bytes: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0', 'latin1'), Buffer.alloc(64), Buffer.from([0xff, 0xd9])]),
    type: 'image/jpeg',
  },
  { name: 'anim.gif', bytes: Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from([1, 0, 1, 0, 0, 0, 0]), Buffer.from([0x3b])]), type: 'image/gif' },
  { name: 'image.webp', bytes: riff('WEBP', Buffer.concat([Buffer.from('VP8 ', 'latin1'), Buffer.alloc(40)])), type: 'image/webp' },
  {
    name: 'letter.docx',
    bytes: office('application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml', 'word/document.xml'),
    type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  },
  {
    name: 'sheet.xlsx',
    bytes: office('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml', 'xl/workbook.xml'),
    type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  },
  {
    name: 'deck.pptx',
    bytes: office('application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml', 'ppt/presentation.xml'),
    type: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  },
  { name: 'song.mp3', bytes: mp3(), type: 'audio/mpeg' },
  { name: 'tone.wav', bytes: wav(), type: 'audio/wav' },
  { name: 'tone.flac', bytes: Buffer.concat([Buffer.from('fLaC', 'latin1'), Buffer.from([0x80, 0, 0, 34]), Buffer.alloc(34)]), type: 'audio/flac' },
  { name: 'voice.ogg', bytes: ogg(), type: 'audio/ogg' },
];

/** One sample per text kind. */
export const TEXT_SAMPLES: Array<{ name: string; bytes: Buffer; type: string }> = [
  { name: 'data.json', bytes: Buffer.from('{\n  "name": "Zoë",\n  "tags": ["a", "b"]\n}\n'), type: 'application/json' },
  { name: 'events.ndjson', bytes: Buffer.from('{"event":"a","n":1}\n{"event":"b","n":2}\n{"event":"c","n":3}\n'), type: 'application/x-ndjson' },
  { name: 'table.csv', bytes: Buffer.from('id,name,city\n1,"Doe, Jane",Paris\n2,Zoë,"New\nYork"\n'), type: 'text/csv' },
  { name: 'notes.md', bytes: Buffer.from('# Notes\n\nSome *text* and a [link](https://example.com).\n'), type: 'text/markdown' },
  { name: 'readme.txt', bytes: Buffer.from('Plain words, nothing more.\nA second line without structure\n'), type: 'text/plain' },
];

export interface Part {
  name: string;
  filename?: string;
  type?: string;
  bytes: Buffer;
}

export const BOUNDARY = 'switchyard-test-boundary-7d3f';

/** A multipart/form-data body of these parts (closed unless `unterminated`). */
export function multipart(parts: Part[], options: { unterminated?: boolean } = {}): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`;
    chunks.push(
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${part.type ?? 'application/octet-stream'}\r\n\r\n`, 'utf8'),
      part.bytes,
      Buffer.from('\r\n'),
    );
  }
  if (!options.unterminated) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

/**
 * POST /api/v1/files through node:http with exactly this body (bytes, or a stream read only as fast
 * as the socket drains) and Content-Type (multipart with BOUNDARY unless told).
 */
export function upload(
  server: { url: string },
  body: Buffer | AsyncIterable<Uint8Array>,
  options: { key?: string | null; query?: string; headers?: Record<string, string>; contentType?: string | null } = {},
): Promise<Answer> {
  const url = new URL(`/api/v1/files${options.query ?? ''}`, server.url);
  const headers: Record<string, string> = { ...options.headers };
  const contentType = options.contentType === undefined ? `multipart/form-data; boundary=${BOUNDARY}` : options.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (Buffer.isBuffer(body)) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers, agent: false });
    req.on('response', async (res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
    });
    req.on('error', reject);
    if (Buffer.isBuffer(body)) req.end(body);
    else {
      const source = Readable.from(body);
      source.pipe(req);
      // A refused upload is answered before its body is all sent: the socket closing then is expected.
      source.on('error', () => req.destroy());
    }
  });
}

/** Uploads one file as the `file` part. */
export const uploadFile = (server: TestServer, filename: string, bytes: Buffer, options: Parameters<typeof upload>[2] = {}) =>
  upload(server, multipart([{ name: 'file', filename, bytes }]), { key: server.managementKey, ...options });
