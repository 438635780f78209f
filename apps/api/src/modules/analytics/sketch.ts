// Mergeable log-bucketed histograms (the scheme of DDSketch): a value v > 0 falls into bucket
// ceil(log_gamma(v)), gamma = (1 + ALPHA) / (1 - ALPHA); 0 has a bucket of its own. The bucket is
// computed in SQL (analytics_bucket(), migration 20261123203343_analytics_hourly) so that rollups
// and raw rows agree; histograms are { "<bucket>": count } objects, added bucket by bucket.
// Estimating any value of bucket i as 2 gamma^i / (gamma + 1) is off by at most ALPHA (relative).

/** The relative error of every percentile (docs/analytics.md). Must match analytics_bucket() in SQL. */
export const ALPHA = 0.01;
export const GAMMA = (1 + ALPHA) / (1 - ALPHA);
/** analytics_bucket(0). */
export const ZERO_BUCKET = -1_000_000;

export type Histogram = Map<number, number>;

/** Adds counts ({ bucket: count }, as SQL answers them) into a histogram. */
export function addCounts(into: Histogram, counts: Record<string, number | string> | null | undefined): Histogram {
  for (const [bucket, count] of Object.entries(counts ?? {})) {
    const b = Number(bucket);
    into.set(b, (into.get(b) ?? 0) + Number(count));
  }
  return into;
}

const estimate = (bucket: number) => (bucket === ZERO_BUCKET ? 0 : (2 * GAMMA ** bucket) / (GAMMA + 1));

/**
 * The q-quantile (0 < q <= 1): the value of rank ceil(q * n) among the n values (the nearest-rank
 * definition, as percentile_disc), within ALPHA of it. null for an empty histogram.
 */
export function quantile(histogram: Histogram, q: number): number | null {
  let total = 0;
  for (const count of histogram.values()) total += count;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const bucket of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(bucket)!;
    if (seen >= rank) return estimate(bucket);
  }
  return null;
}
