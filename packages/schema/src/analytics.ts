import { z } from 'zod';
import { dataOf } from './common.js';

export const AnalyticsDisplayFormatSchema = z.enum(['number', 'currency', 'percent', 'latency', 'throughput']);
export const AnalyticsValueTypeSchema = z.enum(['scalar', 'array']);

export const AnalyticsMetaSchema = z
  .object({
    dimensions: z.array(z.object({ name: z.string(), display_label: z.string() })),
    granularities: z.array(z.object({ name: z.string(), display_label: z.string() })),
    metrics: z.array(
      z.object({
        name: z.string(),
        display_label: z.string(),
        display_format: AnalyticsDisplayFormatSchema,
        is_rate: z.boolean(),
      }),
    ),
    operators: z.array(z.object({ name: z.string(), value_type: AnalyticsValueTypeSchema })),
  })
  .describe('What the analytics query endpoint accepts');
export type AnalyticsMeta = z.infer<typeof AnalyticsMetaSchema>;

export const AnalyticsMetaOutputSchema = dataOf(AnalyticsMetaSchema);
