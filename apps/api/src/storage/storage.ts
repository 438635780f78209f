// Stored bytes (container sandboxes, workspace documents) live behind this one small interface.
// Keys are opaque, server-made names (`documents/<workspace>/<id>`); no client-supplied path ever
// reaches a backend, so a backend never has to defend against traversal itself.
import type { Readable } from 'node:stream';

export interface PutOptions {
  /** Refuse (PayloadTooLarge) and store nothing once the stream exceeds this many bytes. */
  maxBytes?: number;
}

export interface PutResult {
  size: number;
  /** SHA-256 hex of the stored bytes. */
  sha256: string;
}

export interface StoredObject {
  size: number;
  /** The bytes, streamed; the caller must consume or destroy it. */
  stream: Readable;
}

export interface BlobStorage {
  /**
   * Stores a stream under `key`, atomically: until it resolves nothing is visible under `key`, and a
   * failure (or a crash) leaves the previous state. Backend failures throw Unavailable (503). The
   * body is consumed, and destroyed on failure.
   */
  put(key: string, body: Readable | AsyncIterable<Uint8Array>, options?: PutOptions): Promise<PutResult>;
  /** Opens the stored bytes for streaming; NotFound when absent, Unavailable when unreadable. */
  get(key: string): Promise<StoredObject>;
  /** Size of the stored bytes, or null when absent. */
  stat(key: string): Promise<{ size: number } | null>;
  /** Removes the stored bytes; absent is not an error. */
  delete(key: string): Promise<void>;
}

/** Keys are `/`-separated segments of [A-Za-z0-9._-], none of them `.` or `..`. */
const KEY = /^(?!.*(?:^|\/)\.{1,2}(?:\/|$))[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*$/;

export function assertStorageKey(key: string): void {
  if (!KEY.test(key) || key.length > 512) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
}
