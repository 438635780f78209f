// Values read into memory and reused for a short time: the one mechanism behind the key and
// member-order caches (the catalog keeps a whole snapshot instead, reloaded in the background).
// Entries are dropped when a change is announced (cache-events.ts); the TTL bounds how long a
// change whose announcement was lost can go unseen.
import type { CacheCounter } from './metrics.js';

type Entry<V> = {
  value: Promise<V>;
  until: number;
  settled?: { value: V };
  /** Its read again, begun in its last refreshAheadMs (once: a failed refresh is not tried again). */
  refreshed?: boolean;
  /** That read while under way. */
  refreshing?: Promise<V>;
};

/**
 * Values by key, each reused for at most `ttlMs` after it was read (0: read every time). Concurrent
 * misses for one key share one read. A read that fails, or whose value `keep` refuses, is not kept.
 * When `maxEntries` are held, expired entries go first, then the oldest half.
 *
 * With `refreshAheadMs`, a value used in the last `refreshAheadMs` of its time is read again in the
 * background, and the new value replaces it once read (unless the key was forgotten meanwhile): a
 * key in steady use never makes a caller wait for its read, and no value is used longer than
 * before (`ttlMs` after its read began). A failed refresh leaves the value to expire as usual. A
 * value that expires while its refresh is under way is answered by that refresh, not by a read of
 * its own: however slow the reads, one begins at most once per `ttlMs - refreshAheadMs` for a key.
 */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, Entry<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly keep: (value: V) => boolean = () => true,
    /** Told about every lookup (metrics). */
    private readonly counter?: CacheCounter,
    private readonly refreshAheadMs = 0,
  ) {}

  get(key: K, read: () => Promise<V>): Promise<V> {
    if (this.ttlMs <= 0) {
      this.counter?.miss();
      return read();
    }
    const now = performance.now();
    const cached = this.#entries.get(key);
    if (cached && cached.until > now) {
      this.counter?.hit();
      if (cached.settled && !cached.refreshed && cached.until - now <= this.refreshAheadMs) this.#refresh(key, cached, read, now);
      return cached.value;
    }
    if (cached?.refreshing) {
      this.counter?.miss();
      return cached.refreshing;
    }
    this.counter?.miss();
    if (this.#entries.size >= this.maxEntries) this.#evict(now);
    const value = read();
    const entry: Entry<V> = { value, until: now + this.ttlMs };
    this.#entries.set(key, entry);
    const drop = () => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    };
    value.then((v) => {
      entry.settled = { value: v };
      if (!this.keep(v)) drop();
    }, drop);
    return value;
  }

  /** Reads `key` again for `stale`, which stays in use until the new value is read. */
  #refresh(key: K, stale: Entry<V>, read: () => Promise<V>, now: number): void {
    stale.refreshed = true;
    const reading = read();
    stale.refreshing = reading;
    reading.then(
      (v) => {
        stale.refreshing = undefined;
        // Forgotten (or replaced) meanwhile: what was read may predate the change.
        if (this.#entries.get(key) !== stale || !this.keep(v)) return;
        this.#entries.set(key, { value: Promise.resolve(v), until: now + this.ttlMs, settled: { value: v } });
      },
      () => {
        stale.refreshing = undefined;
      },
    );
  }

  /** After what `key` names changed (here or elsewhere): the next get reads it again. */
  delete(key: K): void {
    this.#entries.delete(key);
  }

  /** Forgets every value `match` picks, and every read still under way (it may be one of them). */
  deleteWhere(match: (value: V) => boolean): void {
    for (const [key, entry] of this.#entries) if (!entry.settled || match(entry.settled.value)) this.#entries.delete(key);
  }

  /** Forgets everything (e.g. after notifications of changes may have been missed). */
  clear(): void {
    this.#entries.clear();
  }

  #evict(now: number): void {
    for (const [key, entry] of this.#entries) if (entry.until <= now) this.#entries.delete(key);
    let excess = this.#entries.size - this.maxEntries / 2;
    for (const key of this.#entries.keys()) {
      if (excess-- <= 0) break;
      this.#entries.delete(key);
    }
  }
}
