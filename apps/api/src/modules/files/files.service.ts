// Containers (per-session sandboxes of files) and workspace documents.
// Bytes live in the BlobStorage under server-made keys; rows point at them. Every write claims its
// key, stores the bytes (atomically) and then commits the row (releasing the claim), and removes the
// bytes again when the row cannot be committed, so no row ever points at missing bytes and the
// storage sweep never takes bytes a write is about to point at (storage/claims.ts).
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import {
  queryRows,
  statement,
  type Container as ContainerRow,
  type ContainerFile as ContainerFileRow,
  type Db,
  type Document,
  type Prisma,
} from '@switchyard/db';
import { z } from 'zod';
import type {
  Container,
  ContainerFile,
  ContainerFileList,
  ContainerFileRecord,
  GetContainerFileInput,
  ListContainerFilesInput,
  OpenContainerInput,
  PromoteFileInput,
  File,
} from '@switchyard/schema';
import { Invalid, NotFound, PayloadTooLarge, Unavailable } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { containerObjectKey, discardClaimed, documentObjectKey, putClaimed, settleClaim } from '../../storage/claims.js';
import type { MediaDeps } from '../../storage/media.js';
import type { ByteRange } from '../../storage/storage.js';
import type { Actor, PlatformActor } from '../../access/callers.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { platformOrganization, platformWorkspace } from '../../access/workspaces.js';
import { visibleRows } from '../../access/tenancy.js';
import { fileRecordOf, type Shaped } from './file-shapes.js';
import { auditedDocument } from './documents-audit.js';
import { appendAudit, auditOfTenant, created } from '../audit/audit.js';
import { containerIdOf, decodeFileId, encodeFileId } from './sandbox-ids.js';

/** Promoted documents are files the code produced for the user. */
const PROMOTED_PURPOSE = 'assistants_output';

function containerOf(row: ContainerRow): Container {
  return {
    container_id: row.container_id,
    workspace_id: row.workspace_id,
    session_key: row.session_key,
    created_at: row.created_at.toISOString(),
  } satisfies Container;
}

function containerFileOf(container: ContainerRow, row: ContainerFileRow): ContainerFile {
  return {
    container_id: container.container_id,
    file_id: encodeFileId(row.path),
    path: row.path,
    mime_type: row.mime_type,
    size_bytes: Number(row.size_bytes),
    sha256: row.sha256,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } satisfies ContainerFile;
}

/**
 * Opens the sandbox of a session in the workspace the platform names (internal, for the sandbox
 * runner): the same session key always names the same container; `restart` makes a new one with a
 * fresh "-r<nonce>" suffix.
 */
export async function openContainer(deps: Uses<'db'>, _actor: PlatformActor, input: OpenContainerInput): Promise<Container> {
  const { db } = deps;
  const workspace = await platformWorkspace(db, input.workspace_id);
  const containerId = containerIdOf(input.session_key, input.restart ?? false);
  const row = await db.container.upsert({
    where: { organization_id_container_id: { organization_id: workspace.organization_id, container_id: containerId } },
    create: {
      organization_id: workspace.organization_id,
      workspace_id: workspace.id,
      container_id: containerId,
      session_key: input.session_key,
    },
    update: {},
  });
  // Only a crafted key equal to another key's sanitised form (hash suffix included) gets here.
  if (row.session_key !== input.session_key) throw new Invalid('session key collides with another session');
  return containerOf(row);
}

async function findContainer(db: Db, visible: { organization_id: string; workspace_id?: string }, containerId: string): Promise<ContainerRow> {
  const container = await db.container.findFirst({ where: { container_id: containerId, ...visible } });
  if (!container) throw new NotFound(`container ${containerId}`);
  return container;
}

async function findContainerFile(db: Db, actor: Actor, containerId: string, fileId: string) {
  const path = decodeFileId(fileId);
  const container = await findContainer(db, visibleRows(actor), containerId);
  const file = await db.containerFile.findUnique({
    where: { container_id_path: { container_id: container.id, path } },
  });
  if (!file) throw new NotFound(`file ${path} in ${containerId}`);
  return { container, file };
}

/** A container file as existing clients read it (B11, B12): `created_at` is the last sync. */
function containerFileRecordOf(container: ContainerRow, row: Pick<ContainerFileRow, 'path' | 'size_bytes' | 'updated_at'>): ContainerFileRecord {
  return {
    id: encodeFileId(row.path),
    object: 'container.file',
    container_id: container.container_id,
    path: row.path,
    bytes: Number(row.size_bytes),
    created_at: Math.floor(row.updated_at.getTime() / 1000),
    source: 'assistant',
  } satisfies ContainerFileRecord;
}

