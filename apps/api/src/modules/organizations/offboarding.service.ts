// Offboarding (docs/operations.md#offboarding): the platform deletes an
// organization with everything it owns. The organization is disabled at once (every key refused),
// then a queued job of the job runner removes, in this order:
//   1. its stored bytes (container files and documents) from the configured store;
//   2. its generations and their content, in batches (the largest tables, without foreign keys);
//   3. in one transaction: a tombstone (ids, totals and dates: what billing keeps), the
//      organization row (every other table it owns goes with it: ON DELETE CASCADE), and the people
//      who belonged to no other organization.
// Every step can run again: a job whose server died is taken again when its lease ends, and
// resumes. Its progress is on the job row (organizations.deletion). The organization's audit entries
// are deleted with it; the platform's entry of the deletion (organization_id null) stays.
import type { Job } from '@switchyard/db';
import { Prisma, queryRows, statement } from '@switchyard/db';
import type { DeleteOrganizationInput, OrganizationDeletion } from '@switchyard/schema';
import { z } from 'zod';
import type { PlatformActor } from '../../access/callers.js';
import { tenantData, tenantWhere, type Tenant } from '../../access/tenancy.js';
import { isUuid } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfPlatform } from '../audit/audit.js';
import { Invalid, NotFound } from '../../lib/errors.js';
import { JobFailure, type JobHandler } from '../../jobs/runner.js';
import { batchDeleteStatement, deleteInBatches, deleteStoredObjects, storedKeysStatement } from './batch-deletion.js';

export const ORGANIZATION_DELETE = 'organization.delete';

export type Progress = NonNullable<OrganizationDeletion['progress']>;

const PayloadSchema = z.object({ organization_id: z.string(), requested_by: z.string() });

function recordOf(job: Job): OrganizationDeletion {
  const { organization_id } = PayloadSchema.parse(job.payload);
  return {
    id: job.id,
    organization_id,
    status: job.status as OrganizationDeletion['status'],
    progress: (job.progress as Progress | null) ?? null,
    created_at: job.created_at.toISOString(),
    started_at: job.started_at?.toISOString() ?? null,
    finished_at: job.finished_at?.toISOString() ?? null,
    error_message: job.status === 'failed' ? job.error_message : null,
  };
}

/**
 * Disables the organization and queues its deletion (or answers the one queued or running). The
 * job belongs to no organization (organization_id null): it outlives the rows it deletes.
 */
export async function startOrganizationDeletion(
  deps: Uses<'db' | 'jobs' | 'keys' | Audited>,
  actor: PlatformActor,
  input: DeleteOrganizationInput,
): Promise<OrganizationDeletion> {
  const { db, jobs } = deps;
  const audit = auditOfPlatform(actor, deps);
  const now = audit.at;
  if (input.confirm !== input.organization_id) throw new Invalid('confirm must repeat the organization id');
  const organizationId = input.organization_id;
  if (!(await db.organization.findUnique({ where: { id: organizationId }, select: { id: true } }))) throw new NotFound(`organization ${organizationId}`);
  const job = await db.$transaction(async (tx) => {
    await tx.organization.updateMany({ where: { id: organizationId, disabled_at: null }, data: { disabled_at: now } });
    const job = await jobs.enqueue(tx, {
      kind: ORGANIZATION_DELETE,
      organizationId: null,
      payload: { ...tenantData({ organizationId }), requested_by: actor.keyId },
      singleton: `${ORGANIZATION_DELETE} ${organizationId}`,
    });
    // The platform's record of it names no organization: it outlives the organization's own entries.
    await appendAudit(tx, audit, {
      action: 'organizations.delete',
      targetType: 'organization',
      targetId: organizationId,
      organizationId: null,
      changes: { before: {}, after: { deletion_id: job.id } },
    });
    return job;
  });
  deps.keys.forgetOrganization(organizationId);
  return recordOf(job);
}

/** A deletion job by id; any other job is 404. */
export async function getOrganizationDeletion(deps: Uses<'db'>, _actor: PlatformActor, input: { id: string }): Promise<OrganizationDeletion> {
  const { id } = input;
  const job = isUuid(id) ? await deps.db.job.findFirst({ where: { id, kind: ORGANIZATION_DELETE } }) : null;
  if (!job) throw new NotFound('no organization deletion with that id');
  return recordOf(job);
}

