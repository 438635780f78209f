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

/** ISO 8601 date-time with seconds (a fractional part allowed), in UTC (Z) or with an offset. */
const AnalyticsTimeSchema = z
  .string()
  .max(40)
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/, 'an ISO 8601 date-time with seconds')
  .refine((value) => !Number.isNaN(Date.parse(value)), 'not a valid date-time');

const FilterScalarSchema = z.union([z.string().max(300), z.number()]);

export const ANALYTICS_LIMIT_MAX = 10_000;

export const AnalyticsQueryInputSchema = z
  .object({
    metrics: z.array(z.string().max(100)).min(1).max(50).describe('Metric names from GET /analytics/meta'),
    dimensions: z.array(z.string().max(100)).max(20).optional().describe('Dimension names from meta; each distinct combination is one row'),
    granularity: z.string().max(100).optional().describe('A granularity name from meta: adds a UTC time bucket (`date`) to every row'),
    time_range: z.object({ start: AnalyticsTimeSchema, end: AnalyticsTimeSchema }).optional().describe('[start, end); bounds in docs/analytics.md'),
    filters: z
      .array(
        z.object({
          field: z.string().max(100),
          operator: z.string().max(100),
          value: z.union([FilterScalarSchema, z.array(FilterScalarSchema).max(1000)]),
          include_unset: z.boolean().optional(),
        }),
      )
      .max(50)
      .optional(),
    order_by: z.object({ field: z.string().max(100), direction: z.enum(['asc', 'desc']) }).optional(),
    limit: z.number().int().min(1).max(ANALYTICS_LIMIT_MAX).default(1000).describe('Maximum rows in the answer'),
    group_limit: z.number().int().min(1).max(ANALYTICS_LIMIT_MAX).optional().describe('Maximum rows per combination of dimensions'),
    classifier_dimensions: z.unknown().optional().describe('Not supported: 400 when present'),
    classifier_filters: z.unknown().optional().describe('Not supported: 400 when present'),
  })
  .describe('One analytics query over the organization’s generations');
export type AnalyticsQueryInput = z.infer<typeof AnalyticsQueryInputSchema>;

export const AnalyticsRowSchema = z.record(z.string(), z.union([z.string(), z.number(), z.null()]));

export const AnalyticsQueryOutputSchema = dataOf(
  z.object({
    data: z.array(AnalyticsRowSchema),
    metadata: z.object({
      query_time_ms: z.number(),
      row_count: z.number().int(),
      truncated: z.boolean().describe('true when limit or group_limit cut rows'),
    }),
    cached_at: z.number().optional(),
    warnings: z.array(z.string()).optional().describe('Filter values that could not be resolved'),
  }),
);
export type AnalyticsQueryOutput = z.infer<typeof AnalyticsQueryOutputSchema>;
