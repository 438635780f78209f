// The order of an organization's members (membership ids, oldest first), kept in memory for at most
// `ttlMs`. GET /organization/members pages with offset/limit: in PostgreSQL an OFFSET walks every
// skipped index entry and a total is a count of them all, so a deep page of a large organization
// cost milliseconds of database time per request. With the order at hand, a page is a slice of it
// and the rows are read fresh by primary key. Member writes through this process forget the
// organization's order at once; writes by another process as soon as their notification arrives
// (cache-events.ts), and within `ttlMs` even if it is lost.
import { queryRows, type Db } from '@switchyard/db';
import { z } from 'zod';
import { tenantStatement, tenantValues } from '../../access/tenancy.js';
import { TtlCache } from '../../lib/cache.js';
import type { CacheCounter } from '../../lib/metrics.js';

/**
 * The order as one row: the ids joined by commas (UUIDs hold none), and how many. One row rather than
 * one per member: the order of a 100,000-member organization (reloaded every CACHE_TTL_MS while it
 * is read) was 100,000 rows for node-postgres and the row schema to build and parse.
 */
const MEMBER_ORDER = tenantStatement(
  'organization',
  (tenant) => `
  SELECT count(*)::int AS n, coalesce(string_agg(id::text, ',' ORDER BY created_at, id), '') AS ids
  FROM (SELECT id, created_at FROM organization_members WHERE ${tenant.where()} ORDER BY created_at, id LIMIT :limit) m`,
  z.object({ n: z.number().int(), ids: z.string() }),
);

export class MemberOrderCache {
  readonly #orders: TtlCache<string, string[] | null>;

  /**
   * `maxMembers`: larger organizations are paged in the database (their order would cost too much
   * memory): `ids` answers null for them.
   */
  constructor(
    ttlMs: number,
    private readonly limits = { maxOrganizations: 1_000, maxMembers: 100_000 },
    counter?: CacheCounter,
  ) {
    this.#orders = new TtlCache(ttlMs, limits.maxOrganizations, undefined, counter);
  }

  /** Membership ids of the organization, oldest first; null past `maxMembers`. */
  ids(db: Db, organizationId: string): Promise<string[] | null> {
    const { maxMembers } = this.limits;
    return this.#orders.get(organizationId, async () => {
      const [order] = await queryRows(db, MEMBER_ORDER, tenantValues(MEMBER_ORDER, { organizationId }, { limit: maxMembers + 1 }));
      if (!order || order.n > maxMembers) return null;
      return order.n === 0 ? [] : order.ids.split(',');
    });
  }

  /** After a member of the organization was added or removed. */
  forget(organizationId: string): void {
    this.#orders.delete(organizationId);
  }

  /** Forgets every organization's order. */
  clear(): void {
    this.#orders.clear();
  }
}
