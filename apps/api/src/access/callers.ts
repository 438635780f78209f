// Who is calling: every request's bearer key resolves to one of two planes.
// - A tenant: a regular or management key of one organization (`Actor`).
// - The platform: a platform key, which belongs to no organization (`PlatformActor`).
// authenticate() is the only place that turns a key into a caller; rules.ts says what each may do.
import { DataRegion, LimitReset, modelColumns, Prisma, queryRows, statement, type ApiKey, type Db, type PlatformKey } from '@switchyard/db';
import { z } from 'zod';
import { TtlCache } from '../lib/cache.js';
import type { CacheCounter } from '../lib/metrics.js';
import { Unauthorized } from '../lib/errors.js';
import type { SessionRef } from './sessions.js';

/** A tenant caller: its key (row), organization, workspace and user. */
export interface Actor {
  kind: 'tenant';
  key: ApiKey;
  organizationId: string;
  workspaceId: string;
  userId: string;
  /**
   * Set when a federated access token (the token exchange) acts as the key, or a person's session
   * (access/sessions.ts) made from it: the audit log says so.
   */
  via?: 'access_token' | 'session';
  /** The session the call was made with (via 'session'); userId is then its person. */
  session?: SessionRef;
}

/** A platform caller: one of the platform's own services or operators. */
export interface PlatformActor {
  kind: 'platform';
  keyId: string;
  name: string;
}

export type Caller = Actor | PlatformActor;

/**
 * The platform actor of work no key started: the start-up import and bootstrap, the recorder's
 * batches, the sweeps and the job handlers (services take an actor, decision 0037). It names no
 * platform key: its keyId is not a key's.
 */
export const SERVER_ACTOR: PlatformActor = Object.freeze({ kind: 'platform', keyId: 'server', name: 'switchyard server' });

/**
 * Dependencies for work no request started (the sweeps, the job handlers, the start-up import),
 * as a service takes them: no request id, no client address, no client to leave.
 */
export function withoutRequest<D extends object>(deps: D): D & { requestId(): string | null; clientAddress(): string | null; clientGone(): boolean } {
  return { ...deps, requestId: () => null, clientAddress: () => null, clientGone: () => false };
}

/**
 * The caller of a public operation, who shows no key: the catalog's public reads, and the exchanges
 * whose only credential is in their input (the PKCE code exchange, a SCIM token's lookup).
 */
export interface AnonymousCaller {
  kind: 'anonymous';
}

export const ANONYMOUS: AnonymousCaller = Object.freeze({ kind: 'anonymous' });

/**
 * What a bearer hash names: a tenant key (with its organization's standing, and the end of the
 * secret the bearer holds: null while it is the key's current secret, docs/decisions/0021) or a
 * platform key.
 */
export type KeyRecord =
  | { kind: 'tenant'; key: ApiKey; organizationDisabled: boolean; secretExpiresAt: Date | null }
  | { kind: 'platform'; key: PlatformKey }
  | null;

/**
 * A key by the hash of one of its secrets, with that secret's end and its organization's standing:
 * one lookup by api_key_secrets' primary key, joined, in one statement (through Prisma's engine the
 * same read was three queries). Every column of the key, as Prisma's ApiKey has them.
 */
