// POST /analytics/query: one query over the organization's generations, read from the rollups
// (analytics_daily for the whole UTC days of a query by day, week or month or of no granularity,
// analytics_hourly for the other whole hours; both kept by the recorder) wherever they can answer,
// so that its cost grows with the number of groups in the answer and days or hours in the range,
// not with the number of generations. Raw generation rows are read only where the rollup is too coarse: the partial hours
// at the two ends of the range, and queries by minute or by (or filtered on) a high-cardinality
// dimension (external_user, generation_id), whose range is bounded more tightly (ANALYTICS_BOUNDS).
//
// queryAnalytics runs four steps: validate (the input against the catalog and the bounds, and the
// identifiers in filters resolved within the organization), plan (which rollups and raw ranges
// answer it, and the statement), query (the statement and the shaping of its rows, in a worker
// thread), shape (the answer with its metadata and warnings).
import type { Db } from '@switchyard/db';
import type { AnalyticsQueryInput, AnalyticsQueryOutput } from '@switchyard/schema';
import type { Uses } from '../../trpc/service-deps.js';
import { resolveReferences, type ReferenceKind } from '../../access/references.js';
import type { Actor } from '../../access/callers.js';
import { visibleRows, whereSql } from '../../access/tenancy.js';
import { Invalid } from '../../lib/errors.js';
import { BYOK_SQL, ROLLUP_SUMS, THROUGHPUT_SQL } from './rollup.js';
import {
  DIMENSIONS,
  GRANULARITIES,
  METRICS,
  OPERATORS,
  type DimensionDefinition,
  type GranularityDefinition,
  type MetricDefinition,
} from './analytics-catalog.js';
import type { ShapePlan } from './analytics-shape.js';
import type { AnalyticsWorkers } from './analytics-workers.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Time range bounds (docs/analytics.md): default span ending now, and maximum span. */
export const ANALYTICS_BOUNDS = {
  defaultSpanMs: 30 * DAY,
  maxSpanMs: 366 * DAY,
  /** Queries that read raw rows throughout (minute granularity, external_user or generation_id). */
  rawDefaultSpanMs: DAY,
  rawMaxSpanMs: DAY,
} as const;

const SUM_COLUMNS = ROLLUP_SUMS;
/** The statement's time limit when the server names none (ANALYTICS_QUERY_TIMEOUT_MS). */
const DEFAULT_TIMEOUT_MS = 10_000;

const byName = <T extends { name: string }>(list: T[], kind: string, name: string): T => {
  const found = list.find((item) => item.name === name);
  if (!found) throw new Invalid(`unknown ${kind} "${name}": not listed by GET /analytics/meta`, { [kind]: name });
  return found;
};

const REFERENCES: Record<string, ReferenceKind> = { api_key_id: 'api_key', workspace: 'workspace', user: 'user' };

/** The rollup's rows in [hs, he) and the raw generations in the given ranges, as one source of partial sums. */
/** A rollup table and the ranges of it a query reads (whole hours, or whole UTC days). */
interface RollupPart {
  table: 'analytics_hourly' | 'analytics_daily';
  column: 'hour' | 'day';
  ranges: [Date, Date][];
}

