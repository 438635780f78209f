// The limits an organization's settings row sets (organization_settings): the free-model quota per
// minute (routing) and the API's rate limits (limits/api-rate-limits.ts). Each organization's row is
// kept for at most CACHE_TTL_MS; a write to the row is announced as "routing:<organization id>"
// (migration "routing_decisions") and forgets the organization's entry at once (cache-events.ts).
import type { Db } from '@switchyard/db';
import { tenantWhere } from '../access/tenancy.js';
import { TtlCache } from '../lib/cache.js';
import type { CacheCounter } from '../lib/metrics.js';

/** The row's limit fields; null where the row (or its field) leaves the server's default. */
export interface LimitSettings {
  organizationId: string;
  freeModelRequestsPerMinute: number | null;
  apiRequestsPerMinutePerKey: number | null;
  apiRequestsPerMinute: number | null;
}

export class OrganizationLimitSettings {
  readonly #rows: TtlCache<string, LimitSettings>;

  constructor(ttlMs: number, counter?: CacheCounter) {
    this.#rows = new TtlCache(ttlMs, 10_000, () => true, counter);
  }

  of(db: Db, organizationId: string): Promise<LimitSettings> {
    return this.#rows.get(organizationId, async () => {
      const row = await db.organizationSettings.findUnique({
        where: tenantWhere({ organizationId }),
        select: { free_model_requests_per_minute: true, api_requests_per_minute_per_key: true, api_requests_per_minute: true },
      });
      return {
        organizationId,
        freeModelRequestsPerMinute: row?.free_model_requests_per_minute ?? null,
        apiRequestsPerMinutePerKey: row?.api_requests_per_minute_per_key ?? null,
        apiRequestsPerMinute: row?.api_requests_per_minute ?? null,
      };
    });
  }

  forgetOrganization(organizationId: string): void {
    this.#rows.deleteWhere((entry) => entry.organizationId === organizationId);
  }

  clear(): void {
    this.#rows.clear();
  }
}
