// Values read into memory and reused for a short time: the one mechanism behind the key and
// member-order caches (the catalog keeps a whole snapshot instead, reloaded in the background).
// Entries are dropped when a change is announced (cache-events.ts); the TTL bounds how long a
// change whose announcement was lost can go unseen.

/**
 * Values by key, each reused for at most `ttlMs` after it was read (0: read every time). Concurrent
 * misses for one key share one read. A read that fails, or whose value `keep` refuses, is not kept.
 * When `maxEntries` are held, expired entries go first, then the oldest half.
 */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, { value: Promise<V>; until: number; settled?: { value: V } }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly keep: (value: V) => boolean = () => true,
  ) {}

  get(key: K, read: () => Promise<V>): Promise<V> {
    if (this.ttlMs <= 0) return read();
    const now = performance.now();
    const cached = this.#entries.get(key);
    if (cached && cached.until > now) return cached.value;
    if (this.#entries.size >= this.maxEntries) this.#evict(now);
    const value = read();
    const entry: { value: Promise<V>; until: number; settled?: { value: V } } = { value, until: now + this.ttlMs };
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
