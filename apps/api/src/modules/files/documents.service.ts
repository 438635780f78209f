// Workspace documents (admin-api.md B7-B10): list, read, download and delete the files promote
// made. Every operation acts in one workspace: the one the caller names (UUID or slug), or its key's
// own; a regular key may name only its own (403). Answers take the File shape of the request
// (file-shapes.ts). Only the platform's own storage is served: `provider` (a tenant's provider
// credential) is refused with 400, as are the listing features that storage does not have.
import { queryRows, statement, type Db, type Document } from '@switchyard/db';
import { z } from 'zod';
import type { DocumentDeletion, DocumentInput, DocumentPage, File, FileShape, ListDocumentsInput } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { assertWorkspaceAccess, resolveWorkspaceOrOwn } from '../../access/workspaces.js';
import { Invalid, NotFound } from '../../errors.js';
import type { MediaDeps } from '../../storage/media.js';
import type { ByteRange } from '../../storage/storage.js';
import { fileRecordOf } from './file-shapes.js';
import type { Download } from './files.service.js';

function unsupported(parameter: string, reason: string): Invalid {
  return new Invalid(`${parameter}: ${reason}`, { parameter, reason });
}

/** The workspace the request acts in, after the caller's access to it. */
async function workspaceOf(db: Db, actor: Actor, input: { workspace_id?: string; provider?: string }): Promise<string> {
  if (input.provider !== undefined) throw unsupported('provider', "files are kept in the platform's own storage only; omit provider");
  const workspace = await resolveWorkspaceOrOwn(db, actor, input.workspace_id);
  assertWorkspaceAccess(actor, workspace.id);
  return workspace.id;
}

async function findDocument(db: Db, actor: Actor, input: DocumentInput): Promise<Document> {
  const workspaceId = await workspaceOf(db, actor, input);
  const document = await db.document.findFirst({ where: { id: input.file_id, workspace_id: workspaceId } });
  if (!document) throw new NotFound(`file ${input.file_id}`);
  return document;
}

// ---- Listing: oldest first, keyset on (created_at, id) -----------------------------------------

interface Position {
  created_at: Date;
  id: string;
}

/** The opaque cursor of a native page: where the next page starts (after this document). */
function cursorOf(position: Position): string {
  return Buffer.from(`${position.created_at.toISOString()}|${position.id}`, 'utf8').toString('base64url');
}

function positionOfCursor(cursor: string): Position {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|', 2);
  const created_at = new Date(at ?? '');
  if (!id || Number.isNaN(created_at.getTime()) || cursorOf({ created_at, id }) !== cursor) {
    throw unsupported('cursor', 'not a cursor of this listing');
  }
  return { created_at, id };
}

async function positionOfFile(db: Db, workspaceId: string, parameter: string, fileId: string): Promise<Position> {
  const document = await db.document.findFirst({ where: { id: fileId, workspace_id: workspaceId }, select: { created_at: true, id: true } });
  if (!document) throw unsupported(parameter, 'names no file of this workspace');
  return document;
}

/** GET /files: the workspace's documents, oldest first, `limit` at a time. */
export async function listDocuments(db: Db, actor: Actor, input: ListDocumentsInput, shape: FileShape): Promise<DocumentPage> {
  if (input.before_id !== undefined) throw unsupported('before_id', 'platform storage lists forward only');
  if (input.order === 'desc') throw unsupported('order', 'platform storage lists oldest first (asc) only');
  const starts = [input.cursor, input.after, input.after_id].filter((v) => v !== undefined);
  if (starts.length > 1) throw unsupported('cursor', 'give one of cursor, after and after_id');
  const workspaceId = await workspaceOf(db, actor, input);
  const position =
    input.cursor !== undefined
      ? positionOfCursor(input.cursor)
      : input.after !== undefined || input.after_id !== undefined
        ? await positionOfFile(db, workspaceId, input.after !== undefined ? 'after' : 'after_id', (input.after ?? input.after_id)!)
        : null;
  const rows = await db.document.findMany({
    where: {
      workspace_id: workspaceId,
      ...(position ? { OR: [{ created_at: { gt: position.created_at } }, { created_at: position.created_at, id: { gt: position.id } }] } : {}),
    },
    orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
    take: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const hasMore = rows.length > input.limit;
  const ids = { first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: hasMore };
  const files = page.map((row) => fileRecordOf(row, shape));
  if (shape === 'compat_b') return { _shape: 'compat_b', object: 'list', data: files as Extract<File, { _shape: 'compat_b' }>[], ...ids };
  if (shape === 'compat_a') return { _shape: 'compat_a', data: files as Extract<File, { _shape: 'compat_a' }>[], ...ids };
  const last = page.at(-1);
  return { _shape: 'native', data: files as Extract<File, { _shape: 'native' }>[], cursor: hasMore && last ? cursorOf(last) : null, ...ids };
}

/** GET /files/{file_id}. */
export async function getDocument(db: Db, actor: Actor, input: DocumentInput, shape: FileShape): Promise<File> {
  return fileRecordOf(await findDocument(db, actor, input), shape);
}

/**
 * GET /files/{file_id}/content: the stored bytes, for streaming (all of them, or the range `range`
 * picks, as for container files). Every stored document is server-made, so downloadable.
 */
export async function openDocument(
  db: Db,
  media: MediaDeps,
  actor: Actor,
  input: DocumentInput,
  range: (size: number, sha256: string) => ByteRange | undefined = () => undefined,
): Promise<Download> {
  const document = await findDocument(db, actor, input);
  const wanted = range(Number(document.size_bytes), document.sha256);
  const stored = await media.storage.get(document.storage_key, wanted ? { range: wanted } : {});
  return {
    filename: document.filename,
    size: stored.size,
    sha256: document.sha256,
    ...(stored.range ? { range: stored.range } : {}),
    stream: stored.stream,
  };
}

// One statement: the row goes and its bytes leave the workspace's quota together, so two deletes of
// one document free its bytes once.
const DELETE_DOCUMENT = statement(
  `
  WITH gone AS (
    DELETE FROM documents WHERE id = $1 AND workspace_id = $2::uuid RETURNING workspace_id, size_bytes, storage_key
  ), freed AS (
    UPDATE workspaces w SET storage_used_bytes = w.storage_used_bytes - gone.size_bytes, updated_at = $3
    FROM gone WHERE w.id = gone.workspace_id
  )
  SELECT storage_key FROM gone`,
  z.object({ storage_key: z.string() }),
);

/**
 * DELETE /files/{file_id}: frees the document's share of the workspace quota at once, then deletes
 * the stored bytes. Should that delete fail, the bytes are orphaned (no row points at them, never a
 * row left without bytes), and the storage sweep (storage/sweep.ts) removes them later.
 */
export async function deleteDocument(
  db: Db,
  media: MediaDeps,
  actor: Actor,
  input: DocumentInput,
  now: Date,
  shape: FileShape,
  log: (error: unknown, storageKey: string) => void,
): Promise<DocumentDeletion> {
  const workspaceId = await workspaceOf(db, actor, input);
  const [gone] = await queryRows(db, DELETE_DOCUMENT, [input.file_id, workspaceId, now]);
  if (!gone) throw new NotFound(`file ${input.file_id}`);
  await media.storage.delete(gone.storage_key).catch((error: unknown) => log(error, gone.storage_key));
  return shape === 'compat_b'
    ? { _shape: 'compat_b', id: input.file_id, object: 'file', deleted: true }
    : { _shape: shape, id: input.file_id, type: 'file_deleted' };
}
