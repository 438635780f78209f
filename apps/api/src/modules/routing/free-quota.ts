// The free-model quota per minute, per key: how many requests to free models a key may make in a
// minute, counted by the limiter (limits/) in the counter store that every replica shares. The
// limit is the organization's settings row (organization_settings.free_model_requests_per_minute),
// else FREE_MODEL_REQUESTS_PER_MINUTE. A key's minute starts with its first free-model request
// (a fixed window of 60 s, not the clock's minute). While the counter store cannot be reached, the
// quota does as COUNTER_STORE_FAILURE_FREE_MODELS says: closed (the default), take() answers the
// store's absence and routing refuses with limits_unavailable; open, the request is allowed and
// not counted.
import type { Db } from '@switchyard/db';
import { CounterStoreUnavailable, type LimitAnswer, type LimitRule, type Limits, type StoreDownMode } from '../../limits/limits.js';
import type { OrganizationLimitSettings } from '../../limits/limit-settings.js';

/** The limiter's name of the quota (its store keys, the rejections metric's `limit` label). */
export const FREE_MODEL_MINUTE = 'free_model_minute';

/** The quota's rule, for Limits.open: `perMinute` (FREE_MODEL_REQUESTS_PER_MINUTE) per 60 s; `storeDown` from COUNTER_STORE_FAILURE_FREE_MODELS. */
export const freeModelMinuteRule = (perMinute: number, storeDown: StoreDownMode): LimitRule => ({ points: perMinute, durationS: 60, storeDown });

/** Where a key's limit came from, as the refusal and `--explain` name it. */
export type QuotaSource = 'organization' | 'default';

export interface MinuteTaken extends LimitAnswer {
  source: QuotaSource;
  /** The key it was counted for (for the refund). */
  keyId: string;
}

/** The counter store could not be reached and the quota fails closed: the decision is refused, to be asked again after `retry_after_s`. */
export interface StoreAway {
  unavailable: true;
  retry_after_s: number;
}

/** The quota, with each organization's setting read through the settings row's cache (settings/limit-settings.ts). */
export class FreeModelQuota {
  constructor(
    private readonly limits: Limits,
    /** FREE_MODEL_REQUESTS_PER_MINUTE. */
    private readonly defaultPerMinute: number,
    private readonly settings: OrganizationLimitSettings,
    /** A refund the store did not take (logged; the count is then one too high until the window ends). */
    private readonly refundFailed: (error: unknown) => void,
  ) {}

  /** The organization's limit per minute, and whether its settings row or the server's default set it. */
  async limitOf(db: Db, organizationId: string): Promise<{ perMinute: number; source: QuotaSource }> {
    const { freeModelRequestsPerMinute: perMinute } = await this.settings.of(db, organizationId);
    return perMinute === null ? { perMinute: this.defaultPerMinute, source: 'default' } : { perMinute, source: 'organization' };
  }

  /** Counts one free-model request of the key against its organization's limit (uncounted while the store is away and the quota fails open). */
  async take(db: Db, key: { id: string; organization_id: string }): Promise<MinuteTaken | StoreAway> {
    const { perMinute, source } = await this.limitOf(db, key.organization_id);
    try {
      const answer = await this.limits.consume(FREE_MODEL_MINUTE, key.id, { limit: perMinute });
      return { ...answer, source, keyId: key.id };
    } catch (error) {
      if (error instanceof CounterStoreUnavailable) return { unavailable: true, retry_after_s: error.retryAfterS };
      throw error;
    }
  }

  /** Gives back an allowed request that was refused later for another reason: it made no free-model request. */
  async refund(taken: MinuteTaken): Promise<void> {
    if (!taken.allowed || !taken.counted) return;
    await this.limits.refund(FREE_MODEL_MINUTE, taken.keyId, taken).catch(this.refundFailed);
  }
}
