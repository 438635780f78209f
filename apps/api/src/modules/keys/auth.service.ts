import type { ApiKey, Db } from '@switchyard/db';
import { Unauthorized } from '../../errors.js';

/** The authenticated caller: its key (row), organization, workspace and user. */
export interface Actor {
  key: ApiKey;
  organizationId: string;
  workspaceId: string;
  userId: string;
}

/**
 * Key rows by hash, each kept for at most `ttlMs` after it was read, so that most requests
 * authenticate without a query. A key disabled, changed or deleted by another process is honoured
 * within `ttlMs`; a change made through this process (`forget`) at once. Unknown hashes are never
 * cached (a key created elsewhere works at once), and concurrent misses for one hash share one
 * query. `ttlMs` 0 reads every time. Figures that move (usage) are never read from these rows.
 */
export class KeyCache {
  readonly #entries = new Map<string, { row: Promise<ApiKey | null>; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async find(db: Db, hash: string): Promise<ApiKey | null> {
    if (this.ttlMs <= 0) return db.apiKey.findUnique({ where: { hash } });
    const now = performance.now();
    const cached = this.#entries.get(hash);
    if (cached && cached.until > now) return cached.row;
    if (this.#entries.size >= this.maxEntries) this.#evict(now);
    const row = db.apiKey.findUnique({ where: { hash } });
    const entry = { row, until: now + this.ttlMs };
    this.#entries.set(hash, entry);
    const drop = () => {
      if (this.#entries.get(hash) === entry) this.#entries.delete(hash);
    };
    row.then((found) => found ?? drop(), drop);
    return row;
  }

  /** Forgets a key after this process changed it, so that the change applies to the next request. */
  forget(hash: string): void {
    this.#entries.delete(hash);
  }

  #evict(now: number): void {
    for (const [hash, entry] of this.#entries) if (entry.until <= now) this.#entries.delete(hash);
    // Still full of live entries: drop the oldest half (Map iterates in insertion order).
    let excess = this.#entries.size - this.maxEntries / 2;
    for (const hash of this.#entries.keys()) {
      if (excess-- <= 0) break;
      this.#entries.delete(hash);
    }
  }
}

export async function authenticate(db: Db, keys: KeyCache, keyHash: string | null, now: Date): Promise<Actor> {
  if (!keyHash) throw new Unauthorized('no bearer token');
  const key = await keys.find(db, keyHash);
  if (!key) throw new Unauthorized('unknown key');
  if (key.disabled) throw new Unauthorized('disabled key');
  if (key.expires_at && key.expires_at.getTime() <= now.getTime()) throw new Unauthorized('expired key');
  return { key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
}