const STORED_KEYS = storedKeysStatement(
  (t) => `SELECT storage_key AS key FROM container_files WHERE ${t.where()}
   UNION ALL SELECT storage_key FROM documents WHERE ${t.where()}`,
);

/** A batch of the organization's rows of a table. */
const DELETE_CONTENTS = batchDeleteStatement('generation_contents', (t) => t.where());
const DELETE_GENERATIONS = batchDeleteStatement('generations', (t) => t.where());

const SET_PROGRESS = statement('UPDATE jobs SET progress = $2::jsonb WHERE id = $1::uuid');

/**
 * The job's handler: the three steps, each safe to run again. The job runner runs it for no key:
 * its actor is SERVER_ACTOR (the platform key that asked is the job's `requested_by`).
 */
export function organizationDeletionHandler(deps: Uses<'db' | 'media' | 'now'>, _actor: PlatformActor): JobHandler {
  const { db } = deps;
  const { storage } = deps.media;
  return async (job) => {
    const parsed = PayloadSchema.safeParse(job.payload);
    if (!parsed.success) throw new JobFailure('a deletion job names no organization');
    const { organization_id: organizationId, requested_by } = parsed.data;
    const tenant: Tenant = { organizationId };
    const progress: Progress = { step: 'stored bytes', deleted_objects: 0, deleted_generations: 0, ...(job.progress as Partial<Progress> | null) };
    const report = (step: Progress['step']) => queryRows(db, SET_PROGRESS, [job.id, JSON.stringify({ ...progress, step })]);

    // 1. Stored bytes: removed before the rows that point at them (the storage sweep would remove
    // them after, but only for the namespaces it knows and only after its hour).
    await report('stored bytes');
    await deleteStoredObjects(db, storage, STORED_KEYS, tenant, {}, () => progress.deleted_objects++);

    // 2. Generations and their content, a batch per statement.
    await report('generations');
    await deleteInBatches(db, DELETE_CONTENTS, tenant, {});
    await deleteInBatches(db, DELETE_GENERATIONS, tenant, {}, (n) => {
      progress.deleted_generations += n;
      return report('generations');
    });

    // 3. The tombstone, the organization (its rows cascade) and the people it alone had.
    await report('rows');
    await db.$transaction(async (tx) => {
      const organization = await tx.organization.findUnique({ where: { id: organizationId } });
      if (!organization) return; // a run before this one finished the step
      await tx.organizationTombstone.upsert({
        where: tenantWhere(tenant),
        create: {
          ...tenantData(tenant),
          created_at: organization.created_at,
          deleted_at: deps.now(),
          total_credits: organization.total_credits,
          total_usage: organization.total_usage,
          credit_balance: organization.credit_balance,
          deleted_by: requested_by,
        },
        update: {},
      });
      // Its audit entries go too (the one escape from the log's append-only trigger besides its
      // retention sweep); the platform's entry of this deletion names no organization and stays.
      await tx.$executeRaw`SELECT set_config('switchyard.audit_retention', 'on', true)`;
      await tx.auditLog.deleteMany({ where: tenantWhere(tenant) });
      const people = await tx.organizationMember.findMany({ where: tenantWhere(tenant), select: { user_id: true } });
      await tx.organization.delete({ where: { id: organizationId } });
      const ids = people.map((p) => p.user_id);
      if (ids.length > 0) {
        await tx.$executeRaw`DELETE FROM users u WHERE u.id = ANY(${ids}::text[])
          AND NOT EXISTS (SELECT 1 FROM organization_members m WHERE m.user_id = u.id)`;
      }
    });
    await report('done');
    return { ...tenantData(tenant), deleted_objects: progress.deleted_objects, deleted_generations: progress.deleted_generations };
  };
}

/** The fields a tombstone keeps (docs/operations.md#offboarding): for its test. */
export const TOMBSTONE_FIELDS = Object.keys(Prisma.OrganizationTombstoneScalarFieldEnum);
