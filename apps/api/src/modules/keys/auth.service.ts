import type { ApiKey, Db } from '@switchyard/db';
import { TtlCache } from '../../cache.js';
import type { CacheCounter } from '../../metrics.js';
import { Forbidden, Unauthorized } from '../../errors.js';

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
 * cached (a key created elsewhere works at once). `ttlMs` 0 reads every time. Figures that move
 * (usage) are never read from these rows.
 */
export class KeyCache {
  readonly #rows: TtlCache<string, ApiKey | null>;

  constructor(ttlMs: number, counter?: CacheCounter) {
    this.#rows = new TtlCache(ttlMs, 10_000, (row) => row !== null, counter);
  }

  find(db: Db, hash: string): Promise<ApiKey | null> {
    return this.#rows.get(hash, () => db.apiKey.findUnique({ where: { hash } }));
  }

  /** Forgets a key after this process changed it, so that the change applies to the next request. */
  forget(hash: string): void {
    this.#rows.delete(hash);
  }
}

/** The caller of a key; 401 unless it is valid, enabled and unexpired, 403 when `management` and it is not a management key. */
export async function authenticate(
  db: Db,
  keys: KeyCache,
  keyHash: string | null,
  now: Date,
  options: { management?: boolean } = {},
): Promise<Actor> {
  if (!keyHash) throw new Unauthorized('no bearer token');
  const key = await keys.find(db, keyHash);
  if (!key) throw new Unauthorized('unknown key');
  if (key.disabled) throw new Unauthorized('disabled key');
  if (key.expires_at && key.expires_at.getTime() <= now.getTime()) throw new Unauthorized('expired key');
  // Management keys only: others get 403 with the spec's message.
  if (options.management && !key.is_management_key) throw new Forbidden();
  return { key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
}
