// What an uploaded document is, told from its bytes (platform-api.md D9), never from its name or the
// type its part declares. Binary formats are recognised by `file-type` from the first DETECT_BYTES;
// anything it does not recognise is accepted only as UTF-8 text, which must then be valid UTF-8
// (and hold no NUL byte) to its last byte, checked as the bytes stream by, and is reported by the
// structure of its first TEXT_BYTES (classifyText). The bytes pass through unchanged and are never
// held whole: only the bounded prefix is kept.
import { fileTypeFromBuffer } from 'file-type';
import { Invalid } from '../../lib/errors.js';

/** How much of the start `file-type` looks at (zip containers: the entries that name an Office document). */
export const DETECT_BYTES = 256 * 1024;
/** How much of the start of a text is classified. */
export const TEXT_BYTES = 64 * 1024;

/** The binary types accepted, as `file-type` names them (ext), with the media type reported. */
const BINARY: Record<string, string> = {
  pdf: 'application/pdf',
  png: 'image/png',
  // An animated PNG is a PNG.
  apng: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  flac: 'audio/flac',
  // Ogg audio, whatever the codec (Vorbis, Opus, Speex, FLAC in Ogg); Ogg video (ogv) is refused.
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  spx: 'audio/ogg',
};

export type TextType = 'application/json' | 'application/x-ndjson' | 'text/csv' | 'text/markdown' | 'text/plain';

const refused = (reason: string) => new Invalid(`file: ${reason}`, { parameter: 'file', reason });

/**
 * Passes an upload's bytes through while telling its type. `wrap()` yields every chunk unchanged and
 * throws Invalid (400) as soon as the content cannot be an accepted type, or at the end if the
 * file is empty or a text turns out not to be UTF-8; `type` is set once the last byte has passed.
 */
export class ContentSniffer {
  #prefix: Buffer[] = [];
  #prefixLength = 0;
  /** null: not decided yet; a media type once decided. */
  #type: string | null = null;
  #text = false;
  #size = 0;
  readonly #utf8 = new TextDecoder('utf-8', { fatal: true });