const KEY_BY_SECRET = statement(
  `
  SELECT k.id, k.organization_id, k.workspace_id::text AS workspace_id, k.creator_user_id, k.hash, k.label, k.name,
         k.is_management_key, k.scopes, k.is_provisioning_key, k.is_free_tier, k."limit"::text AS "limit", k.limit_reset::text AS limit_reset,
         k.include_byok_in_limit, k.allowed_data_regions::text[] AS allowed_data_regions, k.free_model_daily_limit, k.expires_at,
         k.disabled, k.external_user, k.external_api_key_hash, k.deleted_at, k.usage::text AS usage, k.byok_usage::text AS byok_usage,
         k.minted_by_key_id::text AS minted_by_key_id, k.created_at, k.updated_at,
         s.expires_at AS secret_expires_at, o.disabled_at IS NOT NULL AS organization_disabled
  FROM api_key_secrets s
  JOIN api_keys k ON k.id = s.api_key_id
  JOIN organizations o ON o.id = k.organization_id
  WHERE s.secret_hash = $1`,
  z.object({
    ...modelColumns<ApiKey>()({
      id: z.string(),
      organization_id: z.string(),
      workspace_id: z.string(),
      creator_user_id: z.string(),
      hash: z.string(),
      label: z.string(),
      name: z.string(),
      is_management_key: z.boolean(),
      scopes: z
        .array(z.string())
        .nullable()
        .transform((scopes) => scopes ?? []),
      is_provisioning_key: z.boolean(),
      is_free_tier: z.boolean(),
      limit: z.string().nullable(),
      limit_reset: z.enum(LimitReset).nullable(),
      include_byok_in_limit: z.boolean(),
      allowed_data_regions: z.array(z.enum(DataRegion)),
      free_model_daily_limit: z.number().int(),
      expires_at: z.date().nullable(),
      disabled: z.boolean(),
      external_user: z.string().nullable(),
      external_api_key_hash: z.string().nullable(),
      deleted_at: z.date().nullable(),
      usage: z.string(),
      byok_usage: z.string(),
      minted_by_key_id: z.string().nullable(),
      created_at: z.date(),
      updated_at: z.date(),
    }),
    secret_expires_at: z.date().nullable(),
    organization_disabled: z.boolean(),
  }),
);

/** Whether the secret a record was found by has ended (a rotation's grace period is over). */
export function secretEnded(found: { secretExpiresAt: Date | null }, now: Date): boolean {
  return found.secretExpiresAt !== null && found.secretExpiresAt.getTime() <= now.getTime();
}

/**
 * Key rows by the hash of a secret (a bearer's SHA-256), each kept for at most `ttlMs` after it was
 * read, so that most requests authenticate without a query. This is the one resolver of a bearer:
 * authentication, routing.authorize and generations.record all find keys through it. A key's secrets
 * are api_key_secrets rows: one indexed lookup by secret_hash, joined to the key (a key never rotated
 * has one secret, whose hash is the key's hash). A change made through this process (`forget`,
 * `forgetOrganization`) applies at once; a key or organization disabled, changed, rotated or deleted
 * by another process as soon as its announcement arrives (cache-events.ts: "key:<stable hash>"), and
 * within `ttlMs` even if that announcement is lost. `forget` takes the key's stable hash and forgets
 * every secret of it held here. Unknown hashes are never cached (a key created elsewhere works at
 * once). `ttlMs` 0 reads every time. Figures that move (usage) are never read from these rows. A key
 * in use is read again in the background in the last quarter of its time (no request waits).
 */
export class KeyCache {
  readonly #rows: TtlCache<string, KeyRecord>;
  /** Stable hash -> the other secret hashes its rows are held under here (rotated keys only). */
  readonly #secretsOf = new Map<string, Set<string>>();
  /** When this process last noted each secret's use (ms), and the uses not yet written. */
  readonly #usedNoted = new Map<string, number>();
  readonly #usesPending = new Map<string, Date>();

  constructor(
    ttlMs: number,
    counter?: CacheCounter,
    /** A secret's use is noted (and later written) at most once per this many ms per process. */
    private readonly useEveryMs = 60_000,
  ) {
    this.#rows = new TtlCache(ttlMs, 10_000, (row) => row !== null, counter, ttlMs / 4);
  }