function sourceSql(
  params: unknown[],
  scope: { organization_id: string; workspace_id?: string },
  rollups: RollupPart[],
  raw: [Date, Date][],
  withHistograms: boolean,
): string {
  const p = (value: unknown) => `$${params.push(value)}`;
  const tenant = whereSql(scope, p);
  const parts: string[] = [];
  for (const { table, column, ranges } of rollups) {
    if (ranges.length === 0) continue;
    const within = ranges.map(([from, to]) => `(${column} >= ${p(from)} AND ${column} < ${p(to)})`).join(' OR ');
    parts.push(`
      SELECT ${column} AS ts, model AS d_model, provider AS d_provider, api_key_id::text AS d_api_key_id, user_id AS d_user,
             origin AS d_origin, finish_reason AS d_finish_reason, workspace_id::text AS d_workspace, app AS d_app,
             ''::text AS d_external_user, ''::text AS d_generation_id,
             ${SUM_COLUMNS.join(', ')},
             ${withHistograms ? 'latency_hist, throughput_hist' : `NULL::jsonb AS latency_hist, NULL::jsonb AS throughput_hist`}
      FROM ${table}
      WHERE ${tenant()} AND (${within})`);
  }
  if (raw.length > 0) {
    const ranges = raw.map(([from, to]) => `(g.created_at >= ${p(from)} AND g.created_at < ${p(to)})`).join(' OR ');
    parts.push(`
      SELECT g.created_at AS ts, g.model AS d_model, coalesce(g.provider_name, '') AS d_provider, g.api_key_id::text AS d_api_key_id,
             g.user_id AS d_user, coalesce(g.origin, '') AS d_origin, coalesce(g.finish_reason, '') AS d_finish_reason,
             g.workspace_id::text AS d_workspace, coalesce(g.app_id::text, '') AS d_app,
             coalesce(g.external_user, '') AS d_external_user, g.id AS d_generation_id,
             1::bigint AS request_count, g.tokens_prompt::bigint AS tokens_prompt, g.tokens_completion::bigint AS tokens_completion,
             coalesce(g.native_tokens_reasoning, 0)::bigint AS reasoning_tokens, coalesce(g.native_tokens_cached, 0)::bigint AS cached_tokens,
             (coalesce(g.native_tokens_cached, 0) > 0)::int::bigint AS cache_hits, g.usage AS usage, ${BYOK_SQL('g')} AS byok_usage,
             coalesce(g.latency, 0) AS latency_sum, (g.latency IS NOT NULL)::int::bigint AS latency_count,
             coalesce(t.throughput, 0) AS throughput_sum, (t.throughput IS NOT NULL)::int::bigint AS throughput_count,
             ${
               withHistograms
                 ? `CASE WHEN g.latency IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(analytics_bucket(g.latency)::text, 1) END AS latency_hist,
             CASE WHEN t.throughput IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(analytics_bucket(t.throughput)::text, 1) END AS throughput_hist`
                 : 'NULL::jsonb AS latency_hist, NULL::jsonb AS throughput_hist'
             }
      FROM generations g CROSS JOIN LATERAL (SELECT ${THROUGHPUT_SQL('g')} AS throughput) t
      WHERE ${tenant('g')} AND (${ranges})`);
  }
  return parts.join('\n      UNION ALL');
}

interface ResolvedFilter {
  dimension: DimensionDefinition;
  operator: (typeof OPERATORS)[number];
  values: string[];
  includeUnset: boolean;
}

function filterSql(params: unknown[], f: ResolvedFilter): string {
  const p = (value: unknown) => `$${params.push(value)}`;
  const col = f.dimension.column;
  const set = `${col} <> ''`;
  if (f.operator.value_type === 'array') {
    const list = f.dimension.numeric ? `${p(f.values.map(Number))}::numeric[]` : `${p(f.values)}::text[]`;
    const value = f.dimension.numeric ? `(CASE WHEN ${set} THEN ${col}::numeric END)` : col;
    const match = `(${set} AND ${value} ${f.operator.sql}(${list}))`;
    return f.includeUnset ? `(${col} = '' OR ${match})` : match;
  }
  if (f.dimension.numeric) {
    return `(${set} AND (CASE WHEN ${set} THEN ${col}::numeric END) ${f.operator.sql} ${p(Number(f.values[0]))}::numeric)`;
  }
  return `(${set} AND ${col} ${f.operator.sql} ${p(f.values[0])})`;
}

const parseTime = (value: string) => new Date(value);
const floorHour = (d: Date) => new Date(Math.floor(d.getTime() / HOUR) * HOUR);
const ceilHour = (d: Date) => new Date(Math.ceil(d.getTime() / HOUR) * HOUR);
const floorDay = (d: Date) => new Date(Math.floor(d.getTime() / DAY) * DAY);
const ceilDay = (d: Date) => new Date(Math.ceil(d.getTime() / DAY) * DAY);
/** [from, to) without the part [a, b) inside it: the ranges at its two ends that are not empty. */
const around = ([from, to]: [Date, Date], [a, b]: [Date, Date]) =>
  (
    [
      [from, a],
      [b, to],
    ] as [Date, Date][]
  ).filter(([x, y]) => x < y);

/** A query checked against the catalog (GET /analytics/meta) and the time bounds. */
interface ValidQuery {
  metrics: MetricDefinition[];
  dimensions: DimensionDefinition[];
  granularity: GranularityDefinition | undefined;
  filters: ResolvedFilter[];
  order: AnalyticsQueryInput['order_by'];
  groupLimit: number | undefined;
  limit: AnalyticsQueryInput['limit'];
  /** Whether raw generation rows answer all of it (minute granularity, external_user or generation_id). */
  raw: boolean;
  start: Date;
  end: Date;
}

/** The statement that answers a query, with its parameters, and how the worker shapes its rows. */
interface QueryPlan {
  sql: string;
  params: unknown[];
  shape: ShapePlan;
}

