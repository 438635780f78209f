// The audit log's reads (docs/audit.md).
import { AuditLogPageSchema, ListAuditLogsInputSchema, PlatformListAuditLogsInputSchema } from '@switchyard/schema';
import { managementProcedure, platformProcedure, router } from '../../trpc/init.js';
import { answers, WHY } from '@switchyard/schema';
import { listAllAuditLogs, listAuditLogs } from './audit.service.js';

export const auditRouter = router({
  list: managementProcedure
    .meta({
      scope: 'audit:read',
      openapi: {
        method: 'GET',
        path: '/audit-logs',
        protect: true,
        tags: ['Audit Logs'],
        summary: 'List audit log entries',
        description:
          "The organization's own audit log: one entry per change, newest first, filtered by actor (a key's hash), action, target and time range; cursor-paged. Management key with audit:read required.",
      },
      statuses: answers({
        400: `actor not a 64-hex key hash; action not <resource>.<verb>; target_id without target_type; since or until not ISO 8601; limit not 1..100; cursor not one of this listing; ${WHY.unstorable}`,
        403: WHY.managementOnly,
      }),
      // Not in the spec (this API's addition): it lists what it answers.
      listed: [400, 401, 403, 500],
    })
    .input(ListAuditLogsInputSchema)
    .output(AuditLogPageSchema)
    .query(({ ctx, input }) => listAuditLogs(ctx.deps, ctx.actor, input)),
  /** Every organization's entries, or one's (tRPC only; platform keys). */
  platformList: platformProcedure
    .input(PlatformListAuditLogsInputSchema)
    .output(AuditLogPageSchema)
    .query(({ ctx, input }) => listAllAuditLogs(ctx.deps, ctx.platform, input)),
});
