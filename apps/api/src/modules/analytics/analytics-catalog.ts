// What the analytics query endpoint accepts (compat.md's names), with display labels.
import type { AnalyticsMeta } from '@switchyard/schema';

type Metric = AnalyticsMeta['metrics'][number];
const metric = (name: string, display_label: string, display_format: Metric['display_format'], is_rate = false): Metric => ({
  name,
  display_label,
  display_format,
  is_rate,
});

export const ANALYTICS_META: AnalyticsMeta = {
  dimensions: [
    { name: 'model', display_label: 'Model' },
    { name: 'provider', display_label: 'Provider' },
    { name: 'api_key_id', display_label: 'API key' },
    { name: 'user', display_label: 'User' },
    { name: 'origin', display_label: 'Origin' },
    { name: 'finish_reason', display_label: 'Finish reason' },
    { name: 'workspace', display_label: 'Workspace' },
    { name: 'app', display_label: 'App' },
    { name: 'external_user', display_label: 'External user' },
    { name: 'generation_id', display_label: 'Generation' },
  ],
  granularities: [
    { name: 'minute', display_label: 'Minute' },
    { name: 'hour', display_label: 'Hour' },
    { name: 'day', display_label: 'Day' },
    { name: 'week', display_label: 'Week' },
    { name: 'month', display_label: 'Month' },
  ],
  metrics: [
    metric('request_count', 'Requests', 'number'),
    metric('tokens_total', 'Total tokens', 'number'),
    metric('tokens_prompt', 'Prompt tokens', 'number'),
    metric('tokens_completion', 'Completion tokens', 'number'),
    metric('reasoning_tokens', 'Reasoning tokens', 'number'),
    metric('cached_tokens', 'Cached tokens', 'number'),
    metric('total_usage', 'Spend', 'currency'),
    metric('byok_usage', 'BYOK spend', 'currency'),
    metric('avg_latency', 'Average latency', 'latency'),
    metric('p50_latency', 'Latency (p50)', 'latency'),
    metric('p90_latency', 'Latency (p90)', 'latency'),
    metric('p99_latency', 'Latency (p99)', 'latency'),
    metric('avg_throughput', 'Average throughput', 'throughput', true),
    metric('p50_throughput', 'Throughput (p50)', 'throughput', true),
    metric('p90_throughput', 'Throughput (p90)', 'throughput', true),
    metric('p99_throughput', 'Throughput (p99)', 'throughput', true),
    metric('cache_hit_rate', 'Cache hit rate', 'percent', true),
  ],
  operators: [
    { name: 'eq', value_type: 'scalar' },
    { name: 'neq', value_type: 'scalar' },
    { name: 'gt', value_type: 'scalar' },
    { name: 'gte', value_type: 'scalar' },
    { name: 'lt', value_type: 'scalar' },
    { name: 'lte', value_type: 'scalar' },
    { name: 'in', value_type: 'array' },
    { name: 'not_in', value_type: 'array' },
  ],
};
