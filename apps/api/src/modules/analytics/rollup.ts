// The analytics rollups, hourly and daily, written by the recorder's batch statement from the
// generations it actually inserted (a retried id inserts nothing, so it is counted once). Each rollup
// row is upserted with additive sums and a bucket-wise histogram merge (analytics_hist_add, see the
// analytics_hourly migration), so concurrent batches stay exact: the upsert locks the row. Rows are
// upserted in key order, so that two batches lock the rows they share in the same order (no deadlock).

/** The rollup's key columns, in primary-key order. */
export const ROLLUP_KEY = ['organization_id', 'hour', 'workspace_id', 'api_key_id', 'user_id', 'model', 'provider', 'origin', 'finish_reason', 'app'] as const;

const KEY = ROLLUP_KEY.join(', ');

/** Throughput of one generation, in completion tokens per second (generation_time is in ms). */
export const THROUGHPUT_SQL = (g: string) => `CASE WHEN ${g}.generation_time > 0 THEN ${g}.tokens_completion * 1000.0::float8 / ${g}.generation_time END`;

/** BYOK spend of one generation: what the provider charged the customer's own key. */
export const BYOK_SQL = (g: string) => `CASE WHEN ${g}.is_byok THEN coalesce(${g}.upstream_inference_cost, 0) ELSE 0 END`;

/** The additive columns of a rollup row (and of every group a query sums). */
export const ROLLUP_SUMS = [
  'request_count',
  'tokens_prompt',
  'tokens_completion',
  'reasoning_tokens',
  'cached_tokens',
  'cache_hits',
  'usage',
  'byok_usage',
  'latency_sum',
  'latency_count',
  'throughput_sum',
  'throughput_count',
] as const;

/** The rollup tables: the hourly one, and the same sums by UTC day. */
const TABLES = [
  { table: 'analytics_hourly', bucket: 'hour', of: 'hour' },
  { table: 'analytics_daily', bucket: 'day', of: `date_trunc('day', hour, 'UTC')` },
] as const;

/**
 * CTEs (to follow others in a WITH list) that roll up the generation rows of the CTE `source`
 * (columns of the generations table) into analytics_hourly and analytics_daily.
 */
export function rollupCtes(source: string): string {
  const upserts = TABLES.map(({ table, bucket, of }) => {
    const key = KEY.replace('hour', bucket);
    const select = KEY.replace('hour', `${of} AS ${bucket}`);
    const group = KEY.replace('hour', of);
    return `an_${bucket} AS (
    INSERT INTO ${table} (${key}, ${ROLLUP_SUMS.join(', ')}, latency_hist, throughput_hist)
    SELECT s.*, coalesce(h.lh, '{}'::jsonb), coalesce(h.th, '{}'::jsonb)
    FROM (SELECT ${select}, ${ROLLUP_SUMS.map((c) => `sum(${c})`).join(', ')} FROM an_sums GROUP BY ${group}) s
    LEFT JOIN (
      SELECT ${key}, jsonb_object_agg(b, n) FILTER (WHERE kind = 'l') AS lh, jsonb_object_agg(b, n) FILTER (WHERE kind = 't') AS th
      FROM (SELECT ${select}, kind, b, sum(n) AS n FROM an_buckets GROUP BY ${group}, kind, b) x
      GROUP BY ${key}
    ) h USING (${key})
    ORDER BY ${key}
    ON CONFLICT (${key}) DO UPDATE SET
      ${ROLLUP_SUMS.map((c) => `${c} = ${table}.${c} + EXCLUDED.${c}`).join(',\n      ')},
      latency_hist = analytics_hist_add(${table}.latency_hist, EXCLUDED.latency_hist),
      throughput_hist = analytics_hist_add(${table}.throughput_hist, EXCLUDED.throughput_hist)
  )`;
  });
  return `
  an_facts AS (
    SELECT g.organization_id, date_trunc('hour', g.created_at, 'UTC') AS hour, g.workspace_id, g.api_key_id, g.user_id, g.model,
           coalesce(g.provider_name, '') AS provider, coalesce(g.origin, '') AS origin,
           coalesce(g.finish_reason, '') AS finish_reason, coalesce(g.app_id::text, '') AS app,
           g.tokens_prompt, g.tokens_completion, coalesce(g.native_tokens_reasoning, 0) AS reasoning,
           coalesce(g.native_tokens_cached, 0) AS cached, g.usage, ${BYOK_SQL('g')} AS byok, g.latency,
           ${THROUGHPUT_SQL('g')} AS throughput
    FROM ${source} g
  ), an_buckets AS (
    SELECT ${KEY}, 'l' AS kind, analytics_bucket(latency) AS b, count(*) AS n
    FROM an_facts WHERE latency IS NOT NULL GROUP BY ${KEY}, b
    UNION ALL
    SELECT ${KEY}, 't', analytics_bucket(throughput), count(*)
    FROM an_facts WHERE throughput IS NOT NULL GROUP BY ${KEY}, analytics_bucket(throughput)
  ), an_sums AS (
    SELECT ${KEY}, count(*) AS request_count, sum(tokens_prompt) AS tokens_prompt, sum(tokens_completion) AS tokens_completion,
           sum(reasoning) AS reasoning_tokens, sum(cached) AS cached_tokens, count(*) FILTER (WHERE cached > 0) AS cache_hits,
           sum(usage) AS usage, sum(byok) AS byok_usage, coalesce(sum(latency), 0) AS latency_sum, count(latency) AS latency_count,
           coalesce(sum(throughput), 0) AS throughput_sum, count(throughput) AS throughput_count
    FROM an_facts GROUP BY ${KEY}
  ), ${upserts.join(', ')}`;
}
