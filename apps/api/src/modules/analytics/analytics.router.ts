import { AnalyticsMetaOutputSchema, AnalyticsQueryInputSchema, AnalyticsQueryOutputSchema } from '@switchyard/schema';
import { z } from 'zod';
import { managementProcedure, router } from '../../trpc/init.js';
import { ANALYTICS_META } from './analytics-catalog.js';
import { queryAnalytics } from './analytics.service.js';

export const analyticsRouter = router({
  meta: managementProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/analytics/meta',
        protect: true,
        tags: ['Analytics'],
        summary: 'Analytics metadata',
        description:
          'Returns the metrics, dimensions, filter operators and granularities available to the analytics query endpoint. Management key required.',
      },
    })
    .input(z.void())
    .output(AnalyticsMetaOutputSchema)
    .query(() => ({ data: ANALYTICS_META })),

  query: managementProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/analytics/query',
        protect: true,
        tags: ['Analytics'],
        summary: 'Query analytics',
        description:
          "Runs one query over the organization's generations: metrics, optionally grouped by dimensions and by UTC time buckets, filtered, ordered and bounded. The names it accepts are exactly those GET /analytics/meta lists. Management key required.",
      },
    })
    .input(AnalyticsQueryInputSchema)
    .output(AnalyticsQueryOutputSchema)
    .mutation(({ ctx, input }) => queryAnalytics(ctx.db, ctx.actor, input, ctx.now())),
});
