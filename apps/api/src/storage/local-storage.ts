// The default BlobStorage: files under a root directory (DATA_DIR/blobs).
// put(): stream into a temp file in the same filesystem, fsync it, rename it into place, fsync
// the directory. A crash at any point leaves either nothing or the whole file under the key; temp
// files are never visible under a key. get(): a read stream over an open descriptor, so memory
// stays flat whatever the size (and a concurrent delete cannot cut a read short).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DomainError, NotFound, PayloadTooLarge, Unavailable } from '../errors.js';
import { assertStorageKey, type BlobStorage, type PutOptions, type PutResult, type StoredObject } from './storage.js';

const TMP_DIR = '.tmp';

function isFsError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string';
}

/** A filesystem failure is the storage being unavailable; everything else keeps its meaning. */
function unavailable(error: unknown, what: string): unknown {
  if (error instanceof DomainError) return error;
  if (isFsError(error)) return new Unavailable(`storage ${what} failed: ${error.code ?? error.message}`);
  return error;
}

export class LocalStorage implements BlobStorage {
  constructor(readonly root: string) {}

  private pathOf(key: string): string {
    assertStorageKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array>, options: PutOptions = {}): Promise<PutResult> {
    const target = this.pathOf(key);
    const tmpDir = path.join(this.root, TMP_DIR);
    const tmp = path.join(tmpDir, `${randomBytes(12).toString('hex')}.part`);
    const hash = createHash('sha256');
    const max = options.maxBytes ?? Number.POSITIVE_INFINITY;
    let size = 0;
    let handle: fs.FileHandle | undefined;
    try {
      await fs.mkdir(tmpDir, { recursive: true });
      handle = await fs.open(tmp, 'wx', 0o600);
      // One chunk at a time, each written before the next is read: backpressure, flat memory.
      for await (const chunk of body) {
        const bytes = chunk as Uint8Array;
        size += bytes.length;
        if (size > max) throw new PayloadTooLarge(`stream exceeds ${max} bytes`);
        hash.update(bytes);
        for (let offset = 0; offset < bytes.length; ) {
          offset += (await handle.write(bytes, offset, bytes.length - offset)).bytesWritten;
        }
      }
      await handle.sync();
      await handle.close();
      handle = undefined;
      const dir = path.dirname(target);
      await fs.mkdir(dir, { recursive: true });
      await fs.rename(tmp, target);
      await syncDir(dir);
      return { size, sha256: hash.digest('hex') };
    } catch (error) {
      // The body is released either way (a failed iteration destroys it; an early failure too).
      if ('destroy' in body && typeof body.destroy === 'function') body.destroy();
      await handle?.close().catch(() => undefined);
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      throw unavailable(error, 'write');
    }
  }

  async get(key: string): Promise<StoredObject> {
    const file = this.pathOf(key);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFound(`no stored object ${key}`);
      throw unavailable(error, 'read');
    }
    try {
      const { size } = await handle.stat();
      return { size, stream: handle.createReadStream({ highWaterMark: 64 * 1024 }) };
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
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw unavailable(error, 'stat');
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await fs.rm(this.pathOf(key), { force: true });
    } catch (error) {
      throw unavailable(error, 'delete');
    }
  }
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
