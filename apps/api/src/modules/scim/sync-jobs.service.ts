// SCIM directory synchronizations (platform-api.md D15, D16): a queued job of the job runner
// (jobs/runner.ts) that applies every group mapping of the organization again to the current
// members of its group (applyScimMappings), and reports the groups it synchronized and the mapped
// groups that no longer exist. One at a time per organization: while one is queued or running,
// asking again answers that one.
import type { Job } from '@switchyard/db';
import type { SyncJob } from '@switchyard/schema';
import type { Actor, PlatformActor } from '../../access/callers.js';
import { tenantWhere } from '../../access/tenancy.js';
import { isUuid } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { NotFound } from '../../lib/errors.js';
import { JobFailure, type JobHandler } from '../../jobs/runner.js';
import { applyScimMappings } from './directory.service.js';
import { forgetDisabledKeys } from './directory-writes.js';
import { appendAudit, auditOfTenant } from '../audit/audit.js';

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
export async function startSyncJob(deps: Uses<'db' | 'jobs' | Audited>, actor: Actor): Promise<SyncJob> {
  const { db, jobs } = deps;
  const audit = auditOfTenant(actor, deps);
  const where = tenantWhere(actor);
  const [groups, mappings] = await Promise.all([db.scimGroup.count({ where }), db.scimGroupMapping.count({ where })]);
  if (groups === 0 && mappings === 0) throw new NotFound('the organization has no SCIM directory');
  const job = await db.$transaction(async (tx) => {
    const job = await jobs.enqueue(tx, { kind: SCIM_SYNC, organizationId: actor.organizationId, singleton: `${SCIM_SYNC} ${actor.organizationId}` });
    await appendAudit(tx, audit, { action: 'scim.createSyncJob', targetType: 'scim_sync_job', targetId: job.id, changes: { after: { status: job.status } } });
    return job;
  });
  return recordOf(job);
}

/** D16: one synchronization of the organization; another organization's, or another kind of job, is 404. */
export async function getSyncJob(deps: Uses<'db'>, actor: Actor, input: { id: string }): Promise<SyncJob> {
  const { id } = input;
  const job = isUuid(id) ? await deps.db.job.findFirst({ where: { ...tenantWhere(actor), id, kind: SCIM_SYNC } }) : null;
  if (!job) throw new NotFound('no sync job with that id in the organization');
  return recordOf(job);
}

/**
 * The job's handler (server.ts registers it, with SERVER_ACTOR: no key started the job): every
 * mapping of the job's organization applied again; keys it disabled are forgotten by this process
 * at once (others hear of it).
 */
export function scimSyncHandler(deps: Uses<'db' | 'keys' | 'now'>, actor: PlatformActor): JobHandler {
  return async (job) => {
    if (!job.organization_id) throw new JobFailure('a sync job names no organization');
    const { synced_groups, deleted_groups, ...effects } = await applyScimMappings(deps, actor, { organizationId: job.organization_id });
    forgetDisabledKeys(deps.keys, effects);
    return { synced_groups, deleted_groups };
  };
}
