// Workspace documents (admin-api.md B7-B10, platform-api.md D9): upload, list, read, download and
// delete the files promote made and the ones clients upload. Every operation acts in one workspace: the one the caller names (UUID or slug), or its key's
// own; a regular key may name only its own (403). Answers take the File shape of the request
// (file-shapes.ts). Only the platform's own storage is served: `provider` (a tenant's provider
// credential) is refused with 400, as are the listing features that storage does not have.
import { namedStatement, queryRows, type Db, type Document } from '@switchyard/db';
import { z } from 'zod';
import type { DocumentDeletion, DocumentInput, DocumentPage, File, ListDocumentsInput, UploadDocumentQuery } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { tenantData } from '../../access/tenancy.js';
import { assertWorkspaceAccess, resolveWorkspaceOrOwn } from '../../access/workspaces.js';
import { Invalid, NotFound, PayloadTooLarge } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { discardClaimed, documentObjectKey, putClaimed, settleClaim } from '../../storage/claims.js';
import { ContentSniffer } from './content-type.js';
import { fileRecordOf, type Shaped } from './file-shapes.js';
import type { Download, RangeOf } from './files.service.js';
import { appendAudit, auditInsertSql, auditOfTenant, auditValues, created } from '../audit/audit.js';
import { auditedDocument } from './documents-audit.js';

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

