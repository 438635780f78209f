// A workspace's data goes with it (docs/operations.md#offboarding). DELETE
// /workspaces/{id} marks the workspace deleted at once (workspaces.service.ts: its keys refused, its
// budgets, guardrails and memberships gone) and, in the same transaction, queues a job of the job
// runner (`workspace.delete`, one per workspace: workspace-deletion-job.ts) that removes, in this order:
//   1. its stored bytes (its containers' files and its documents) from the configured store;
//   2. its generations (their content and feedback with them), in batches;
//   3. its rows in the tables that name it without a foreign key to it (rollups, reservations,
//      events, authorization codes), in batches;
//   4. the workspace row, with every row that hangs on it (ON DELETE CASCADE: keys, budgets,
//      destinations, BYOK credentials, presets, containers, documents, videos, SCIM mappings).
// The organization's money stays: its credit balance and lifetime totals already hold the
// workspace's spend. Every step can run again: a job whose server died is taken again when its
// lease ends, and carries on with what is left. Its progress is on the job row. The job belongs to
// the organization (a later offboarding removes it with the rest).
import { queryRows, statement } from '@switchyard/db';
import type { PlatformActor } from '../../access/callers.js';
import { tenantData, tenantWhere, type Tenant } from '../../access/tenancy.js';
import type { Uses } from '../../trpc/service-deps.js';
import { JobFailure, type JobHandler } from '../../jobs/runner.js';
import { batchDeleteStatement, deleteInBatches, deleteStoredObjects, storedKeysStatement } from '../organizations/batch-deletion.js';
import type { Progress } from '../organizations/offboarding.service.js';
import { WorkspaceDeletionPayloadSchema } from './workspace-deletion-job.js';

/** Its stored objects (of :workspace_id): its containers' files and its documents. */
const STORED_KEYS = storedKeysStatement(
  (t) => `SELECT f.storage_key AS key FROM container_files f JOIN containers c ON c.id = f.container_id
    WHERE ${t.where('f')} AND c.workspace_id = :workspace_id::uuid
   UNION ALL SELECT storage_key FROM documents WHERE ${t.where()} AND workspace_id = :workspace_id::uuid`,
);

/** A batch of its generations (of :workspace_id), found through its keys' index (generations go with their key). */
const DELETE_GENERATIONS = batchDeleteStatement(
  'generations',
  (t) =>
    `${t.where()} AND workspace_id = :workspace_id::uuid AND api_key_id IN (SELECT k.id FROM api_keys k WHERE ${t.where('k')} AND k.workspace_id = :workspace_id::uuid)`,
);

/**
 * The tables with a workspace_id and no foreign key to the workspace (their rows would outlive
 * its row): a batch of its rows (of :workspace_id) of each. Every other table with a workspace_id
 * goes with the workspace row (the test derives the list from the schema).
 */
const UNLINKED_TABLES = ['analytics_hourly', 'analytics_daily', 'activity_daily', 'spend_reservations', 'events', 'authorization_codes'] as const;
const DELETE_UNLINKED = UNLINKED_TABLES.map((table) => batchDeleteStatement(table, (t) => `${t.where()} AND workspace_id = :workspace_id::uuid`));

const SET_PROGRESS = statement('UPDATE jobs SET progress = $2::jsonb WHERE id = $1::uuid');

/**
 * The job's handler: the four steps, each safe to run again. The server runs it (SERVER_ACTOR, wired
 * in server.ts), for the organization its job names; the stored bytes go from `deps.media.storage`.
 */
export function workspaceDeletionHandler(deps: Uses<'db' | 'media'>, _actor: PlatformActor): JobHandler {
  const { db } = deps;
  const { storage } = deps.media;
  return async (job) => {
    const parsed = WorkspaceDeletionPayloadSchema.safeParse(job.payload);
    if (!parsed.success) throw new JobFailure('a workspace deletion job names no workspace');
    const { organization_id: organizationId, workspace_id: workspaceId } = parsed.data;
    const tenant: Tenant = { organizationId };
    const progress: Progress = { step: 'stored bytes', deleted_objects: 0, deleted_generations: 0, ...(job.progress as Partial<Progress> | null) };
    const report = (step: Progress['step']) => queryRows(db, SET_PROGRESS, [job.id, JSON.stringify({ ...progress, step })]);

    // Only a workspace marked deleted (by DELETE /workspaces) is emptied.
    const workspace = await db.workspace.findFirst({ where: { ...tenantWhere(tenant), id: workspaceId }, select: { deleted_at: true } });
    if (workspace && workspace.deleted_at === null) throw new JobFailure('the workspace is not deleted');

    // 1. Stored bytes, before the rows that name them.
    await report('stored bytes');
    await deleteStoredObjects(db, storage, STORED_KEYS, tenant, { workspace_id: workspaceId }, () => progress.deleted_objects++);

    // 2. Generations (their content and feedback cascade), a batch per statement.
    await report('generations');
    await deleteInBatches(db, DELETE_GENERATIONS, tenant, { workspace_id: workspaceId }, (n) => {
      progress.deleted_generations += n;
      return report('generations');
    });

    // 3. The rows that name it without a foreign key, then 4. the workspace row (the rest cascades).
    await report('rows');
    for (const stmt of DELETE_UNLINKED) await deleteInBatches(db, stmt, tenant, { workspace_id: workspaceId });
    await db.workspace.deleteMany({ where: { ...tenantWhere(tenant), id: workspaceId, deleted_at: { not: null } } });
    await report('done');
    return { ...tenantData(tenant), workspace_id: workspaceId, deleted_objects: progress.deleted_objects, deleted_generations: progress.deleted_generations };
  };
}
