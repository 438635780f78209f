// Which stored bytes a row may point at, and how a write keeps the storage sweep off the bytes it is
// storing. Bytes are stored first and a row is then committed pointing at them; between the two the
// bytes belong to no row. So a write first claims its key (a pending_objects row), and the
// transaction that makes a row point at the key releases the claim: at every moment a key whose
// bytes exist is claimed or referenced (or abandoned), and the sweep removes only keys that are
// neither. Keys are never reused, so an unreferenced key never becomes referenced again.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Db } from '@switchyard/db';
import type { BlobStorage, PutOptions, PutResult } from './storage.js';

/** Where rows' bytes live; the sweep looks only under these (anything else in the store is left alone). */
export const STORED_NAMESPACES = ['containers/', 'documents/'] as const;

/** A new key for a container file's bytes (each write of a file gets its own). */
export const containerObjectKey = (containerRowId: string) => `containers/${containerRowId}/${randomUUID()}`;

/** The key of a workspace document's bytes. */
export const documentObjectKey = (workspaceId: string, documentId: string) => `documents/${workspaceId}/${documentId}`;

/** Claims `key`, then stores the body under it. A failure leaves nothing: no bytes, no claim. */
export async function putClaimed(
  db: Db,
  storage: BlobStorage,
  key: string,
  body: Readable | AsyncIterable<Uint8Array>,
  options: PutOptions,
): Promise<PutResult> {
  try {
    await db.pendingObject.create({ data: { key } });
  } catch (error) {
    if ('destroy' in body && typeof body.destroy === 'function') body.destroy();
    throw error;
  }
  try {
    return await storage.put(key, body, options);
  } catch (error) {
    await db.pendingObject.deleteMany({ where: { key } }).catch(() => undefined);
    throw error;
  }
}

/** In the transaction that makes a row point at `key`: from its commit on, the row protects the bytes. */
export function settleClaim(tx: Pick<Db, 'pendingObject'>, key: string): Promise<unknown> {
  return tx.pendingObject.deleteMany({ where: { key } });
}

/** After a write whose row was not committed (or whose bytes turned out not to be needed). */
export async function discardClaimed(db: Db, storage: BlobStorage, key: string): Promise<void> {
  await storage.delete(key).catch(() => undefined);
  await db.pendingObject.deleteMany({ where: { key } }).catch(() => undefined);
}
