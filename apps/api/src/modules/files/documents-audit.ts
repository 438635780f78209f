// What the audit log says of a document (files.upload, files.promote): its entry's fields.
import type { Document } from '@switchyard/db';

/** An entry's view of a document: what it is and where, never its bytes or storage key. */
export function auditedDocument(document: Document): Record<string, unknown> {
  return {
    workspace_id: document.workspace_id,
    filename: document.filename,
    mime_type: document.mime_type,
    size_bytes: Number(document.size_bytes),
    sha256: document.sha256,
    purpose: document.purpose,
    ...(document.source_file_id ? { source_file_id: document.source_file_id } : {}),
  };
}
