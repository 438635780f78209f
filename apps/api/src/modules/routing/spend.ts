// Spend in the current window, for every kind of limit: a key's limit, a workspace budget, a
// guardrail's limit, the organization's credit balance. Windows are calendar-exact UTC (daily from
// midnight, weekly from Monday, monthly from the 1st; lifetime never resets): the routing rules'
// (@switchyard/rules), which GET /key counts by too. The spend itself is counted in PostgreSQL by
// routing_spend() (migration "routing_decisions"), recorded spend plus spend held by open
// reservations, so that the check that reserves (routing_reserve()) and the one that does not
// count alike.
import { queryRows, statement, type Db } from '@switchyard/db';
import { z } from 'zod';
import { TtlCache } from '../../lib/cache.js';
import type { CacheCounter } from '../../lib/metrics.js';
import type { LimitCheck } from '@switchyard/rules';

export type { Interval, LimitCheck } from '@switchyard/rules';
export { resetsAtOf, sinceOf, windowEnd, windowStart } from '@switchyard/rules';

const SPEND = statement(
  `SELECT name, remaining::text AS remaining FROM routing_spend($1, $2::jsonb, $3::timestamptz)`,
  z.object({ name: z.string(), remaining: z.string().nullable() }),
);

/**
 * What is left of each limit now: its amount less recorded spend in its window and spend held. A
 * check with no figure (a "makers" check when no maker has a limit) is absent: nothing limits it.
 */
export async function remainingOf(db: Db, organizationId: string, checks: readonly LimitCheck[], now: Date): Promise<Map<string, number>> {
  if (checks.length === 0) return new Map();
  const rows = await queryRows(db, SPEND, [organizationId, JSON.stringify(checks.map(sqlCheck)), now]);
  return new Map(rows.filter((r) => r.remaining !== null).map((r) => [r.name, Number(r.remaining)]));
}

/** The check as routing_spend() reads it (without what only messages need). */
export function sqlCheck({ interval: _interval, ...check }: LimitCheck) {
  return check;
}

/**
 * What makes two sets of checks read the same figures, for the cache: every field routing_spend()
 * reads (a guardrail's id is in its name, and whether it is the default follows from the id).
 */
function cacheKeyOf(organizationId: string, checks: readonly LimitCheck[]): string {
  let key = organizationId;
  for (const c of checks)
    key += `\n${c.name} ${c.scope} ${c.since} ${c.byok} ${c.limit} ${c.workspace_id ?? ''} ${c.is_default ?? ''} ${c.keys?.join(',') ?? ''}`;
  return key;
}

/**
 * Remaining amounts read for a decision that reserves nothing, kept for USAGE_CACHE_MS: such a
 * decision makes no database round trip while its figures are fresh, and may act on spend up to
 * that old (docs/routing.md). Entries are per organization and set of checks; a reservation or a
 * recording made through this process forgets its organization's. An entry in use is read again
 * in the background in its last quarter, so that decisions in steady use never wait for the read.
 */
export class SpendCache {
  readonly #entries: TtlCache<string, { organizationId: string; remaining: Map<string, number> }>;

  constructor(ttlMs: number, counter?: CacheCounter) {
    this.#entries = new TtlCache(ttlMs, 10_000, () => true, counter, ttlMs / 4);
  }

  async remaining(db: Db, organizationId: string, checks: readonly LimitCheck[], now: Date): Promise<Map<string, number>> {
    const key = cacheKeyOf(organizationId, checks);
    const entry = await this.#entries.get(key, async () => ({ organizationId, remaining: await remainingOf(db, organizationId, checks, now) }));
    return entry.remaining;
  }

  forgetOrganization(organizationId: string): void {
    this.#entries.deleteWhere((entry) => entry.organizationId === organizationId);
  }
}
