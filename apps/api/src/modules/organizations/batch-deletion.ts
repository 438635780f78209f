// What the deletion jobs share (an organization's, offboarding.service.ts; a workspace's,
// workspaces/workspace-deletion.service.ts; docs/operations.md#offboarding): removing stored bytes
// before the rows that name them, and removing rows a batch per statement, each statement its own
// short transaction, until none is left. Every step is safe to run again: a job taken again after
// its server died carries on from what is left.
import { type Db, queryRows } from '@switchyard/db';
import { z } from 'zod';
import { tenantStatement, tenantValues, type Tenant, type TenantClauses, type TenantStatement } from '../../access/tenancy.js';
import type { BlobStorage } from '../../storage/storage.js';

/** Rows removed per statement. */
export const DELETION_BATCH = 5000;

const COUNT = z.object({ n: z.number() });
const KEY = z.object({ key: z.string() });

/**
 * A statement deleting at most :batch_size of the organization's rows of `table` that `where`
 * selects (the tenant's clause, and whatever narrows it, with parameters of its own); it answers how
 * many went.
 */
export function batchDeleteStatement(table: string, where: (t: TenantClauses) => string): TenantStatement<typeof COUNT, 'organization'> {
  return tenantStatement(
    'organization',
    (t) => `WITH gone AS (
       DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE ${where(t)} LIMIT :batch_size)) RETURNING 1
     ) SELECT count(*)::int AS n FROM gone`,
    COUNT,
  );
}

/** A statement answering the storage keys (column `key`) of the stored objects the rows it selects name. */
export function storedKeysStatement(text: (t: TenantClauses) => string): TenantStatement<typeof KEY, 'organization'> {
  return tenantStatement('organization', text, KEY);
}

/**
 * Runs a batch-delete statement (its own values by name; the batch size is added) until it deletes
 * nothing; `onBatch` hears each batch's count (progress). Answers how many rows went.
 */
export async function deleteInBatches(
  db: Db,
  stmt: TenantStatement<typeof COUNT, 'organization'>,
  tenant: Tenant,
  values: Readonly<Record<string, unknown>>,
  onBatch?: (n: number) => Promise<unknown>,
  batch = DELETION_BATCH,
): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await queryRows(db, stmt, tenantValues(stmt, tenant, { ...values, batch_size: batch }));
    const n = row?.n ?? 0;
    if (n === 0) return total;
    total += n;
    await onBatch?.(n);
  }
}

/** Removes every stored object the statement names from the store (one already gone is no error); `onDeleted` hears each. */
export async function deleteStoredObjects(
  db: Db,
  storage: BlobStorage,
  stmt: TenantStatement<typeof KEY, 'organization'>,
  tenant: Tenant,
  values: Readonly<Record<string, unknown>>,
  onDeleted?: () => void,
): Promise<void> {
  for (const { key } of await queryRows(db, stmt, tenantValues(stmt, tenant, values))) {
    await storage.delete(key);
    onDeleted?.();
  }
}
