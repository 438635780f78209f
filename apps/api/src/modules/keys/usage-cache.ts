// The spend figures GET /key shows, kept in memory for at most USAGE_CACHE_MS (250 ms by default,
// 1 s at most: GET /key shows a recorded generation's spend within a second, docs/hot-paths.md).
// Read from PostgreSQL on every request, they were GET /key's only query and cost as much CPU in
// the database as the rest of the answer in the server (docs/decisions/0010-key-usage-cache.md). A
// generation recorded through this process forgets its key's entry before its call is answered, so
// this process shows it at once; one recorded through another replica shows within USAGE_CACHE_MS
// (recording, the hottest write, announces nothing).
import type { Db } from '@switchyard/db';
import { TtlCache } from '../../lib/cache.js';
import type { CacheCounter } from '../../lib/metrics.js';
import { usageOf, type KeyUsageRow } from './keys-queries.js';
import { utcDay } from './periods.js';

interface Entry {
  /** The UTC day (its start, in ms) the figures' periods were counted from (they restart at midnight). */
  day: number;
  row: KeyUsageRow | undefined;
}

export class UsageCache {
  readonly #entries: TtlCache<string, Entry>;

  constructor(ttlMs: number, counter?: CacheCounter) {
    // A key that is gone (no row) is not kept.
    this.#entries = new TtlCache(ttlMs, 10_000, (entry) => entry.row !== undefined, counter);
  }

  /** The key's usage row as of `now`; undefined when there is no such key. */
  async of(db: Db, keyId: string, now: Date): Promise<KeyUsageRow | undefined> {
    const day = utcDay(now).getTime();
    const read = async (): Promise<Entry> => ({ day, row: await usageOf(db, keyId, now) });
    let entry = await this.#entries.get(keyId, read);
    if (entry.day !== day) {
      // Counted for another day's periods (read before midnight): count again.
      this.#entries.delete(keyId);
      entry = await this.#entries.get(keyId, read);
    }
    return entry.row;
  }

  /** After a generation of the key was recorded here: the next GET /key reads its figures again. */
  forget(keyId: string): void {
    this.#entries.delete(keyId);
  }
}
