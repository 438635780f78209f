// Stored bytes (container sandboxes, workspace documents) live behind this one small interface, in a
// local directory (LocalStorage, the default) or an S3-compatible bucket (S3Storage). Keys are
// opaque, server-made names (`documents/<workspace>/<id>`); no client-supplied path ever reaches a
// backend, so a backend never has to defend against traversal itself.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { PayloadTooLarge } from '../lib/errors.js';

export interface PutOptions {
  /** Refuse (PayloadTooLarge) and store nothing once the stream exceeds this many bytes. */
  maxBytes?: number;
}

export interface PutResult {
  size: number;
  /** SHA-256 hex of the stored bytes. */
  sha256: string;
}

/**
 * What a put() measures of the bytes it stores, chunk by chunk as they stream through: their size
 * and SHA-256, and the refusal (PayloadTooLarge) of the chunk that takes them past `maxBytes`.
 */
export class PutMeter {
  readonly #hash = createHash('sha256');
  readonly #max: number;
  #size = 0;

  constructor(options: PutOptions) {
    this.#max = options.maxBytes ?? Number.POSITIVE_INFINITY;
  }

  /** Counts a chunk about to be stored; throws PayloadTooLarge (and counts nothing) past the limit. */
  add(chunk: Uint8Array): void {
    if (this.#size + chunk.length > this.#max) throw new PayloadTooLarge(`stream exceeds ${this.#max} bytes`);
    this.#size += chunk.length;
    this.#hash.update(chunk);
  }

  /** Once every chunk is stored. */
  result(): PutResult {
    return { size: this.#size, sha256: this.#hash.digest('hex') };
  }
}

/** Bytes `start` to `end` of an object, both included (as in HTTP's Range). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface GetOptions {
  /** Only these bytes; `end` past the object's end means up to its end. */
  range?: ByteRange;
}

export interface StoredObject {
  /** Size of the whole stored object. */
  size: number;
  /** The bytes served when a range was asked for (end clamped to the object's last byte). */
  range?: ByteRange;
  /** The bytes (the whole object, or the range), streamed; the caller must consume or destroy it. */
  stream: Readable;
}

/** A stored object, as listed. */
export interface StoredEntry {
  key: string;
  size: number;
  modifiedAt: Date;
}

/** An upload that has not finished (a temp file, an S3 multipart upload). */
export interface TemporaryUpload {
  /** Opaque, for removeTemporary(). */
  id: string;
  /** The key it will be stored under, where the backend knows it (S3). */
  key?: string;
  /** Its last write (a local temp file) or its start (an S3 multipart upload). */
  since: Date;
}

export interface BlobStorage {
  /** Where the bytes are, for logs: `file:///…` or `s3://bucket/prefix/`. */
  readonly location: string;
  /**
   * Stores a stream under `key`, atomically: until it resolves nothing is visible under `key`, and a
   * failure (or a crash) leaves the previous state. Backend failures throw Unavailable (503). The
   * body is consumed, and destroyed on failure.
   */
  put(key: string, body: Readable | AsyncIterable<Uint8Array>, options?: PutOptions): Promise<PutResult>;
  /**
   * Opens the stored bytes (or a range of them) for streaming; NotFound when absent, Invalid when
   * the range starts past the end, Unavailable when unreadable.
   */
  get(key: string, options?: GetOptions): Promise<StoredObject>;
  /** Size of the stored bytes, or null when absent. */
  stat(key: string): Promise<{ size: number } | null>;
  /** Removes the stored bytes; absent is not an error. */
  delete(key: string): Promise<void>;
  /** Every stored object whose key starts with `prefix`, in no particular order. */
  list(prefix: string): AsyncIterable<StoredEntry>;
  /** Uploads that have not finished: running ones, and ones a crash abandoned. */
  listTemporary(): AsyncIterable<TemporaryUpload>;
  /** Abandons an unfinished upload and frees what it holds; gone already is not an error. */
  removeTemporary(id: string): Promise<void>;
}

/** Keys are `/`-separated segments of [A-Za-z0-9._-], none of them `.` or `..`. */
const KEY = /^(?!.*(?:^|\/)\.{1,2}(?:\/|$))[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*$/;

export function assertStorageKey(key: string): void {
  if (!KEY.test(key) || key.length > 512) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
}

/** Whether `key` is a valid storage key (see assertStorageKey). */
export function isStorageKey(key: string): boolean {
  return KEY.test(key) && key.length <= 512;
}