/** POST /analytics/query (management key): validate, plan, query, shape. */
export async function queryAnalytics(
  deps: Uses<'db' | 'now' | 'analyticsWorkers' | 'analyticsQueryTimeoutMs' | 'analyticsLimit' | 'clientGone'>,
  actor: Actor,
  input: AnalyticsQueryInput,
): Promise<AnalyticsQueryOutput['data']> {
  const started = performance.now();
  const query = validate(input, deps.now());
  const warnings = await resolveFilterReferences(deps.db, actor, query.filters);
  const plan = planQuery(query, visibleRows(actor));
  const timeoutMs = deps.analyticsQueryTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  // One slot of ANALYTICS_CONCURRENCY from the statement until the answer is built. Not run (408)
  // when it waited for its slot longer than its statement may run, or its client left.
  const answer = async () => shapeAnswer(await runQuery(deps.analyticsWorkers, plan, timeoutMs), started, warnings);
  return deps.analyticsLimit ? deps.analyticsLimit.run(actor.organizationId, timeoutMs, answer, () => deps.clientGone()) : answer();
}

/** Validate: the names against the catalog, the filters' values against their operators, order_by, and the time range's bounds. */
function validate(input: AnalyticsQueryInput, now: Date): ValidQuery {
  if (input.classifier_dimensions !== undefined || input.classifier_filters !== undefined) {
    throw new Invalid('classifier_dimensions and classifier_filters are not supported: no classifiers here', { field: 'classifier_dimensions' });
  }
  const metrics = [...new Set(input.metrics)].map((name) => byName(METRICS, 'metric', name));
  const dimensions = [...new Set(input.dimensions ?? [])].map((name) => byName(DIMENSIONS, 'dimension', name));
  const granularity = input.granularity === undefined ? undefined : byName(GRANULARITIES, 'granularity', input.granularity);
  const filters = (input.filters ?? []).map((f): ResolvedFilter => {
    const dimension = byName(DIMENSIONS, 'dimension', f.field);
    const operator = byName(OPERATORS, 'operator', f.operator);
    const isArray = Array.isArray(f.value);
    if (isArray !== (operator.value_type === 'array')) {
      throw new Invalid(`filter on ${f.field}: operator ${operator.name} takes ${operator.value_type === 'array' ? 'an array' : 'a string or a number'}`, {
        filter: f.field,
      });
    }
    const values = (isArray ? (f.value as (string | number)[]) : [f.value as string | number]).map(String);
    if (dimension.numeric && values.some((v) => !/^-?\d+$/.test(v))) {
      throw new Invalid(`filter on ${f.field}: values must be integers`, { filter: f.field });
    }
    return { dimension, operator, values, includeUnset: f.include_unset === true };
  });
  const order = input.order_by;
  if (order) {
    const allowed =
      order.field === 'request_count' ||
      (order.field === 'date' && granularity) ||
      metrics.some((m) => m.name === order.field) ||
      dimensions.some((d) => d.name === order.field);
    if (!allowed)
      throw new Invalid(`order_by field "${order.field}": not a requested metric, request_count, a requested dimension or date`, { order_by: order.field });
  }

  const raw = granularity?.raw === true || dimensions.some((d) => d.raw) || filters.some((f) => f.dimension.raw);
  const maxSpan = raw ? ANALYTICS_BOUNDS.rawMaxSpanMs : ANALYTICS_BOUNDS.maxSpanMs;
  const end = input.time_range ? parseTime(input.time_range.end) : now;
  const start = input.time_range
    ? parseTime(input.time_range.start)
    : new Date(end.getTime() - (raw ? ANALYTICS_BOUNDS.rawDefaultSpanMs : ANALYTICS_BOUNDS.defaultSpanMs));
  if (start >= end) throw new Invalid('time_range: start must be before end', { time_range: 'start' });
  if (end.getTime() - start.getTime() > maxSpan) {
    throw new Invalid(`time_range: spans more than ${maxSpan / HOUR} hours${raw ? ' (the limit of queries by minute, external_user or generation_id)' : ''}`, {
      time_range: 'span',
      max_hours: maxSpan / HOUR,
    });
  }
  return { metrics, dimensions, granularity, filters, order, groupLimit: input.group_limit, limit: input.limit, raw, start, end };
}

/**
 * Validate, within the organization: the identifiers in filters (key hashes, workspace slugs, user
 * ids) become the ids the rows hold. What resolves to nothing matches nothing, with a warning.
 */
async function resolveFilterReferences(db: Db, actor: Actor, filters: ResolvedFilter[]): Promise<string[]> {
  const warnings: string[] = [];
  for (const f of filters) {
    const kind = REFERENCES[f.dimension.name];
    if (!kind) continue;
    const resolved = await resolveReferences(db, actor, kind, f.values);
    for (const v of f.values) if (!resolved.has(v)) warnings.push(`${f.dimension.name}: "${v}" matches nothing in this organization`);
    f.values = f.values.map((v) => resolved.get(v) ?? v);
  }
  return warnings;
}

