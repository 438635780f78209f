// The one definition of what the analytics query accepts: GET /analytics/meta lists it and
// POST /analytics/query runs it, so the two cannot disagree. Each metric says how it is computed
// from the partial sums of a group (rollup or raw rows, see analytics.service.ts); each dimension
// names its column of the query's source; each granularity its UTC time bucket.
import type { AnalyticsMeta } from '@switchyard/schema';
import type { ROLLUP_SUMS } from './rollup.js';
import { quantile, type Histogram } from './sketch.js';

/** The sums every group carries, whichever source (hourly rollup or raw generations) fed it. */
export type Partials = Record<(typeof ROLLUP_SUMS)[number], number>;

export interface Group {
  sums: Partials;
  latency: Histogram;
  throughput: Histogram;
}

type Metric = AnalyticsMeta['metrics'][number];
export interface MetricDefinition extends Metric {
  value(group: Group): number;
  /** Needs the histograms (a percentile). */
  histogram?: 'latency' | 'throughput';
}

const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);
const sum = (name: string, display_label: string, display_format: Metric['display_format'], value: (s: Partials) => number) => ({
  name,
  display_label,
  display_format,
  is_rate: false,
  value: (g: Group) => value(g.sums),
});
const percentile = (of: 'latency' | 'throughput', q: number): MetricDefinition => ({
  name: `p${Math.round(q * 100)}_${of}`,
  display_label: `${of === 'latency' ? 'Latency' : 'Throughput'} (p${Math.round(q * 100)})`,
  display_format: of,
  is_rate: of === 'throughput',
  histogram: of,
  value: (g) => quantile(g[of], q) ?? 0,
});

/**
 * Metrics. Latency is in milliseconds; throughput in completion tokens per second of generation
 * time (generations with a generation_time > 0); cache_hit_rate is the share of requests that read
 * cached prompt tokens. Averages and percentiles of a group without such values are 0.
 */
export const METRICS: MetricDefinition[] = [
  sum('request_count', 'Requests', 'number', (s) => s.request_count),
  sum('tokens_total', 'Total tokens', 'number', (s) => s.tokens_prompt + s.tokens_completion),
  sum('tokens_prompt', 'Prompt tokens', 'number', (s) => s.tokens_prompt),
  sum('tokens_completion', 'Completion tokens', 'number', (s) => s.tokens_completion),
  sum('reasoning_tokens', 'Reasoning tokens', 'number', (s) => s.reasoning_tokens),
  sum('cached_tokens', 'Cached tokens', 'number', (s) => s.cached_tokens),
  sum('total_usage', 'Spend', 'currency', (s) => s.usage),
  sum('byok_usage', 'BYOK spend', 'currency', (s) => s.byok_usage),
  sum('avg_latency', 'Average latency', 'latency', (s) => ratio(s.latency_sum, s.latency_count)),
  percentile('latency', 0.5),
  percentile('latency', 0.9),
  percentile('latency', 0.99),
  { ...sum('avg_throughput', 'Average throughput', 'throughput', (s) => ratio(s.throughput_sum, s.throughput_count)), is_rate: true },
  percentile('throughput', 0.5),
  percentile('throughput', 0.9),
  percentile('throughput', 0.99),
  { ...sum('cache_hit_rate', 'Cache hit rate', 'percent', (s) => ratio(s.cache_hits, s.request_count)), is_rate: true },
];

export interface DimensionDefinition {
  name: string;
  display_label: string;
  /** Its column in the query's source (analytics.service.ts). */
  column: string;
  /** Only raw generation rows carry it (too many values to roll up). */
  raw?: true;
  /** Compared as a number (gt, lt...). */
  numeric?: true;
}

const dimension = (name: string, display_label: string, extra: Partial<DimensionDefinition> = {}): DimensionDefinition => ({
  name,
  display_label,
  column: `d_${name}`,
  ...extra,
});

export const DIMENSIONS: DimensionDefinition[] = [
  dimension('model', 'Model'),
  dimension('provider', 'Provider'),
  dimension('api_key_id', 'API key'),
  dimension('user', 'User'),
  dimension('origin', 'Origin'),
  dimension('finish_reason', 'Finish reason'),
  dimension('workspace', 'Workspace'),
  dimension('app', 'App', { numeric: true }),
  dimension('external_user', 'External user', { raw: true }),
  dimension('generation_id', 'Generation', { raw: true }),
];

export interface GranularityDefinition {
  name: string;
  display_label: string;
  /** date_trunc's field (in UTC; weeks start on Monday). */
  field: string;
  /** Only raw generation rows are this fine. */
  raw?: true;
}

export const GRANULARITIES: GranularityDefinition[] = [
  { name: 'minute', display_label: 'Minute', field: 'minute', raw: true },
  { name: 'hour', display_label: 'Hour', field: 'hour' },
  { name: 'day', display_label: 'Day', field: 'day' },
  { name: 'week', display_label: 'Week', field: 'week' },
  { name: 'month', display_label: 'Month', field: 'month' },
];

export interface OperatorDefinition {
  name: string;
  value_type: 'scalar' | 'array';
  /** SQL comparison for scalar operators; for arrays, whether the value list is a match or an exclusion. */
  sql: string;
}

export const OPERATORS: OperatorDefinition[] = [
  { name: 'eq', value_type: 'scalar', sql: '=' },
  { name: 'neq', value_type: 'scalar', sql: '<>' },
  { name: 'gt', value_type: 'scalar', sql: '>' },
  { name: 'gte', value_type: 'scalar', sql: '>=' },
  { name: 'lt', value_type: 'scalar', sql: '<' },
  { name: 'lte', value_type: 'scalar', sql: '<=' },
  { name: 'in', value_type: 'array', sql: '= ANY' },
  { name: 'not_in', value_type: 'array', sql: '<> ALL' },
];

export const ANALYTICS_META: AnalyticsMeta = {
  dimensions: DIMENSIONS.map(({ name, display_label }) => ({ name, display_label })),
  granularities: GRANULARITIES.map(({ name, display_label }) => ({ name, display_label })),
  metrics: METRICS.map(({ name, display_label, display_format, is_rate }) => ({ name, display_label, display_format, is_rate })),
  operators: OPERATORS.map(({ name, value_type }) => ({ name, value_type })),
};
