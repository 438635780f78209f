import { AnalyticsMetaOutputSchema } from '@switchyard/schema';
import { z } from 'zod';
import { managementProcedure, router } from '../../trpc/init.js';
import { ANALYTICS_META } from './analytics-catalog.js';
import { answers, WHY } from '../../http/statuses.js';

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
      statuses: answers({ 403: WHY.managementOnly }),
      listed: [401, 403, 500],
    })
    .input(z.void())
    .output(AnalyticsMetaOutputSchema)
    .query(() => ({ data: ANALYTICS_META })),
});