/** GET /files: the workspace's documents, oldest first, `limit` at a time, in the request's File shape. */
export async function listDocuments(deps: Uses<'db'>, actor: Actor, input: ListDocumentsInput & Shaped): Promise<DocumentPage> {
  const { db } = deps;
  const { shape } = input;
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

/** GET /files/{file_id}, in the request's File shape. */
export async function getDocument(deps: Uses<'db'>, actor: Actor, input: DocumentInput & Shaped): Promise<File> {
  return fileRecordOf(await findDocument(deps.db, actor, input), input.shape);
}

/**
 * GET /files/{file_id}/content: the stored bytes, for streaming (all of them, or the range
 * `input.range` picks, as for container files). Only the documents the server made (promote) are
 * downloadable; an uploaded one is refused (400), as admin-api.md B9 says.
 */
export async function openDocument(deps: Uses<'db' | 'media'>, actor: Actor, input: DocumentInput & { range?: RangeOf }): Promise<Download> {
  const document = await findDocument(deps.db, actor, input);
  if (!document.downloadable) throw unsupported('file_id', 'uploaded files are not downloadable (only documents the server made are)');
  const wanted = input.range?.(Number(document.size_bytes), document.sha256);
  const stored = await deps.media.storage.get(document.storage_key, wanted ? { range: wanted } : {});
  return {
    filename: document.filename,
    size: stored.size,
    sha256: document.sha256,
    ...(stored.range ? { range: stored.range } : {}),
    stream: stored.stream,
  };
}

// One statement: the row goes, its bytes leave the workspace's quota and its audit entry is written
// together, so two deletes of one document free its bytes once (and make one entry).
const DELETE_DOCUMENT = namedStatement(
  `
  WITH gone AS (
    DELETE FROM documents WHERE id = :document_id AND workspace_id = :workspace_id::uuid
    RETURNING id, organization_id, workspace_id, filename, mime_type, size_bytes, storage_key
  ), freed AS (
    UPDATE workspaces w SET storage_used_bytes = w.storage_used_bytes - gone.size_bytes, updated_at = :now
    FROM gone WHERE w.id = gone.workspace_id
  ), audited AS (
  ${auditInsertSql('gone', {
    organization: 'gone.organization_id',
    targetType: `'document'`,
    targetId: 'gone.id',
    changes: `jsonb_build_object('before', jsonb_build_object('filename', gone.filename, 'mime_type', gone.mime_type,
      'size_bytes', gone.size_bytes, 'workspace_id', gone.workspace_id))`,
  })}
  )
  SELECT storage_key FROM gone`,
  z.object({ storage_key: z.string() }),
);

/**
 * DELETE /files/{file_id}: frees the document's share of the workspace quota at once, then deletes
 * the stored bytes. Should that delete fail, the bytes are orphaned (no row points at them, never a
 * row left without bytes), and the storage sweep (storage/sweep.ts) removes them later; the failure
 * is logged (a warning).
 */
export async function deleteDocument(deps: Uses<'db' | 'media' | 'logger' | Audited>, actor: Actor, input: DocumentInput & Shaped): Promise<DocumentDeletion> {
  const { db, media } = deps;
  const audit = auditOfTenant(actor, deps);
  const workspaceId = await workspaceOf(db, actor, input);
  const [gone] = await queryRows(db, DELETE_DOCUMENT, {
    document_id: input.file_id,
    workspace_id: workspaceId,
    now: audit.at,
    ...auditValues(audit, 'files.deleteDocument'),
  });
  if (!gone) throw new NotFound(`file ${input.file_id}`);
  await media.storage
    .delete(gone.storage_key)
    .catch((err: unknown) => deps.logger.warn({ err, storage_key: gone.storage_key }, 'deleted document: its bytes could not be removed'));
  const { shape } = input;
  return shape === 'compat_b'
    ? { _shape: 'compat_b', id: input.file_id, object: 'file', deleted: true }
    : { _shape: shape, id: input.file_id, type: 'file_deleted' };
}

// ---- Upload (D9) ---------------------------------------------------------------------------------

/** Uploaded documents are the user's own data (compat_b's `purpose`). */
const UPLOADED_PURPOSE = 'user_data';

/** Where an upload goes, decided before a byte of it is read. */
export interface UploadTarget {
  /** The caller's organization (the document's tenant). */
  organizationId: string;
  workspaceId: string;
  /** The most bytes it may have: the size bound, or what is left of the quota if that is less. */
  maxBytes: number;
}

/**
 * POST /files, before the body is read: the workspace (as for B7-B10: provider refused, the
 * caller's access), and how many bytes the upload may have. 413 at once when the quota is used up.
 */
export async function uploadTarget(deps: Uses<'db' | 'media'>, actor: Actor, input: UploadDocumentQuery): Promise<UploadTarget> {
  const { db, media } = deps;
  const workspaceId = await workspaceOf(db, actor, input);
  const workspace = await db.workspace.findUniqueOrThrow({
    where: { id: workspaceId },
    select: { storage_used_bytes: true, storage_quota_bytes: true },
  });
  const quota = workspace.storage_quota_bytes ?? BigInt(media.storageQuotaBytes);
  const left = quota - workspace.storage_used_bytes;
  if (left <= 0n) throw new PayloadTooLarge(`workspace quota ${quota} bytes is used up`);
  return {
    organizationId: actor.organizationId,
    workspaceId,
    maxBytes: left < BigInt(media.maxFileBytes) ? Number(left) : media.maxFileBytes,
  };
}

export interface DocumentUpload {
  /** The part's filename (already checked: a plain name). */
  filename: string;
  /** The part's bytes. */
  body: AsyncIterable<Uint8Array>;
  /**
   * Settles once the whole request body is read: rejects when the form turns out to be malformed
   * (a second part after the file, say) or the client goes away. Nothing is committed before.
   */
  complete: Promise<void>;
}

/**
 * POST /files: streams the part's bytes into the store (claimed, so the sweep leaves them alone,
 * and atomic, so nothing half-written is ever visible under the key) while their type is told from
 * them, then commits the document and its share of the quota in one transaction. The quota is
 * reserved by a conditional UPDATE there, so concurrent uploads never overshoot it together. Any
 * failure (a refused type, an empty file, a size or quota overrun, a malformed form, the client
 * leaving) leaves no row, no claim and no bytes; a crash leaves at most a claim and bytes (or a temp
 * upload) that the storage sweep removes. `target`: uploadTarget's answer for the same actor.
 */
export async function uploadDocument(
  deps: Uses<'db' | 'media' | Audited>,
  actor: Actor,
  input: { target: UploadTarget; upload: DocumentUpload } & Shaped,
): Promise<File> {
  const { db, media } = deps;
  const { target, upload, shape } = input;
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  const documentId = newId('file');
  const storageKey = documentObjectKey(target.workspaceId, documentId);
  const sniffer = new ContentSniffer();
  const stored = await putClaimed(db, media.storage, storageKey, sniffer.wrap(upload.body), { maxBytes: target.maxBytes });
  let document: Document;
  try {
    await upload.complete;
    document = await db.$transaction(async (tx) => {
      const reserved = await tx.$executeRaw`
        UPDATE workspaces
           SET storage_used_bytes = storage_used_bytes + ${stored.size}, updated_at = ${now}
         WHERE id = ${target.workspaceId}::uuid
           AND storage_used_bytes + ${stored.size} <= COALESCE(storage_quota_bytes, ${media.storageQuotaBytes})`;
      if (reserved !== 1) throw new PayloadTooLarge('workspace quota would be exceeded');
      await settleClaim(tx, storageKey);
      const document = await tx.document.create({
        data: {
          id: documentId,
          ...tenantData(target),
          workspace_id: target.workspaceId,
          filename: upload.filename,
          mime_type: sniffer.type,
          size_bytes: stored.size,
          sha256: stored.sha256,
          purpose: UPLOADED_PURPOSE,
          storage_key: storageKey,
          downloadable: false,
          created_at: now,
        },
      });
      await appendAudit(tx, audit, { action: 'files.upload', targetType: 'document', targetId: document.id, changes: created(auditedDocument(document)) });
      return document;
    });
  } catch (error) {
    await discardClaimed(db, media.storage, storageKey);
    throw error;
  }
  return fileRecordOf(document, shape);
}
