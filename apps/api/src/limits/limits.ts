// The counter store and limiter: the one module for counted limits ("so many per so long, per
// caller"). Routing's free-model quota per minute uses it (modules/routing/free-quota.ts); the API's
// rate limits and the identity issue's 429s are meant to call it too, each under a name of its own.
//
// rate-limiter-flexible does the counting, atomically in the store, so that every replica sharing
// the store shares the counts and N concurrent callers against a limit of L get exactly L through:
// - PostgreSQL by default (RateLimiterPostgres on a small pool of its own to the server's database;
//   its table, limiter_counters, is made by our migration, not by the library: `tableCreated`);
// - Redis or Valkey with COUNTER_STORE_URL (RateLimiterRedis through ioredis, the client the
//   library's documentation uses).
// Windows are fixed: a caller's window starts with its first request and lasts the limit's duration
// (not aligned to the clock's minutes). docs/decisions/0017-counter-store.md says why.
//
// A store that cannot be reached is a state, not an error of the request: each rule says what its
// callers get meanwhile (`storeDown`, from COUNTER_STORE_FAILURE_*): `open`, an answer that allows
// and counts nothing (`counted: false`); `closed`, CounterStoreUnavailable, which each caller turns
// into its own documented answer (503 with when to try again). The loss and the return are reported
// once each (`storeState`), never once per request; the clients reconnect on their own, so the
// limits count again as soon as the store is back, without a restart.
import { Redis } from 'ioredis';
import pg from 'pg';
import { RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterStoreAbstract } from 'rate-limiter-flexible';

/** What a limit's callers get while the store cannot be reached (COUNTER_STORE_FAILURE_*). */
export type StoreDownMode = 'open' | 'closed';

/** A named limit: `points` per `durationS` seconds, per key. */
export interface LimitRule {
  points: number;
  durationS: number;
  /** While the store cannot be reached: `open` allows uncounted, `closed` (the default) throws CounterStoreUnavailable. */
  storeDown?: StoreDownMode;
}

/** While the store is unreachable, callers are told to try again after this long: the clients reconnect within it. */
export const STORE_RETRY_AFTER_S = 5;

/** The counter store could not be reached for a limit whose rule fails closed. */
export class CounterStoreUnavailable extends Error {
  readonly retryAfterS = STORE_RETRY_AFTER_S;
  constructor(
    readonly limit: string,
    cause: unknown,
  ) {
    super(`the counter store is unreachable (limit ${limit})`, { cause });
    this.name = 'CounterStoreUnavailable';
  }
}

/** What a limit said of one request. */
export interface LimitAnswer {
  allowed: boolean;
  /** The points the window allows (the rule's, or the caller's override). */
  limit: number;
  /** Points left in the window after this request (0 when refused). */
  remaining: number;
  /** When the window ends and the count starts again. */
  resets_at: Date;
  /** Refused: seconds until the window ends (at least 1); null when allowed, or when waiting cannot help (a limit of 0). */
  retry_after_s: number | null;
  /** false: the store could not be reached and the rule fails open: allowed, nothing counted (nothing to refund). */
  counted: boolean;
}

export type CounterStore = { kind: 'postgres'; databaseUrl: string } | { kind: 'redis'; url: string };

export interface LimitsOptions {
  store: CounterStore;
  /** The named limits and their defaults. */
  rules: Readonly<Record<string, LimitRule>>;
  /** Called for every refusal, with the limit's name (switchyard_limiter_rejections_total). */
  rejected?: (name: string) => void;
  /**
   * The store went away or came back: once per change (not once per request or reconnection
   * attempt). Lost: a call to the store failed, Redis's connection failed, or an idle connection of
   * PostgreSQL's pool did; back: Redis is ready again, or a call to the store succeeded.
   */
  storeState?: (state: 'lost' | 'back', error?: unknown) => void;
}

/** The table our migration "limiter_counters" made for RateLimiterPostgres. */
const TABLE = 'limiter_counters';
/** Connections of the PostgreSQL store's own pool: one statement per consume, held for its round trip only. */
const POOL_MAX = 4;
/** A refund this close to the window's end is skipped: the count starts again anyway, and a late one would open the next window below zero. */
const REFUND_MARGIN_MS = 1_000;
const NAME = /^[a-z][a-z0-9_.-]{0,63}$/;