/** GET /containers/{container_id}/files/{file_id}. */
export async function getContainerFile(deps: Uses<'db'>, actor: Actor, input: GetContainerFileInput): Promise<ContainerFileRecord> {
  const { container, file } = await findContainerFile(deps.db, actor, input.container_id, input.file_id);
  return containerFileRecordOf(container, file);
}

// Byte order of paths (COLLATE "C"), whatever the database's default collation: "lexicographic
// order of path", and `after` resumes exactly where the previous page stopped.
const CONTAINER_FILES_PAGE = statement(
  `
  SELECT path, size_bytes, updated_at FROM container_files
  WHERE container_id = $1::uuid AND ($2::text IS NULL OR path COLLATE "C" > $2::text COLLATE "C")
  ORDER BY path COLLATE "C" LIMIT $3`,
  z.object({ path: z.string(), size_bytes: z.string(), updated_at: z.date() }),
);

/**
 * GET /containers/{container_id}/files: the container's files in path order, `limit` at a time,
 * strictly after the path that `after` (a container file id) names.
 */
export async function listContainerFiles(deps: Uses<'db'>, actor: Actor, input: ListContainerFilesInput): Promise<ContainerFileList> {
  const { db } = deps;
  const after = input.after === undefined ? null : decodeFileId(input.after);
  const container = await findContainer(db, visibleRows(actor), input.container_id);
  const rows = await queryRows(db, CONTAINER_FILES_PAGE, [container.id, after, input.limit + 1]);
  const page = rows
    .slice(0, input.limit)
    .map((row) => containerFileRecordOf(container, { path: row.path, size_bytes: BigInt(row.size_bytes), updated_at: new Date(row.updated_at) }));
  return {
    object: 'list',
    data: page,
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
    has_more: rows.length > input.limit,
  };
}

export interface ContainerFileUpload {
  /** The organization the container belongs to (the platform names it). */
  organization_id: string;
  container_id: string;
  file_id: string;
  mime_type: string;
  body: Readable;
}

/**
 * Writes (or replaces) a file of a container of the organization the platform names (internal, for
 * the sandbox runner). The bytes are stored first, then the row is pointed at them; replaced bytes
 * are removed after the commit.
 */
export async function writeContainerFile(deps: Uses<'db' | 'media'>, _actor: PlatformActor, input: ContainerFileUpload): Promise<ContainerFile> {
  const { db, media } = deps;
  const path = decodeFileId(input.file_id);
  const organization = await platformOrganization(db, input.organization_id);
  const container = await findContainer(db, { organization_id: organization.id }, input.container_id);
  const storageKey = containerObjectKey(container.id);
  const stored = await putClaimed(db, media.storage, storageKey, input.body, { maxBytes: media.containerFileMaxBytes });
  let previousKey: string | undefined;
  let row: ContainerFileRow;
  try {
    ({ row, previousKey } = await db.$transaction(async (tx) => {
      const previous = await tx.containerFile.findUnique({
        where: { container_id_path: { container_id: container.id, path } },
        select: { storage_key: true },
      });
      const fields = { mime_type: input.mime_type, size_bytes: stored.size, sha256: stored.sha256, storage_key: storageKey };
      const written = await tx.containerFile.upsert({
        where: { container_id_path: { container_id: container.id, path } },
        create: { organization_id: container.organization_id, container_id: container.id, path, ...fields },
        update: fields,
      });
      await settleClaim(tx, storageKey);
      return { row: written, previousKey: previous?.storage_key };
    }));
  } catch (error) {
    await discardClaimed(db, media.storage, storageKey);
    throw error;
  }
  if (previousKey) await media.storage.delete(previousKey).catch(() => undefined);
  return containerFileOf(container, row);
}

export interface Download {
  filename: string;
  /** Size of the whole file. */
  size: number;
  /** SHA-256 hex of the whole file (its ETag). */
  sha256: string;
  /** The bytes served when a range was asked for. */
  range?: ByteRange;
  stream: Readable;
}

/** Picks the bytes to serve once a file's size and checksum are known (undefined: all of them). */
export type RangeOf = (size: number, sha256: string) => ByteRange | undefined;

/**
 * GET /containers/{container_id}/files/{file_id}/content: opens a container file's bytes for
 * streaming: all of them, or the range `input.range(size, sha256)` picks once the file's size is
 * known (no range, or undefined: all).
 */
export async function openContainerFile(
  deps: Uses<'db' | 'media'>,
  actor: Actor,
  input: { container_id: string; file_id: string; range?: RangeOf },
): Promise<Download> {
  const { file } = await findContainerFile(deps.db, actor, input.container_id, input.file_id);
  const wanted = input.range?.(Number(file.size_bytes), file.sha256);
  const stored = await deps.media.storage.get(file.storage_key, wanted ? { range: wanted } : {});
  return {
    filename: posix.basename(file.path),
    size: stored.size,
    sha256: file.sha256,
    ...(stored.range ? { range: stored.range } : {}),
    stream: stored.stream,
  };
}

