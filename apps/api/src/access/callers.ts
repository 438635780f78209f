// Who is calling: every request's bearer key resolves to one of two planes.
// - A tenant: a regular or management key of one organization (`Actor`).
// - The platform: a platform key, which belongs to no organization (`PlatformActor`).
// authenticate() is the only place that turns a key into a caller; rules.ts says what each may do.
import type { ApiKey, Db, PlatformKey } from '@switchyard/db';
import { TtlCache } from '../cache.js';
import type { CacheCounter } from '../metrics.js';
import { Unauthorized } from '../errors.js';
import type { AccessTokens } from '../modules/auth/access-tokens.js';

/** A tenant caller: its key (row), organization, workspace and user. */
export interface Actor {
  kind: 'tenant';
  key: ApiKey;
  organizationId: string;
  workspaceId: string;
  userId: string;
}

/** A platform caller: one of the platform's own services or operators. */
export interface PlatformActor {
  kind: 'platform';
  keyId: string;
  name: string;
}

export type Caller = Actor | PlatformActor;

/** What a bearer hash names: a tenant key (with its organization's standing) or a platform key. */
type KeyRecord = { kind: 'tenant'; key: ApiKey; organizationDisabled: boolean } | { kind: 'platform'; key: PlatformKey } | null;

/**
 * Key rows by hash, each kept for at most `ttlMs` after it was read, so that most requests
 * authenticate without a query. A change made through this process (`forget`,
 * `forgetOrganization`) applies at once; a key or organization disabled, changed or deleted by
 * another process as soon as its announcement arrives (cache-events.ts), and within `ttlMs` even if
 * that announcement is lost. Unknown hashes are never cached (a key created elsewhere works at
 * once). `ttlMs` 0 reads every time. Figures that move (usage) are never read from these rows. A
 * key in use is read again in the background in the last quarter of its time (no request waits).
 */
export class KeyCache {
  readonly #rows: TtlCache<string, KeyRecord>;

  constructor(ttlMs: number, counter?: CacheCounter) {
    this.#rows = new TtlCache(ttlMs, 10_000, (row) => row !== null, counter, ttlMs / 4);
  }

  find(db: Db, hash: string): Promise<KeyRecord> {
    return this.#rows.get(hash, async () => {
      const key = await db.apiKey.findUnique({ where: { hash }, include: { organization: { select: { disabled_at: true } } } });
      if (key) {
        const { organization, ...row } = key;
        return { kind: 'tenant', key: row, organizationDisabled: organization.disabled_at !== null };
      }
      const platform = await db.platformKey.findUnique({ where: { hash } });
      return platform ? { kind: 'platform', key: platform } : null;
    });
  }

  /** Forgets a key after it changed (here or elsewhere), so that the change applies to the next request. */
  forget(hash: string): void {
    this.#rows.delete(hash);
  }

  /** Forgets every key of an organization (after it was disabled). */
  forgetOrganization(organizationId: string): void {
    this.#rows.deleteWhere((row) => row?.kind === 'tenant' && row.key.organization_id === organizationId);
  }

  /** Forgets every key. */
  clear(): void {
    this.#rows.clear();
  }
}

/**
 * The caller of a key; 401 unless the key is known, enabled, unexpired and (tenant) its organization
 * enabled. An access token of the token exchange (`accessToken`, verified by `tokens`) is the key it
 * acts as, under the same checks, until it expires: it never has more rights than that key.
 */
export async function authenticate(
  db: Db,
  keys: KeyCache,
  keyHash: string | null,
  now: Date,
  accessToken?: string | null,
  tokens?: AccessTokens,
): Promise<Caller> {
  if (!keyHash) throw new Unauthorized('no bearer token');
  const grant = accessToken && tokens ? await tokens.verify(accessToken, keyHash, now) : undefined;
  const found = await keys.find(db, grant ? grant.keyHash : keyHash);
  if (!found) throw new Unauthorized('unknown key');
  // A token names a key of the organization it was exchanged in, never a platform key.
  if (grant && (found.kind !== 'tenant' || found.key.organization_id !== grant.organizationId)) throw new Unauthorized('invalid access token');
  if (found.key.disabled) throw new Unauthorized('disabled key');
  if (found.kind === 'tenant' && found.key.deleted_at) throw new Unauthorized('deleted key');
  if (found.kind === 'platform') return { kind: 'platform', keyId: found.key.id, name: found.key.name };
  if (found.organizationDisabled) throw new Unauthorized('disabled organization');
  const key = found.key;
  if (key.expires_at && key.expires_at.getTime() <= now.getTime()) throw new Unauthorized('expired key');
  return { kind: 'tenant', key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
}
