import { AnalyticsMetaOutputSchema, AnalyticsQueryInputSchema, AnalyticsQueryOutputSchema } from '@switchyard/schema';
import { managementProcedure, router } from '../../trpc/init.js';
import { ANALYTICS_META } from './analytics-catalog.js';
import { queryAnalytics } from './analytics.service.js';
import { answers, WHY } from '@switchyard/schema';

export const analyticsRouter = router({
  meta: managementProcedure
    .meta({
      scope: 'analytics:read',
      openapi: {
        method: 'GET',
        path: '/analytics/meta',
        protect: true,
        tags: ['Analytics'],
        summary: 'Analytics metadata',
        description: 'Returns the metrics, dimensions, filter operators and granularities available to the analytics query endpoint. Management key required.',
      },
      statuses: answers({ 403: WHY.managementOnly }),
      listed: [401, 403, 500],
    })
    .output(AnalyticsMetaOutputSchema)
    .query(() => ({ data: ANALYTICS_META })),

  query: managementProcedure
    .meta({
      scope: 'analytics:read',
      openapi: {
        method: 'POST',
        path: '/analytics/query',
        protect: true,
        tags: ['Analytics'],
        summary: 'Query analytics',
        description:
          "Runs one query over the organization's generations: metrics, optionally grouped by dimensions and by UTC time buckets, filtered, ordered and bounded. The names it accepts are exactly those GET /analytics/meta lists. Management key required.",
      },
      statuses: answers({
        400: `a metric, dimension, granularity or operator that GET /analytics/meta does not list (named in the message); a filter value of the wrong type; order_by not requested; limit or group_limit out of range; a time range beyond its bounds; ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        408: 'the query ran past ANALYTICS_QUERY_TIMEOUT_MS (default 10 s), or waited that long for its turn (ANALYTICS_CONCURRENCY); nothing is kept of it',
      }),
      listed: [400, 401, 403, 408, 500],
    })
    .input(AnalyticsQueryInputSchema)
    .output(AnalyticsQueryOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await queryAnalytics(ctx.deps, ctx.actor, input) })),
});