async function quotaOf(db: Db, media: MediaDeps, workspaceId: string): Promise<{ used: bigint; quota: bigint }> {
  const ws = await db.workspace.findUniqueOrThrow({
    where: { id: workspaceId },
    select: { storage_used_bytes: true, storage_quota_bytes: true },
  });
  return { used: ws.storage_used_bytes, quota: ws.storage_quota_bytes ?? BigInt(media.storageQuotaBytes) };
}

/**
 * POST /containers/{container_id}/files/{file_id}/promote: copies a container file into its
 * workspace's documents, counted against the workspace's storage quota.
 *
 * Promoting the same file again, while its content is unchanged, returns the first document (and
 * counts nothing); once the sandbox runner has rewritten the file, a promotion makes a new document.
 *
 * The quota is reserved by one conditional UPDATE in the transaction that inserts the document, so
 * concurrent promotions can never overshoot it together; the bytes are copied before that
 * transaction and removed again when it does not commit.
 */
export async function promoteFile(deps: Uses<'db' | 'media' | Audited>, actor: Actor, input: PromoteFileInput & Shaped): Promise<File> {
  const { db, media } = deps;
  const { shape } = input;
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  const { container, file } = await findContainerFile(db, actor, input.container_id, input.file_id);
  // One entry per call: a promotion that finds its first document (nothing new) says so, with no fields.
  const promoted = (client: Db | Prisma.TransactionClient, document: Document, made: boolean) =>
    appendAudit(client, audit, {
      action: 'files.promote',
      targetType: 'document',
      targetId: document.id,
      changes: made ? created({ ...auditedDocument(document), container_id: container.id }) : { after: {} },
    });
  const size = file.size_bytes;
  if (size > BigInt(media.maxFileBytes)) throw new PayloadTooLarge(`file of ${size} bytes exceeds ${media.maxFileBytes}`);

  const earlier = (where: Pick<Db, 'document'>) =>
    where.document.findFirst({
      where: { source_file_id: file.id, sha256: file.sha256, workspace_id: container.workspace_id },
      orderBy: { created_at: 'asc' },
    });
  const existing = await earlier(db);
  if (existing) {
    await promoted(db, existing, false);
    return fileRecordOf(existing, shape);
  }

  // Fail fast before copying; the transaction below is what keeps the quota exact.
  const { used, quota } = await quotaOf(db, media, container.workspace_id);
  if (used + size > quota) throw new PayloadTooLarge(`workspace quota ${quota} bytes would be exceeded`);

  const documentId = newId('file');
  const storageKey = documentObjectKey(container.workspace_id, documentId);
  const source = await media.storage.get(file.storage_key);
  const copied = await putClaimed(db, media.storage, storageKey, source.stream, { maxBytes: media.maxFileBytes });
  let document: Document;
  try {
    if (copied.sha256 !== file.sha256) throw new Unavailable(`stored bytes of ${file.id} do not match their checksum`);
    document = await db.$transaction(async (tx) => {
      // Serialises promotions of this one file, so a concurrent double promotion makes one document.
      await tx.$executeRaw`SELECT 1 FROM container_files WHERE id = ${file.id}::uuid FOR UPDATE`;
      const first = await earlier(tx);
      if (first) {
        await promoted(tx, first, false);
        return first;
      }
      const reserved = await tx.$executeRaw`
        UPDATE workspaces
           SET storage_used_bytes = storage_used_bytes + ${copied.size}, updated_at = ${now}
         WHERE id = ${container.workspace_id}::uuid
           AND storage_used_bytes + ${copied.size} <= COALESCE(storage_quota_bytes, ${media.storageQuotaBytes})`;
      if (reserved !== 1) throw new PayloadTooLarge(`workspace quota would be exceeded`);
      await settleClaim(tx, storageKey);
      const document = await tx.document.create({
        data: {
          id: documentId,
          organization_id: container.organization_id,
          workspace_id: container.workspace_id,
          filename: posix.basename(file.path),
          mime_type: file.mime_type,
          size_bytes: copied.size,
          sha256: copied.sha256,
          purpose: PROMOTED_PURPOSE,
          storage_key: storageKey,
          source_file_id: file.id,
          created_at: now,
        },
      });
      await promoted(tx, document, true);
      return document;
    });
  } catch (error) {
    await discardClaimed(db, media.storage, storageKey);
    throw error;
  }
  if (document.id !== documentId) await discardClaimed(db, media.storage, storageKey);
  return fileRecordOf(document, shape);
}