export class Limits {
  readonly store: CounterStore['kind'];
  readonly #rules: Readonly<Record<string, LimitRule>>;
  readonly #limiters = new Map<string, RateLimiterStoreAbstract>();
  readonly #make: (name: string, rule: LimitRule, first: boolean) => RateLimiterStoreAbstract;
  readonly #close: () => Promise<void>;
  readonly #rejected: (name: string) => void;
  readonly #state: StateReporter;

  private constructor(
    store: CounterStore['kind'],
    options: LimitsOptions,
    make: (name: string, rule: LimitRule, first: boolean) => RateLimiterStoreAbstract,
    close: () => Promise<void>,
    state: StateReporter,
  ) {
    for (const [name, rule] of Object.entries(options.rules)) {
      if (!NAME.test(name)) throw new Error(`limit name ${JSON.stringify(name)}: lowercase letters, digits, _ . - (a letter first)`);
      if (!(Number.isInteger(rule.points) && rule.points >= 0 && rule.durationS > 0))
        throw new Error(`limit ${name}: points must be an integer ≥ 0, durationS > 0`);
    }
    this.store = store;
    this.#rules = options.rules;
    this.#make = make;
    this.#close = close;
    this.#rejected = options.rejected ?? (() => undefined);
    this.#state = state;
  }

  /** Whether the store answered last time it was asked (and no connection has failed since). */
  get available(): boolean {
    return !this.#state.lost;
  }

