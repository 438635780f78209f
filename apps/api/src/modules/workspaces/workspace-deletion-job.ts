// The job that deletes a workspace's data (workspace-deletion.service.ts runs it): its kind, its
// payload, and its queueing in the transaction that marks the workspace deleted (DELETE
// /workspaces/{id}, workspaces.service.ts).
import type { Job, Prisma } from '@switchyard/db';
import { z } from 'zod';
import { tenantData, type Tenant } from '../../access/tenancy.js';
import type { JobRunner } from '../../jobs/runner.js';

export const WORKSPACE_DELETE = 'workspace.delete';

/** The job's payload: the workspace and its organization. */
export const WorkspaceDeletionPayloadSchema = z.object({ organization_id: z.string(), workspace_id: z.uuid() });

/** Queues the deletion of a workspace's data, in `tx` (the transaction that marks it deleted). */
export function enqueueWorkspaceDeletion(tx: Prisma.TransactionClient, jobs: JobRunner, tenant: Tenant, workspaceId: string): Promise<Job> {
  return jobs.enqueue(tx, {
    kind: WORKSPACE_DELETE,
    organizationId: tenant.organizationId,
    payload: { ...tenantData(tenant), workspace_id: workspaceId },
    singleton: `${WORKSPACE_DELETE} ${workspaceId}`,
  });
}
