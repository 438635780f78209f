import { createWriteStream } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CliError, requireString, type Command, type CommandContext } from '../command.js';

const NEWLINE = 0x0a;

/**
 * Passes bytes through unchanged, keeping only the last complete line and what follows it (never
 * the whole stream): the export's trailer is its last line.
 */
class LastLine extends Transform {
  /** The bytes after the last newline so far (at most one line, in pieces). */
  #open: Buffer[] = [];
  last: Buffer | null = null;
  endsWithNewline = true;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const end = chunk.lastIndexOf(NEWLINE);
    if (end === -1) {
      this.#open.push(chunk);
    } else {
      const start = end === 0 ? -1 : chunk.lastIndexOf(NEWLINE, end - 1);
      this.last = start === -1 ? Buffer.concat([...this.#open, chunk.subarray(0, end)]) : chunk.subarray(start + 1, end);
      this.#open = end + 1 < chunk.length ? [chunk.subarray(end + 1)] : [];
    }
    this.endsWithNewline = this.#open.length === 0;
    done(null, chunk);
  }
}

interface Trailer {
  type: 'end';
  counts: Record<string, number>;
}

function trailerOf(line: Buffer | null): Trailer | null {
  if (!line) return null;
  try {
    const parsed = JSON.parse(line.toString('utf8')) as Partial<Trailer> | null;
    return parsed?.type === 'end' && typeof parsed.counts === 'object' && parsed.counts !== null ? (parsed as Trailer) : null;
  } catch {
    return null;
  }
}

/**
 * GET /api/v1/export, streamed to FILE.partial and renamed to FILE once its trailer has arrived:
 * FILE is always a whole export, never a part of one (a cut-short download leaves no FILE).
 */
async function exportTo(ctx: CommandContext, file: string, force: boolean): Promise<{ file: string; bytes: number; counts: Record<string, number> }> {
  const target = path.resolve(ctx.cwd, file);
  if (!force && (await stat(target).catch(() => null))) throw new CliError(`${file} exists: pass --force to replace it`);
  const partial = `${target}.partial`;
  let res: Response;
  try {
    res = await fetch(`${ctx.url.replace(/\/$/, '')}/api/v1/export`, { headers: { authorization: `Bearer ${ctx.apiKey}` } });
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause;
    throw new CliError(`cannot reach ${ctx.url}: ${cause?.message ?? (error as Error).message}`);
  }
  if (!res.ok || !res.body) {
    const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    throw new CliError(`${res.status} ${body?.error?.message ?? res.statusText}`);
  }
  const tail = new LastLine();
  let bytes = 0;
  tail.on('data', (chunk: Buffer) => (bytes += chunk.length));
  try {
    await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>), tail, createWriteStream(partial));
  } catch (error) {
    await unlink(partial).catch(() => {});
    throw new CliError(`the export was cut short (${(error as Error).message}); nothing written to ${file}`);
  }
  const trailer = tail.endsWithNewline ? trailerOf(tail.last) : null;
  if (!trailer) {
    await unlink(partial).catch(() => {});
    throw new CliError(`the export was cut short (no trailer line); nothing written to ${file}`);
  }
  await rename(partial, target);
  return { file: target, bytes, counts: trailer.counts };
}

export const exportCommands: Command[] = [
  {
    path: ['export'],
    summary: "Export the organization's data to a JSON Lines file (docs/export.md; management key with export:read)",
    options: {
      out: { type: 'string', value: '<file>', description: 'the file to write (written as <file>.partial, renamed when complete)' },
      force: { type: 'boolean', description: 'replace <file> if it exists' },
    },
    async run(ctx) {
      const done = await exportTo(ctx, requireString(ctx, 'out'), ctx.options.force === true);
      return {
        json: done,
        human: {
          columns: ['type', 'records'],
          rows: Object.entries(done.counts),
          footer: [`${done.file}: ${done.bytes} bytes`],
        },
      };
    },
  },
];