  /** A call to the store: its failure is the store's (reported once per outage), as CounterStoreUnavailable. */
  async #call<T>(name: string, call: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await call();
    } catch (error) {
      if (error instanceof RateLimiterRes) {
        this.#state.report('back');
        throw error;
      }
      this.#state.report('lost', error);
      throw new CounterStoreUnavailable(name, error);
    }
    this.#state.report('back');
    return result;
  }

  /** Connects to the store (Redis: fails here, naming the URL's host, when it cannot be reached). */
  static async open(options: LimitsOptions): Promise<Limits> {
    const { store } = options;
    const state = new StateReporter(options.storeState);
    if (store.kind === 'postgres') {
      const pool = new pg.Pool({
        connectionString: store.databaseUrl,
        max: POOL_MAX,
        application_name: 'switchyard-limits',
      });
      // An idle connection the server dropped must not crash the process; the next query reconnects.
      pool.on('error', (error) => state.report('lost', error));
      // One check now, so that a wrong database fails the start rather than the first request.
      await pool.query(`SELECT 1 FROM ${TABLE} LIMIT 0`);
      return new Limits(
        'postgres',
        options,
        (name, rule, first) =>
          new RateLimiterPostgres({
            storeClient: pool,
            storeType: 'pool',
            tableName: TABLE,
            tableCreated: true,
            keyPrefix: name,
            points: rule.points,
            duration: rule.durationS,
            // One limiter per server deletes the rows an hour past their window, every 5 minutes.
            clearExpiredByTimeout: first,
          }),
        () => pool.end(),
        state,
      );
    }
    const client = new Redis(store.url, {
      lazyConnect: true,
      // As rate-limiter-flexible's documentation advises: while Redis is away a consume fails at
      // once, instead of queueing until it is back.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectionName: 'switchyard-limits',
    });
    client.on('error', (error) => state.report('lost', error));
    client.on('ready', () => state.report('back'));
    try {
      await client.connect();
    } catch (error) {
      client.disconnect();
      throw new Error(`COUNTER_STORE_URL: cannot reach ${redactedUrl(store.url)}: ${(error as Error).message}`, { cause: error });
    }
    return new Limits(
      'redis',
      options,
      (name, rule) => new RateLimiterRedis({ storeClient: client, keyPrefix: `switchyard:limits:${name}`, points: rule.points, duration: rule.durationS }),
      async () => {
        await client.quit().catch(() => client.disconnect());
      },
      state,
    );
  }

  /** The named limit's rule, with `points` replaced by `limit` when given (e.g. an organization's own setting). */
  #limiter(name: string, limit: number | undefined): { limiter: RateLimiterStoreAbstract; rule: LimitRule } {
    const base = this.#rules[name];
    if (!base) throw new Error(`no limit named ${JSON.stringify(name)}`);
    const rule = limit === undefined ? base : { ...base, points: limit };
    const id = `${name} ${rule.points}`;
    let limiter = this.#limiters.get(id);
    if (!limiter) {
      limiter = this.#make(name, rule, this.#limiters.size === 0);
      this.#limiters.set(id, limiter);
    }
    return { limiter, rule };
  }

  /**
   * Counts `cost` points (default 1) against the named limit for `key`, and says whether they fit.
   * `limit` replaces the rule's points for this call (the count is the key's, whatever the limit).
   * A refused request counts nothing: the store counts it (atomically, which is what makes N
   * concurrent callers get exactly L through) and it is given back at once, so the count never
   * stays above the limit (a limit raised within the window has room at once).
   */
  async consume(name: string, key: string, options: { limit?: number; cost?: number } = {}): Promise<LimitAnswer> {
    const { limiter, rule } = this.#limiter(name, options.limit);
    const now = Date.now();
    if (rule.points === 0) {
      this.#rejected(name);
      return { allowed: false, limit: 0, remaining: 0, resets_at: new Date(now + rule.durationS * 1000), retry_after_s: null, counted: true };
    }
    try {
      const res = await this.#call(name, () => limiter.consume(key, options.cost ?? 1));
      return answer(true, rule, res, now);
    } catch (error) {
      if (error instanceof CounterStoreUnavailable && rule.storeDown === 'open') {
        return {
          allowed: true,
          limit: rule.points,
          remaining: rule.points,
          resets_at: new Date(now + rule.durationS * 1000),
          retry_after_s: null,
          counted: false,
        };
      }
      if (!(error instanceof RateLimiterRes)) throw error;
      this.#rejected(name);
      const refused = answer(false, rule, error, now);
      // A store lost between the two calls leaves the count one refusal high until the window ends: the refusal stands.
      await this.refund(name, key, refused, options.cost ?? 1).catch((error: unknown) => {
        if (!(error instanceof CounterStoreUnavailable)) throw error;
      });
      return refused;
    }
  }

  /**
   * Gives back what `consume` counted (a request refused later, for another reason), unless its
   * window is about to end or has ended, or it counted nothing: then there is nothing to give back.
   * Rejects with CounterStoreUnavailable when the store cannot be reached.
   */
  async refund(name: string, key: string, consumed: Pick<LimitAnswer, 'limit' | 'resets_at'> & { counted?: boolean }, cost = 1): Promise<void> {
    if (consumed.counted === false || consumed.resets_at.getTime() - Date.now() < REFUND_MARGIN_MS) return;
    const { limiter } = this.#limiter(name, consumed.limit);
    await this.#call(name, () => limiter.reward(key, cost));
  }

  /** What is left of the named limit for `key`, counting nothing. */
  async peek(name: string, key: string, options: { limit?: number } = {}): Promise<Omit<LimitAnswer, 'retry_after_s' | 'counted'>> {
    const { limiter, rule } = this.#limiter(name, options.limit);
    const now = Date.now();
    const res = await this.#call(name, () => limiter.get(key));
    const used = res?.consumedPoints ?? 0;
    return {
      allowed: used < rule.points,
      limit: rule.points,
      remaining: Math.max(0, rule.points - used),
      resets_at: new Date(now + (res && res.msBeforeNext > 0 ? res.msBeforeNext : rule.durationS * 1000)),
    };
  }

  /** Closes the store's connections (on shutdown). */
  close(): Promise<void> {
    return this.#close();
  }
}

function answer(allowed: boolean, rule: LimitRule, res: RateLimiterRes, now: number): LimitAnswer {
  const ms = res.msBeforeNext >= 0 ? res.msBeforeNext : rule.durationS * 1000;
  return {
    allowed,
    limit: rule.points,
    remaining: allowed ? Math.max(0, rule.points - res.consumedPoints) : 0,
    resets_at: new Date(now + ms),
    retry_after_s: allowed ? null : Math.max(1, Math.ceil(ms / 1000)),
    counted: true,
  };
}

/** Reports the store's state changes only: the first error after it worked, and its return. */
class StateReporter {
  lost = false;
  constructor(private readonly onChange: LimitsOptions['storeState']) {}
  report(state: 'lost' | 'back', error?: unknown): void {
    if ((state === 'lost') === this.lost) return;
    this.lost = state === 'lost';
    this.onChange?.(state, error);
  }
}

/** A URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured URL';
  }
}
