// The API's rate limits (docs/rate-limits.md): requests per minute per tenant key, and per
// organization for all its keys together. Platform keys are not limited. The counts are the
// limiter's (limits.ts), in the counter store every replica shares, under two names of their own.
//
// A round trip to the store on every request would cost more than many of the requests themselves
// (GET /key answers from memory). So each process takes its points from the store in allowances: a
// share of the limit at a time (1% of it, at most 1,000, never more than an eighth of what the store
// has left), and spends them locally, without a round trip, until they run out or the window ends.
// Points are taken from the store before they are spent, so all replicas together never let more
// than the limit through in a window; an allowance left unspent when its window ends is lost, so a
// replica can let through up to 1% of the limit fewer. Limits under 200 a minute take one point at a
// time: exact. A refusal is kept until its window ends, without asking the store again.
// docs/decisions/0033-api-rate-limits-in-allowances.md says why, with the measurements.
//
// While the store cannot be reached, COUNTER_STORE_FAILURE_API_RATE_LIMITS decides: open (the
// default), requests pass uncounted (the store is asked again a second later); closed, a request
// that needs points from the store is 503 with Retry-After (points already held are still spent).
import type { Db } from '@switchyard/db';
import type { Actor } from '../access/callers.js';
import { TooManyRequests, Unavailable } from '../lib/errors.js';
import type { OrganizationLimitSettings } from './limit-settings.js';
import { CounterStoreUnavailable, type LimitRule, type Limits, type StoreDownMode } from './limits.js';

/** The limiter's names of the two limits (their store keys, the rejections metric's `limit` label). */
export const API_KEY_MINUTE = 'api_key_minute';
export const API_ORGANIZATION_MINUTE = 'api_organization_minute';
type Name = typeof API_KEY_MINUTE | typeof API_ORGANIZATION_MINUTE;

/**
 * The two rules, for Limits.open: the server's defaults per 60 s (API_REQUESTS_PER_MINUTE_PER_KEY,
 * _PER_ORGANIZATION). They fail closed in the limiter: what an absent store means (pass or 503) is
 * decided here, by COUNTER_STORE_FAILURE_API_RATE_LIMITS.
 */
export function apiRateLimitRules(perMinute: { key: number; organization: number }): Record<Name, LimitRule> {
  return {
    [API_KEY_MINUTE]: { points: perMinute.key, durationS: 60, storeDown: 'closed' },
    [API_ORGANIZATION_MINUTE]: { points: perMinute.organization, durationS: 60, storeDown: 'closed' },
  };
}

/** An allowance is this share of the limit... */
const SHARE = 100;
/** ...but never more than this many points... */
const MAX_ALLOWANCE = 1_000;
/** ...nor more than this share of what the store had left (so that replicas near the limit share what remains). */
const SHARE_OF_REMAINING = 8;
/** While the store cannot be reached, requests pass (and are not counted) for this long before it is asked again. */
const STORE_DOWN_PASS_MS = 1_000;
/** Held entries whose window and refusal have ended are dropped at most this often. */
const SWEEP_MS = 60_000;

/** How many points to take from the store at once. */
export function allowanceOf(limit: number, storeRemaining: number | null): number {
  const share = Math.min(MAX_ALLOWANCE, Math.floor(limit / SHARE));
  const left = storeRemaining ?? limit;
  return Math.max(1, Math.min(share, Math.floor(left / SHARE_OF_REMAINING)));
}

/** What this process holds of one caller's limit. */
interface Held {
  name: Name;
  /** The key's or the organization's id. */
  id: string;
  organizationId: string;
  /** The limit its points were taken under. */
  limit: number;
  /** Points taken from the store, not spent yet: good until `windowEnds`. */
  points: number;
  windowEnds: number;
  /** What the store had left after the last take (sizes the next allowance). */
  storeRemaining: number | null;
  /** Refused until then (the window's end), without asking the store. */
  refusedUntil: number;
  /** The store could not be reached: requests pass until then. */
  passUntil: number;
  /** A take from the store under way: the caller's other requests wait for it. */
  taking?: Promise<void>;
}

export class ApiRateLimits {
  readonly #held = new Map<string, Held>();
  #swept = Date.now();

  constructor(
    private readonly limits: Limits,
    /** The server's defaults (API_REQUESTS_PER_MINUTE_PER_KEY, _PER_ORGANIZATION). */
    private readonly defaults: { key: number; organization: number },
    private readonly settings: OrganizationLimitSettings,
    /** Every refusal (switchyard_limiter_rejections_total), with the limit's name. */
    private readonly rejected: (name: Name) => void,
    /** The store failed (logged by the limiter's store state, once per change; this sees every failure). */
    private readonly storeFailed: (error: unknown) => void,
    /** While the store cannot be reached (COUNTER_STORE_FAILURE_API_RATE_LIMITS): open, requests pass; closed, 503. */
    private readonly storeDown: StoreDownMode = 'open',
  ) {}

  /**
   * Counts one request of a tenant key against its key's and its organization's limits: nothing
   * (no promise) when both have points held here, else a promise that rejects with 429 when either
   * limit is reached (a request refused by its organization's limit gives its key's point back).
   */
  admit(db: Db, actor: Actor): Promise<void> | undefined {
    const now = Date.now();
    const key = this.#held.get(`${API_KEY_MINUTE} ${actor.key.id}`);
    const organization = this.#held.get(`${API_ORGANIZATION_MINUTE} ${actor.organizationId}`);
    if (key && organization && spendable(key, now) && spendable(organization, now)) {
      key.points--;
      organization.points--;
      return undefined;
    }
    return this.#admitSlowly(db, actor);
  }

