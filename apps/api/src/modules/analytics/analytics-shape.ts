// The analytics query's answer, shaped from its statement's rows: each group's metrics, the order,
// group_limit and limit. It runs in the analytics worker thread (analytics-worker.ts), off the
// server's event loop: a query of many groups costs the worker, not every other request.
//
// The limits apply as early as the order allows: only what the order reads (its field, the date,
// the first metric, the dimensions) is computed for every group, and a group's histograms are
// merged only when a percentile of it is read; the other metrics are computed for the rows kept.
import { z } from 'zod';
import { METRICS, type Group, type MetricDefinition, type Partials } from './analytics-catalog.js';
import { ROLLUP_SUMS } from './rollup.js';
import { addCounts, type Histogram } from './sketch.js';

type Counts = Record<string, string | number>;
export type SqlRow = { date: Date; latency_hists?: string; throughput_hists?: string } & Record<`d${number}` | (typeof ROLLUP_SUMS)[number], string>;

/**
 * The schema of the statement's rows: its date bucket, dimensions d0.. and sums as text, and each
 * histogram asked for as JSON text (`latency_hists`).
 */
export function sqlRowSchema(dimensions: number, histograms: readonly string[]): z.ZodType<SqlRow> {
  const key = `${dimensions} ${histograms.join()}`;
  let schema = sqlRowSchemas.get(key);
  if (!schema) {
    const text = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, z.string()]));
    const dims = Array.from({ length: dimensions }, (_, i) => `d${i}`);
    // Its columns depend on the query, which tsc cannot follow: SqlRow types what the schema checks.
    schema = z.object({ date: z.date(), ...text(dims), ...text(ROLLUP_SUMS), ...text(histograms.map((h) => `${h}_hists`)) }) as unknown as z.ZodType<SqlRow>;
    sqlRowSchemas.set(key, schema);
  }
  return schema;
}
/** The schemas made so far (zod compiles one on its first parse): one per number of dimensions and set of histograms. */
const sqlRowSchemas = new Map<string, z.ZodType<SqlRow>>();

/** What the shaping needs to know of the query (plain data: it crosses to the worker thread). */
export interface ShapePlan {
  dimensions: { name: string; numeric: boolean }[];
  /** Metric names, as asked (deduplicated). */
  metrics: string[];
  /** The histograms the statement gathered (latency, throughput). */
  histograms: string[];
  granularity: boolean;
  order?: { field: string; direction: 'asc' | 'desc' };
  groupLimit?: number;
  limit: number;
}

export type Row = Record<string, string | number | null>;

/**
 * One histogram of the buckets of several (the group's histograms as one JSON array): added by the
 * buckets' names first, then turned into numbers once per bucket rather than once per histogram.
 */
function merged(all: string | undefined): Histogram {
  const sums: Record<string, number> = {};
  if (all) for (const counts of JSON.parse(all) as Counts[]) for (const bucket in counts) sums[bucket] = (sums[bucket] ?? 0) + Number(counts[bucket]);
  return addCounts(new Map<number, number>(), sums);
}

/** A group whose histograms are merged when first read. */
function groupOf(r: SqlRow): Group {
  const sums = Object.fromEntries(ROLLUP_SUMS.map((c) => [c, Number(r[c])])) as unknown as Partials;
  let latency: Histogram | undefined;
  let throughput: Histogram | undefined;
  return {
    sums,
    get latency() {
      latency ??= merged(r.latency_hists);
      return latency;
    },
    get throughput() {
      throughput ??= merged(r.throughput_hists);
      return throughput;
    },
  };
}

/** Rows between two looks at the clock. */
const CHECK_EVERY = 512;

/**
 * The answer's rows from the statement's, in order, within group_limit and limit; and whether any
 * were left out. null once `deadline` (ms since the epoch) has passed: it looks as it goes.
 */
export function shapeRows(sqlRows: readonly SqlRow[], plan: ShapePlan, deadline = Number.POSITIVE_INFINITY): { rows: Row[]; truncated: boolean } | null {
  const late = () => Date.now() >= deadline;
  const metrics = plan.metrics.map((name) => METRICS.find((m) => m.name === name)).filter((m): m is MetricDefinition => m !== undefined);
  const { dimensions, order } = plan;
  const first = metrics[0]!;
  const orderMetric = order ? metrics.find((m) => m.name === order.field) : undefined;
  const extraRequestCount = order?.field === 'request_count' && !metrics.some((m) => m.name === 'request_count');
  // What the order reads, for every group; the rest for the rows kept.
  const early = [first, ...(orderMetric && orderMetric !== first ? [orderMetric] : [])];
  const rest = metrics.filter((m) => !early.includes(m));

  const built: { row: Row; group: Group }[] = [];
  for (const r of sqlRows) {
    if (built.length % CHECK_EVERY === 0 && late()) return null;
    const group = groupOf(r);
    const row: Row = {};
    dimensions.forEach((d, i) => {
      const value = String(r[`d${i}`]);
      row[d.name] = value === '' ? null : d.numeric ? Number(value) : value;
    });
    if (plan.granularity) row.date = r.date.toISOString();
    for (const m of early) row[m.name] = m.value(group);
    if (extraRequestCount) row.request_count = group.sums.request_count;
    built.push({ row, group });
  }

  // Order: as asked, else by date, then by the first metric, largest first; ties by dimension values.
  const compare = (field: string, direction: 'asc' | 'desc') => (a: Row, b: Row) => {
    const [x, y] = [a[field], b[field]];
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    const c = x < y ? -1 : 1;
    return direction === 'asc' ? c : -c;
  };
  const comparators = [
    ...(order ? [compare(order.field, order.direction)] : []),
    ...(plan.granularity ? [compare('date', 'asc')] : []),
    compare(first.name, 'desc'),
    ...dimensions.map((d) => compare(d.name, 'asc')),
  ];
  built.sort((a, b) => {
    for (const c of comparators) {
      const r = c(a.row, b.row);
      if (r !== 0) return r;
    }
    return 0;
  });
  if (late()) return null;

  let truncated = false;
  let kept = built;
  if (plan.groupLimit !== undefined && dimensions.length > 0) {
    const seen = new Map<string, number>();
    kept = built.filter(({ row }) => {
      const key = JSON.stringify(dimensions.map((d) => row[d.name]));
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      return n <= plan.groupLimit!;
    });
    truncated = kept.length < built.length;
  }
  if (kept.length > plan.limit) {
    kept = kept.slice(0, plan.limit);
    truncated = true;
  }
  const rows: Row[] = [];
  for (const { row, group } of kept) {
    if (rows.length % CHECK_EVERY === 0 && late()) return null;
    for (const m of rest) row[m.name] = m.value(group);
    if (extraRequestCount) delete row.request_count;
    // The metrics in the order they were asked for, after the dimensions and the date (as before the split).
    const ordered: Row = {};
    for (const d of dimensions) ordered[d.name] = row[d.name] ?? null;
    if (plan.granularity) ordered.date = row.date ?? null;
    for (const m of metrics) ordered[m.name] = row[m.name] ?? null;
    rows.push(ordered);
  }
  return { rows, truncated };
}
