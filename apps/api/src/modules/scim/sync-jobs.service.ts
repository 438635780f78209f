// SCIM directory synchronizations (platform-api.md D15, D16): a queued job of the job runner
// (jobs/runner.ts) that applies every group mapping of the organization again to the current
// members of its group (applyScimMappings), and reports the groups it synchronized and the mapped
// groups that no longer exist. One at a time per organization: while one is queued or running,
// asking again answers that one.
import type { Db, Job } from '@switchyard/db';
import type { SyncJob } from '@switchyard/schema';
import type { KeyCache } from '../../access/callers.js';
import { tenantWhere, type Tenant } from '../../access/tenancy.js';
import { isUuid } from '../../access/workspaces.js';
import { NotFound } from '../../errors.js';
import { JobFailure, type JobHandler, type JobRunner } from '../../jobs/runner.js';
import { applyScimMappings } from './directory.service.js';
import { appendAudit, type Audit } from '../audit/audit.js';

export const SCIM_SYNC = 'scim.sync';

function recordOf(job: Job): SyncJob {
  const result = job.status === 'succeeded' ? (job.result as { synced_groups?: number; deleted_groups?: number } | null) : null;
  return {
    id: job.id,
    status: job.status,
    created_at: job.created_at.toISOString(),
    started_at: job.started_at?.toISOString() ?? null,
    finished_at: job.finished_at?.toISOString() ?? null,
    synced_groups: result?.synced_groups ?? null,
    deleted_groups: result?.deleted_groups ?? null,
    error_message: job.status === 'failed' ? job.error_message : null,
  };
}

/**
 * D15: queues a synchronization (or answers the one queued or running); 404 without a SCIM
 * directory. The job and its audit entry commit together (a call that found one queued or running
 * has its entry too, naming that one).
 */
export async function startSyncJob(db: Db, jobs: JobRunner, tenant: Tenant, audit: Audit): Promise<SyncJob> {
  const where = tenantWhere(tenant);
  const [groups, mappings] = await Promise.all([db.scimGroup.count({ where }), db.scimGroupMapping.count({ where })]);
  if (groups === 0 && mappings === 0) throw new NotFound('the organization has no SCIM directory');
  const job = await db.$transaction(async (tx) => {
    const job = await jobs.enqueue(tx, { kind: SCIM_SYNC, organizationId: tenant.organizationId, singleton: `${SCIM_SYNC} ${tenant.organizationId}` });
    await appendAudit(tx, audit, { action: 'scim.createSyncJob', targetType: 'scim_sync_job', targetId: job.id, changes: { after: { status: job.status } } });
    return job;
  });
  return recordOf(job);
}

/** D16: one synchronization of the organization; another organization's, or another kind of job, is 404. */
export async function getSyncJob(db: Db, tenant: Tenant, id: string): Promise<SyncJob> {
  const job = isUuid(id) ? await db.job.findFirst({ where: { ...tenantWhere(tenant), id, kind: SCIM_SYNC } }) : null;
  if (!job) throw new NotFound('no sync job with that id in the organization');
  return recordOf(job);
}

/** The job: every mapping applied again; keys it disabled are forgotten by this process at once (others hear of it). */
export function scimSyncHandler(db: Db, keys: KeyCache, now: () => Date): JobHandler {
  return async (job) => {
    if (!job.organization_id) throw new JobFailure('a sync job names no organization');
    const { synced_groups, deleted_groups, disabledKeyHashes } = await applyScimMappings(db, { organizationId: job.organization_id }, now());
    for (const hash of disabledKeyHashes) keys.forget(hash);
    return { synced_groups, deleted_groups };
  };
}