  async #admitSlowly(db: Db, actor: Actor): Promise<void> {
    const key = await this.#take(db, API_KEY_MINUTE, actor.key.id, actor.organizationId);
    if (key !== true) throw this.#refusal(API_KEY_MINUTE, key);
    const organization = await this.#take(db, API_ORGANIZATION_MINUTE, actor.organizationId, actor.organizationId);
    if (organization !== true) {
      this.#giveBack(API_KEY_MINUTE, actor.key.id);
      throw this.#refusal(API_ORGANIZATION_MINUTE, organization);
    }
  }

  /** One point of the named limit for `id`: from what is held, or from the store. */
  async #take(db: Db, name: Name, id: string, organizationId: string): Promise<true | { limit: number; refusedUntil: number }> {
    const entry = `${name} ${id}`;
    for (;;) {
      const now = Date.now();
      this.#sweep(now);
      let held = this.#held.get(entry);
      if (held?.taking) {
        await held.taking;
        continue;
      }
      if (held && now < held.passUntil) return true;
      if (held && spendable(held, now)) {
        held.points--;
        return true;
      }
      if (held && now < held.refusedUntil) return { limit: held.limit, refusedUntil: held.refusedUntil };
      if (!held) {
        held = { name, id, organizationId, limit: 0, points: 0, windowEnds: 0, storeRemaining: null, refusedUntil: 0, passUntil: 0 };
        this.#held.set(entry, held);
      }
      const taking = this.#fromStore(db, name, id, held);
      held.taking = taking;
      try {
        await taking;
      } finally {
        held.taking = undefined;
      }
    }
  }

  /** Takes an allowance from the store, or notes the refusal until the window ends. */
  async #fromStore(db: Db, name: Name, id: string, held: Held): Promise<void> {
    const settings = await this.settings.of(db, held.organizationId);
    const limit =
      (name === API_KEY_MINUTE ? settings.apiRequestsPerMinutePerKey : settings.apiRequestsPerMinute) ??
      this.defaults[name === API_KEY_MINUTE ? 'key' : 'organization'];
    const now = Date.now();
    // Points of an ended window, or taken under another limit, are not spent.
    if (now >= held.windowEnds || limit !== held.limit) {
      held.points = 0;
      held.storeRemaining = null;
    }
    held.limit = limit;
    try {
      const cost = allowanceOf(limit, held.storeRemaining);
      let answer = await this.limits.consume(name, id, { limit, cost });
      let taken = cost;
      // Less is left than the allowance (other replicas took it): one point at a time, exact.
      if (!answer.allowed && cost > 1) {
        answer = await this.limits.consume(name, id, { limit, cost: 1 });
        taken = 1;
      }
      if (answer.allowed) {
        held.points += taken;
        held.windowEnds = answer.resets_at.getTime();
        held.storeRemaining = answer.remaining;
        held.refusedUntil = 0;
      } else {
        held.points = 0;
        held.refusedUntil = answer.resets_at.getTime();
      }
    } catch (error) {
      this.storeFailed(error);
      if (this.storeDown === 'closed') {
        const retryAfterS = error instanceof CounterStoreUnavailable ? error.retryAfterS : 1;
        throw new Unavailable('the counter store is unreachable: the API rate limits cannot count', retryAfterS, {
          reason: 'the API rate limits cannot be checked now (the counter store is unreachable); try again after Retry-After',
        });
      }
      held.passUntil = Date.now() + STORE_DOWN_PASS_MS;
    }
  }

  #giveBack(name: Name, id: string): void {
    const held = this.#held.get(`${name} ${id}`);
    if (held && Date.now() < held.windowEnds) held.points++;
  }

  #refusal(name: Name, refused: { limit: number; refusedUntil: number }): TooManyRequests {
    this.rejected(name);
    const retryAfterS = Math.max(1, Math.ceil((refused.refusedUntil - Date.now()) / 1000));
    const whose = name === API_KEY_MINUTE ? 'key' : 'organization';
    return new TooManyRequests(`the ${whose}'s API rate limit: ${refused.limit} requests per minute`, retryAfterS, {
      reason: `rate limit exceeded: ${refused.limit} requests per minute for the ${whose === 'key' ? 'key' : "organization's keys together"}`,
      limit: whose,
      requests_per_minute: refused.limit,
      resets_at: new Date(refused.refusedUntil).toISOString(),
    });
  }

  /**
   * The organization's settings changed: what is held for it and its keys is given back to the
   * store, and taken again under the new limits.
   */
  forgetOrganization(organizationId: string): Promise<void> {
    return this.#release((held) => held.organizationId === organizationId);
  }

  /** Gives everything held back to the store (announcements were missed; the server stops). */
  clear(): Promise<void> {
    return this.#release(() => true);
  }

  async #release(which: (held: Held) => boolean): Promise<void> {
    const now = Date.now();
    const refunds: Promise<void>[] = [];
    for (const [entry, held] of this.#held) {
      if (held.taking || !which(held)) continue;
      this.#held.delete(entry);
      if (held.points > 0 && now < held.windowEnds) {
        const consumed = { limit: held.limit, resets_at: new Date(held.windowEnds) };
        refunds.push(this.limits.refund(held.name, held.id, consumed, held.points).catch(this.storeFailed));
      }
    }
    await Promise.all(refunds);
  }

  #sweep(now: number): void {
    if (now - this.#swept < SWEEP_MS) return;
    this.#swept = now;
    for (const [entry, held] of this.#held) {
      if (!held.taking && now >= held.windowEnds && now >= held.refusedUntil && now >= held.passUntil) this.#held.delete(entry);
    }
  }
}

function spendable(held: Held, now: number): boolean {
  return held.points > 0 && now < held.windowEnds;
}