/**
 * Plan: whole UTC days from the daily rollup (when the answer's buckets are days or wider), the
 * other whole hours from the hourly one, the rest from raw rows; then the statement over them.
 */
function planQuery(query: ValidQuery, scope: { organization_id: string; workspace_id?: string }): QueryPlan {
  const { metrics, dimensions, granularity, filters, raw, start, end } = query;
  const [hs, he] = [ceilHour(start), floorHour(end)];
  const useRollup = !raw && hs < he;
  const [ds, de] = [ceilDay(hs), floorDay(he)];
  const useDaily = useRollup && ds < de && (!granularity || ['day', 'week', 'month'].includes(granularity.field));
  const rollups: RollupPart[] = useRollup
    ? [
        { table: 'analytics_daily', column: 'day', ranges: useDaily ? [[ds, de]] : [] },
        { table: 'analytics_hourly', column: 'hour', ranges: useDaily ? around([hs, he], [ds, de]) : [[hs, he]] },
      ]
    : [];
  const rawRanges: [Date, Date][] = useRollup ? around([start, end], [hs, he]) : [[start, end]];
  const needs = [...new Set(metrics.map((m) => m.histogram).filter((h) => h !== undefined))];
  const params: unknown[] = [];
  const source = sourceSql(params, scope, rollups, rawRanges, needs.length > 0);
  const where = filters.length ? `WHERE ${filters.map((f) => filterSql(params, f)).join(' AND ')}` : '';
  const dims = dimensions.map((d, i) => `${d.column} AS d${i}`);
  const keys = ['date', ...dimensions.map((_, i) => `d${i}`)];
  const dateSql = granularity ? `date_trunc('${granularity.field}', ts, 'UTC')` : `'epoch'::timestamptz`;
  // Histograms are merged in the worker thread (analytics-shape.ts), not in SQL (expanding their
  // buckets into rows and aggregating them in PostgreSQL cost several times the rest of the query).
  // As one JSON text per group (an array of the histograms), which JSON.parse reads in one pass.
  const hists = needs.map((h) => `'[' || coalesce(string_agg(${h}_hist::text, ',') FILTER (WHERE ${h}_hist <> '{}'::jsonb), '') || ']' AS ${h}_hists`);
  // The api_key_id dimension answers key hashes, as the rest of the API names keys (a key no longer
  // there keeps its id): looked up per group, in the statement.
  const keyDim = dimensions.findIndex((d) => d.name === 'api_key_id');
  const keyTenant = keyDim >= 0 ? whereSql(scope, (value) => `$${params.push(value)}`)('k') : '';
  const answered = keys.map((k, i) =>
    keyDim >= 0 && i === keyDim + 1 ? `coalesce((SELECT k.hash FROM api_keys k WHERE k.id::text = g.${k} AND ${keyTenant}), g.${k}) AS ${k}` : `g.${k}`,
  );
  const sql = `
    WITH src AS (${source}),
    f AS (SELECT ${[`${dateSql} AS date`, ...dims, ...SUM_COLUMNS, 'latency_hist', 'throughput_hist'].join(', ')} FROM src ${where}),
    g AS (
      SELECT ${keys.join(', ')}, ${[...SUM_COLUMNS.map((c) => `sum(${c})::text AS ${c}`), ...hists].join(', ')}
      FROM f GROUP BY ${keys.join(', ')})
    SELECT ${[...answered, ...SUM_COLUMNS.map((c) => `g.${c}`), ...needs.map((h) => `g.${h}_hists`)].join(', ')} FROM g`;
  const shape: ShapePlan = {
    dimensions: dimensions.map((d) => ({ name: d.name, numeric: d.numeric === true })),
    metrics: metrics.map((m) => m.name),
    histograms: needs,
    granularity: granularity !== undefined,
    ...(query.order ? { order: query.order } : {}),
    ...(query.groupLimit !== undefined ? { groupLimit: query.groupLimit } : {}),
    limit: query.limit,
  };
  return { sql, params, shape };
}

/** Query: the statement and the shaping of its rows run in a worker thread (analytics-workers.ts), off the event loop, within the time limit. */
function runQuery(workers: AnalyticsWorkers, plan: QueryPlan, timeoutMs: number) {
  return workers.run({ sql: plan.sql, params: plan.params, plan: plan.shape }, timeoutMs);
}

/** Shape: the answer, with how long it took and what the filters matched nothing of. */
function shapeAnswer(shaped: Awaited<ReturnType<typeof runQuery>>, started: number, warnings: string[]): AnalyticsQueryOutput['data'] {
  return {
    data: shaped.rows,
    metadata: { query_time_ms: Math.round((performance.now() - started) * 100) / 100, row_count: shaped.rows.length, truncated: shaped.truncated },
    ...(warnings.length ? { warnings } : {}),
  };
}
