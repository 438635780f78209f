// The order of an organization's members (membership ids, oldest first), kept in memory for at most
// `ttlMs`. GET /organization/members pages with offset/limit: in PostgreSQL an OFFSET walks every
// skipped index entry and a total is a count of them all, so a deep page of a large organization
// cost milliseconds of database time per request. With the order at hand, a page is a slice of it
// and the rows are read fresh by primary key. Member writes through this process forget the
// organization's order at once; writes by another process show within `ttlMs`.
import { queryRows, statement, type Db } from '@switchyard/db';

const MEMBER_ORDER = statement(`
  SELECT id FROM organization_members WHERE organization_id = $1 ORDER BY created_at, id LIMIT $2`);

export class MemberOrderCache {
  readonly #entries = new Map<string, { ids: Promise<string[] | null>; until: number }>();

  /**
   * `maxMembers`: larger organizations are paged in the database (their order would cost too much
   * memory): `ids` answers null for them.
   */
  constructor(
    private readonly ttlMs: number,
    private readonly limits = { maxOrganizations: 1_000, maxMembers: 100_000 },
  ) {}

  /** Membership ids of the organization, oldest first; null past `maxMembers`. */
  async ids(db: Db, organizationId: string): Promise<string[] | null> {
    const now = performance.now();
    const cached = this.#entries.get(organizationId);
    if (cached && cached.until > now) return cached.ids;
    const { maxMembers, maxOrganizations } = this.limits;
    const ids = queryRows<{ id: string }>(db, MEMBER_ORDER, [organizationId, maxMembers + 1]).then((rows) =>
      rows.length > maxMembers ? null : rows.map((r) => r.id),
    );
    if (this.ttlMs <= 0) return ids;
    if (this.#entries.size >= maxOrganizations) this.#entries.delete(this.#entries.keys().next().value!);
    const entry = { ids, until: now + this.ttlMs };
    this.#entries.set(organizationId, entry);
    ids.catch(() => {
      if (this.#entries.get(organizationId) === entry) this.#entries.delete(organizationId);
    });
    return ids;
  }

  /** After a member of the organization was added or removed through this process. */
  forget(organizationId: string): void {
    this.#entries.delete(organizationId);
  }
}