  find(db: Db, hash: string): Promise<KeyRecord> {
    return this.#rows.get(hash, async () => {
      const [found] = await queryRows(db, KEY_BY_SECRET, [hash]);
      if (found) {
        const { secret_expires_at, organization_disabled, limit, usage, byok_usage, ...row } = found;
        const key: ApiKey = {
          ...row,
          limit: limit === null ? null : new Prisma.Decimal(limit),
          usage: new Prisma.Decimal(usage),
          byok_usage: new Prisma.Decimal(byok_usage),
        };
        if (key.hash !== hash) this.#alias(key.hash, hash);
        return { kind: 'tenant', key, organizationDisabled: organization_disabled, secretExpiresAt: secret_expires_at };
      }
      const platform = await db.platformKey.findUnique({ where: { hash } });
      return platform ? { kind: 'platform', key: platform } : null;
    });
  }

  #alias(stable: string, secret: string): void {
    // Bounded: forgetting too much only costs a read.
    if (this.#secretsOf.size >= 10_000) this.#secretsOf.clear();
    let set = this.#secretsOf.get(stable);
    if (!set) this.#secretsOf.set(stable, (set = new Set()));
    set.add(secret);
  }

  /**
   * Notes that a secret authenticated a request (no I/O; at most once per `useEveryMs` per secret);
   * `flushUses` writes what is noted.
   */
  noteUse(secretHash: string, now: Date): void {
    const at = now.getTime();
    const last = this.#usedNoted.get(secretHash);
    if (last !== undefined && at - last < this.useEveryMs) return;
    if (this.#usedNoted.size >= 100_000) this.#usedNoted.clear();
    this.#usedNoted.set(secretHash, at);
    this.#usesPending.set(secretHash, now);
  }

  /** Writes the noted uses (api_key_secrets.last_used_at) in one statement; a failed write is dropped. */
  async flushUses(db: Db): Promise<void> {
    if (this.#usesPending.size === 0) return;
    const hashes = [...this.#usesPending.keys()];
    const ats = [...this.#usesPending.values()].map((at) => at.toISOString());
    this.#usesPending.clear();
    await db.$executeRaw`
      UPDATE api_key_secrets s SET last_used_at = greatest(s.last_used_at, u.at)
      FROM unnest(${hashes}::text[], ${ats}::timestamptz[]) AS u(secret_hash, at)
      WHERE s.secret_hash = u.secret_hash`;
  }

  /** Forgets a key (by its stable hash) after it changed (here or elsewhere): every secret of it held here. */
  forget(hash: string): void {
    this.#rows.delete(hash);
    const others = this.#secretsOf.get(hash);
    if (others) {
      this.#secretsOf.delete(hash);
      for (const secret of others) this.#rows.delete(secret);
    }
  }

  /** Forgets every key of an organization (after it was disabled). */
  forgetOrganization(organizationId: string): void {
    this.#rows.deleteWhere((row) => row?.kind === 'tenant' && row.key.organization_id === organizationId);
  }

  /** Forgets every key. */
  clear(): void {
    this.#rows.clear();
    this.#secretsOf.clear();
  }
}

/** How often a process writes the secrets' uses it noted (api_key_secrets.last_used_at). */
export const KEY_USES_FLUSH_MS = 2_000;

/** Writes `keys`' noted secret uses every `everyMs` until stopped (stop writes what is left). */
export function recordSecretUses(db: Db, keys: KeyCache, everyMs: number, failed: (error: unknown) => void): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const flush = () => {
    running = running.then(() => keys.flushUses(db)).catch(failed);
    return running;
  };
  const timer = setInterval(() => void flush(), everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return flush();
    },
  };
}

/** What an access token of the token exchange grants: the key it acts as, until it expires. */
export interface TokenGrant {
  /** The stable hash of the key the token acts as. */
  keyHash: string;
  organizationId: string;
  /** The federation policy it was exchanged under. */
  policyId: string;
  /** When it expires. */
  expiresAt: Date;
}

/**
 * Verifies the token exchange's access tokens (the auth module's AccessTokens): the grant of a
 * token sent with the key whose hash is `hash`, or 401.
 */
export interface AccessTokenVerifier {
  verify(token: string, hash: string, now: Date): Promise<TokenGrant>;
}

/**
 * The caller of a key; 401 unless the key is known, enabled, unexpired, (tenant) its organization
 * enabled and the secret not past a rotation's grace period. An access token of the token exchange
 * (`accessToken`, verified by `tokens`) is the key it acts as, under the same checks but the
 * secret's (it names the key by its stable hash), until it expires: never more rights than the key.
 */
export async function authenticate(
  db: Db,
  keys: KeyCache,
  keyHash: string | null,
  now: Date,
  accessToken?: string | null,
  tokens?: AccessTokenVerifier,
): Promise<Caller> {
  if (!keyHash) throw new Unauthorized('missing key');
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
  // An access token names the key by its stable hash (the first secret's, whose row stays): a
  // rotation of the key's secret does not end its tokens (they end with their own expiry).
  if (grant) {
    return { kind: 'tenant', key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id, via: 'access_token' };
  }
  if (secretEnded(found, now)) throw new Unauthorized('rotated secret past its grace period');
  keys.noteUse(keyHash, now);
  return { kind: 'tenant', key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
}