  /** The detected media type, once wrap() has finished. */
  get type(): string {
    if (this.#type === null) throw new Error('the upload has not been read to its end');
    return this.#type;
  }

  async *wrap(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      if (chunk.length === 0) continue;
      this.#size += chunk.length;
      if (this.#type === null) {
        this.#keep(chunk);
        if (this.#prefixLength >= DETECT_BYTES) await this.#decide();
      } else if (this.#text) this.#checkText(chunk);
      yield chunk;
    }
    if (this.#size === 0) throw refused('the file is empty');
    if (this.#type === null) await this.#decide();
    if (this.#text) {
      try {
        this.#utf8.decode();
      } catch {
        throw refused('not a supported type (text that is not UTF-8)');
      }
    }
  }

  #keep(chunk: Uint8Array): void {
    const room = DETECT_BYTES - this.#prefixLength;
    const kept = Buffer.from(chunk.subarray(0, room));
    this.#prefix.push(kept);
    this.#prefixLength += kept.length;
    // The text check runs from the first byte, so that it has seen every byte if the file is text.
    this.#checkText(chunk);
  }

  #utf8Failed = false;

  /** Feeds the streaming UTF-8 check (only its verdict is kept, not the text). */
  #checkText(chunk: Uint8Array): void {
    if (this.#utf8Failed) return;
    if (chunk.includes(0)) this.#utf8Failed = true;
    else {
      try {
        this.#utf8.decode(chunk, { stream: true });
      } catch {
        this.#utf8Failed = true;
      }
    }
    if (this.#utf8Failed && this.#text) throw refused('not a supported type (text that is not UTF-8)');
  }

  async #decide(): Promise<void> {
    const prefix = Buffer.concat(this.#prefix, this.#prefixLength);
    this.#prefix = [];
    const found = await fileTypeFromBuffer(prefix);
    if (found) {
      const type = BINARY[found.ext];
      if (!type) throw refused(`not a supported type (${found.mime})`);
      this.#type = type;
      return;
    }
    if (this.#utf8Failed) throw refused('not a supported type');
    this.#text = true;
    const whole = this.#size <= prefix.length;
    const head = prefix.subarray(0, TEXT_BYTES);
    // Without its incomplete last character, if the prefix cut one.
    const text = new TextDecoder('utf-8').decode(head, { stream: !(whole && head.length === prefix.length) });
    this.#type = classifyText(text, whole && head.length === prefix.length);
  }
}

const MARKDOWN_LINE = [
  /^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+\S/, // list item
  /^\s{0,3}>\s?\S/, // block quote
  /^\s{0,3}\|.*\|\s*$/, // table row
  /^\s{0,3}(?:=+|-{3,}|\*{3,}|_{3,})\s*$/, // setext underline, thematic break
];
const MARKDOWN_INLINE = [/\[[^\]\n]+\]\([^)\s]+\)/, /\*\*[^*\n]+\*\*/, /`[^`\n]+`/];

function isJsonStructure(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

/** The records of a CSV text (RFC 4180 quoting), each as its field count; null where quoting is broken. */
function csvFieldCounts(text: string, complete: boolean): number[] | null {
  const counts: number[] = [];
  let fields = 1;
  let quoted = false;
  let fieldStart = true;
  let lineHasContent = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') i++;
        else quoted = false;
      }
      continue;
    }
    if (c === '"') {
      if (!fieldStart) return null;
      quoted = true;
      lineHasContent = true;
      fieldStart = false;
    } else if (c === ',') {
      fields++;
      fieldStart = true;
      lineHasContent = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      if (lineHasContent) counts.push(fields);
      fields = 1;
      fieldStart = true;
      lineHasContent = false;
    } else {
      fieldStart = false;
      lineHasContent = true;
    }
  }
  // The last record counts only when the text is whole (a cut prefix ends in the middle of one).
  if (quoted) return complete ? null : counts;
  if (complete && lineHasContent) counts.push(fields);
  return counts;
}

/**
 * The structure of a UTF-8 text, from its start (`complete`: the whole text, else a prefix cut at
 * TEXT_BYTES, whose last line is not judged). In order, the first that holds:
 * - application/json: the whole text is one JSON object or array (for a cut prefix: it starts with
 *   `{` or `[` followed by what JSON allows there, and its first line is not a whole JSON value);
 * - application/x-ndjson: at least two non-empty lines, each a JSON object or array;
 * - text/markdown: a heading or fenced code block, or at least two lines of Markdown structure
 *   (list items, quotes, table rows, rules, links, bold, inline code);
 * - text/csv: at least two records (RFC 4180 quoting), all with the same number of fields, at least
 *   two (so two lines of prose with one comma each read as CSV: the structure is all there is);
 * - text/plain: anything else.
 */
export function classifyText(text: string, complete: boolean): TextType {
  const body = text.replace(/^\uFEFF/, '');
  const trimmed = body.trim();
  const lines = body.split(/\r?\n/);
  const judged = (complete ? lines : lines.slice(0, -1)).map((line) => line.trim()).filter((line) => line !== '');

  if (complete ? isJsonStructure(trimmed) : /^[{[]\s*(?:["{[\]}\-\d]|true|false|null)/.test(trimmed) && !(judged[0] && isJsonStructure(judged[0]))) {
    return 'application/json';
  }
  if (judged.length >= 2 && judged.every((line) => (line.startsWith('{') || line.startsWith('[')) && isJsonStructure(line))) {
    return 'application/x-ndjson';
  }
  let signals = 0;
  for (const line of complete ? lines : lines.slice(0, -1)) {
    if (/^#{1,6}\s+\S/.test(line) || /^(```|~~~)/.test(line)) return 'text/markdown';
    if (MARKDOWN_LINE.some((pattern) => pattern.test(line)) || MARKDOWN_INLINE.some((pattern) => pattern.test(line))) signals++;
    if (signals >= 2) return 'text/markdown';
  }
  const records = csvFieldCounts(body, complete);
  if (records && records.length >= 2 && records[0]! >= 2 && records.every((n) => n === records[0])) return 'text/csv';
  return 'text/plain';
}
