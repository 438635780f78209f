// The default BlobStorage: files under a root directory (DATA_DIR/blobs, or STORAGE_URL=file://<dir>).
// put(): stream into a temp file in the same filesystem (ROOT/.tmp), fsync it, rename it into place,
// fsync the directory. A crash at any point leaves either nothing or the whole file under the key;
// temp files are never visible under a key (the storage sweep removes abandoned ones). get(): a read
// stream over an open descriptor, so memory stays flat whatever the size (and a concurrent delete
// cannot cut a read short). delete() also removes the directories it leaves empty.
import { randomBytes } from 'node:crypto';
import type { Dir } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DomainError, Invalid, NotFound, Unavailable } from '../lib/errors.js';
import {
  assertStorageKey,
  type BlobStorage,
  type GetOptions,
  type PutOptions,
  type PutResult,
  PutMeter,
  type StoredEntry,
  type StoredObject,
  type TemporaryUpload,
} from './storage.js';

const TMP_DIR = '.tmp';
const TMP_FILE = /^[0-9a-f]{24}\.part$/;

function isFsError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string';
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** A filesystem failure is the storage being unavailable; everything else keeps its meaning. */
function unavailable(error: unknown, what: string): unknown {
  if (error instanceof DomainError) return error;
  if (isFsError(error)) return new Unavailable(`storage ${what} failed: ${error.code ?? error.message}`);
  return error;
}

export class LocalStorage implements BlobStorage {
  constructor(readonly root: string) {}

  get location(): string {
    return `file://${this.root}`;
  }

  private pathOf(key: string): string {
    assertStorageKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array>, options: PutOptions = {}): Promise<PutResult> {
    const target = this.pathOf(key);
    const tmpDir = path.join(this.root, TMP_DIR);
    const tmp = path.join(tmpDir, `${randomBytes(12).toString('hex')}.part`);
    const meter = new PutMeter(options);
    let handle: fs.FileHandle | undefined;
    try {
      await fs.mkdir(tmpDir, { recursive: true });
      handle = await fs.open(tmp, 'wx', 0o600);
      // One chunk at a time, each written before the next is read: backpressure, flat memory.
      for await (const chunk of body) {
        const bytes = chunk as Uint8Array;
        meter.add(bytes);
        for (let offset = 0; offset < bytes.length; ) {
          offset += (await handle.write(bytes, offset, bytes.length - offset)).bytesWritten;
        }
      }
      await handle.sync();
      await handle.close();
      handle = undefined;
      const dir = path.dirname(target);
      // A concurrent delete() may remove the directory between mkdir and rename when it is empty.
      for (let attempt = 1; ; attempt++) {
        await fs.mkdir(dir, { recursive: true });
        try {
          await fs.rename(tmp, target);
          break;
        } catch (error) {
          if (codeOf(error) !== 'ENOENT' || attempt >= 5) throw error;
        }
      }
      await syncDir(dir);
      return meter.result();
    } catch (error) {
      // The body is released either way (a failed iteration destroys it; an early failure too).
      if ('destroy' in body && typeof body.destroy === 'function') body.destroy();
      await handle?.close().catch(() => undefined);
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      throw unavailable(error, 'write');
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<StoredObject> {
    const file = this.pathOf(key);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (error) {
      if (codeOf(error) === 'ENOENT') throw new NotFound(`no stored object ${key}`);
      throw unavailable(error, 'read');
    }
    try {
      const { size } = await handle.stat();
      const { range } = options;
      if (!range) return { size, stream: handle.createReadStream({ highWaterMark: 64 * 1024 }) };
      if (range.start >= size || range.end < range.start) throw new Invalid(`range ${range.start}-${range.end} of ${size} bytes`);
      const served = { start: range.start, end: Math.min(range.end, size - 1) };
      return { size, range: served, stream: handle.createReadStream({ ...served, highWaterMark: 64 * 1024 }) };
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw unavailable(error, 'read');
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      const stats = await fs.stat(this.pathOf(key));
      return { size: stats.size };
    } catch (error) {
      if (codeOf(error) === 'ENOENT') return null;
      throw unavailable(error, 'stat');
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.pathOf(key);
    try {
      await fs.rm(file, { force: true });
    } catch (error) {
      throw unavailable(error, 'delete');
    }
    // Directories the key leaves empty go too (a put into one retries if it loses that race).
    for (let dir = path.dirname(file); dir.startsWith(`${this.root}${path.sep}`); dir = path.dirname(dir)) {
      try {
        await fs.rmdir(dir);
      } catch {
        break; // not empty (or gone already)
      }
    }
  }

  async *list(prefix: string): AsyncIterable<StoredEntry> {
    // Walk from the deepest directory the prefix names in full.
    const slash = prefix.lastIndexOf('/');
    const start = slash < 0 ? this.root : path.join(this.root, ...prefix.slice(0, slash).split('/'));
    for await (const file of walk(start)) {
      const key = path.relative(this.root, file).split(path.sep).join('/');
      if (!key.startsWith(prefix) || key === TMP_DIR || key.startsWith(`${TMP_DIR}/`)) continue;
      try {
        const stats = await fs.stat(file);
        yield { key, size: stats.size, modifiedAt: stats.mtime };
      } catch (error) {
        if (codeOf(error) !== 'ENOENT') throw unavailable(error, 'list'); // deleted meanwhile: not listed
      }
    }
  }

  async *listTemporary(): AsyncIterable<TemporaryUpload> {
    const tmpDir = path.join(this.root, TMP_DIR);
    const names = await fs.readdir(tmpDir).catch((error: unknown) => {
      if (codeOf(error) === 'ENOENT') return [] as string[];
      throw unavailable(error, 'list');
    });
    for (const name of names) {
      if (!TMP_FILE.test(name)) continue;
      try {
        yield { id: name, since: (await fs.stat(path.join(tmpDir, name))).mtime };
      } catch (error) {
        if (codeOf(error) !== 'ENOENT') throw unavailable(error, 'list'); // finished meanwhile
      }
    }
  }

  async removeTemporary(id: string): Promise<void> {
    if (!TMP_FILE.test(id)) throw new Error(`invalid temporary upload ${JSON.stringify(id)}`);
    try {
      await fs.rm(path.join(this.root, TMP_DIR, id), { force: true });
    } catch (error) {
      throw unavailable(error, 'delete');
    }
  }
}

/** Every file under `dir` (none when it does not exist), one directory open at a time. */
async function* walk(dir: string): AsyncIterable<string> {
  let handle: Dir;
  try {
    handle = await fs.opendir(dir);
  } catch (error) {
    if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return;
    throw unavailable(error, 'list');
  }
  const subdirs: string[] = [];
  for await (const entry of handle) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) subdirs.push(full);
    else if (entry.isFile()) yield full;
  }
  for (const sub of subdirs) yield* walk(sub);
}

/** Makes a rename durable: fsync the directory that holds the new name. */
async function syncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
