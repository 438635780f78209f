// Switchyard's own token-signing keys (ES256), for the access tokens of the token exchange
// (platform-api.md D12) and published at GET /oauth/jwks (D13). They live in PostgreSQL (table
// signing_keys), private halves sealed with the secret box, so every replica signs with the same key
// and verifies every replica's tokens.
//
// - A signing key exists once the server is ready: start-up makes the first one (ensure()), so that a
//   verifier that reads GET /oauth/jwks at its own start can verify the first tokens.
// - A key is published before it signs: the next key is made `publishedBeforeSigningMs` before the
//   rotation period (SIGNING_KEY_ROTATION_DAYS) ends, by the first replica that needs to sign (under
//   an advisory lock), and the key before it keeps signing until the new one has been published that
//   long; then the older ones are retired. Only the very first key signs from its making: no verifier
//   can hold an older set.
// - A retired key stays published until every token it can have signed has expired (the longest
//   token lives ACCESS_TOKEN_MAX_S; a replica may sign with a key up to its cache time after it was
//   retired), plus 15 minutes, so that verifiers holding a copy of our JWKS keep working.
// - A key sealed with an older secret key (after a SWITCHYARD_SECRET_KEY rotation) is resealed with
//   the current one when the server starts (resealAll) and when this process opens it: the job
//   byok.resealSecrets does for an organization's credentials, done by the server itself for these
//   platform rows (decision 0022).
import type { Prisma, Db } from '@switchyard/db';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { TtlCache } from '../../lib/cache.js';
import type { SecretBox } from '../../lib/secret-box.js';

/** The longest an access token lives (D12: at most 900 seconds). */
export const ACCESS_TOKEN_MAX_S = 900;
/** How long a retired key stays published after its last token can have expired. */
export const PUBLISHED_AFTER_LAST_TOKEN_MS = 15 * 60 * 1000;
/** How long a new key is published before it signs (verifiers that cached our JWKS meanwhile see it). */
export const PUBLISHED_BEFORE_SIGNING_MS = 15 * 60 * 1000;
/** The advisory lock under which a replica makes a new signing key (any constant no other lock uses). */
const ROTATION_LOCK = 0x534b_4559; // "SKEY"

/** A public signing key as D13 publishes it. */
export interface PublicJwk {
  kty: 'EC';
  crv: 'P-256';
  alg: 'ES256';
  use: 'sig';
  kid: string;
  x: string;
  y: string;
}

/** The key that signs now. */
export interface Signer {
  kid: string;
  key: CryptoKey;
}

/** The signing keys cannot be used: D12 answers 503 (temporarily_unavailable). */
export class SigningKeyUnavailable extends Error {}

interface Sealed {
  kid: string;
  sealed: string;
  createdAt: Date;
}

interface Loaded {
  /** The unretired keys, newest first, still sealed. */
  unretired: Sealed[];
  published: PublicJwk[];
}

export interface SigningKeysOptions {
  db: Db;
  secrets: SecretBox;
  now: () => Date;
  /** How long a key signs before a new one takes over. */
  rotationMs: number;
  /** How long this process reuses what it read (CACHE_TTL_MS): a new key elsewhere is seen within it. */
  cacheTtlMs: number;
}

const associatedData = (kid: string) => `signing-key:${kid}`;

export class SigningKeys {
  readonly #options: SigningKeysOptions;
  readonly #loaded: TtlCache<'keys', Loaded>;
  /** The current key, opened (kept while it stays current). */
  #opened: Signer | null = null;

  constructor(options: SigningKeysOptions) {
    this.#options = options;
    this.#loaded = new TtlCache(options.cacheTtlMs, 1);
  }

  /** How long after its retirement a key is still published. */
  get publishedForMs(): number {
    return ACCESS_TOKEN_MAX_S * 1000 + this.#options.cacheTtlMs + PUBLISHED_AFTER_LAST_TOKEN_MS;
  }

  /** How long a new key is published before it signs: at most half the rotation period. */
  get publishedBeforeSigningMs(): number {
    return Math.min(PUBLISHED_BEFORE_SIGNING_MS + this.#options.cacheTtlMs, Math.floor(this.#options.rotationMs / 2));
  }

  /** The public keys to publish and to verify tokens with: the next one, the signing one and those retired recently. */
  async published(): Promise<PublicJwk[]> {
    return (await this.#load()).published;
  }

  /**
   * Makes the first signing key when there is none, and the next one when it is due: the server
   * calls it before it is ready, so that GET /oauth/jwks publishes a key from the first start.
   */
  async ensure(): Promise<void> {
    await this.#prepare(this.#options.now());
  }

  /** The key to sign with: the newest one published for publishedBeforeSigningMs (the first key at once). */
  async signer(): Promise<Signer> {
    const now = this.#options.now();
    const { unretired } = await this.#prepare(now);
    const ripe = unretired.find((key) => now.getTime() - key.createdAt.getTime() >= this.publishedBeforeSigningMs);
    // No key published long enough: the oldest unretired one (the first key, before any other exists).
    const current = ripe ?? unretired[unretired.length - 1];
    if (!current) throw new SigningKeyUnavailable('no signing key could be made');
    if (unretired.some((key) => key.createdAt < current.createdAt)) {
      await this.#options.db.signingKey.updateMany({ where: { retired_at: null, created_at: { lt: current.createdAt } }, data: { retired_at: now } });
      this.#loaded.clear();
    }
    if (this.#opened?.kid !== current.kid) this.#opened = await this.#open(current.kid, current.sealed);
    return this.#opened;
  }

  /** The keys as loaded, after making the next one when none exists or the newest is due for rotation. */
  async #prepare(now: Date): Promise<Loaded> {
    const loaded = await this.#load();
    const newest = loaded.unretired[0];
    if (newest && now.getTime() - newest.createdAt.getTime() < this.#nextDueMs) return loaded;
    await this.#rotate(now);
    this.#loaded.clear();
    return this.#load();
  }

  /** How old the newest key is when the next one is made (published ahead of signing). */
  get #nextDueMs(): number {
    return this.#options.rotationMs - this.publishedBeforeSigningMs;
  }

  /**
   * Reseals every signing key still sealed with an older secret key (after a SWITCHYARD_SECRET_KEY
   * rotation): the server calls it at start, so that the old key can leave the ring. A key that
   * cannot be opened is left as it is (and logged by the caller). Answers how many were resealed.
   */
  async resealAll(): Promise<{ resealed: number; unopenable: string[] }> {
    const { db, secrets } = this.#options;
    const stale = await db.signingKey.findMany({ where: { NOT: { private_jwk: { startsWith: `v1.${secrets.currentKeyId}.` } } } });
    let resealed = 0;
    const unopenable: string[] = [];
    for (const row of stale) {
      let sealed: string;
      try {
        sealed = secrets.reseal(row.private_jwk, associatedData(row.kid));
      } catch {
        unopenable.push(row.kid);
        continue;
      }
      // Conditional on what was read: a concurrent reseal by another replica is not overwritten.
      resealed += (await db.signingKey.updateMany({ where: { kid: row.kid, private_jwk: row.private_jwk }, data: { private_jwk: sealed } })).count;
    }
    if (resealed > 0) this.forget();
    return { resealed, unopenable };
  }

  /** Forgets what was read (tests, after changing rows). */
  forget(): void {
    this.#loaded.clear();
    this.#opened = null;
  }

  #load(): Promise<Loaded> {
    return this.#loaded.get('keys', async () => {
      const { db, now } = this.#options;
      const since = new Date(now().getTime() - this.publishedForMs);
      const rows = await db.signingKey.findMany({
        where: { OR: [{ retired_at: null }, { retired_at: { gt: since } }] },
        orderBy: { created_at: 'desc' },
      });
      return {
        unretired: rows.filter((row) => row.retired_at === null).map((row) => ({ kid: row.kid, sealed: row.private_jwk, createdAt: row.created_at })),
        published: rows.map((row) => row.public_jwk as unknown as PublicJwk),
      };
    });
  }

  async #open(kid: string, sealed: string): Promise<Signer> {
    const { secrets, db } = this.#options;
    let jwk: JWK;
    try {
      jwk = JSON.parse(secrets.open(sealed, associatedData(kid))) as JWK;
    } catch (error) {
      throw new SigningKeyUnavailable(`signing key ${kid} cannot be opened: ${(error as Error).message}`);
    }
    if (!sealed.startsWith(`v1.${secrets.currentKeyId}.`)) {
      // Conditional on what was read: a concurrent reseal by another replica is not overwritten.
      await db.signingKey.updateMany({ where: { kid, private_jwk: sealed }, data: { private_jwk: secrets.seal(JSON.stringify(jwk), associatedData(kid)) } });
    }
    return { kid, key: (await importJWK(jwk, 'ES256')) as CryptoKey };
  }

  /**
   * Makes the next signing key, unless another replica just did. The keys before it are retired by
   * signer() once the new one signs, not here: until then they sign, and all are published.
   */
  async #rotate(now: Date): Promise<void> {
    const { db, secrets } = this.#options;
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const published: PublicJwk = { kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid, x: publicJwk.x!, y: publicJwk.y! };
    const sealed = secrets.seal(JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'ES256' }), associatedData(kid));
    await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ROTATION_LOCK})`;
      const current = await tx.signingKey.findFirst({ where: { retired_at: null }, orderBy: { created_at: 'desc' } });
      if (current && now.getTime() - current.created_at.getTime() < this.#nextDueMs) return;
      // Keys past their publication are of no further use.
      await tx.signingKey.deleteMany({ where: { retired_at: { lt: new Date(now.getTime() - this.publishedForMs) } } });
      await tx.signingKey.create({
        data: { kid, private_jwk: sealed, public_jwk: published as unknown as Prisma.InputJsonObject, created_at: now },
      });
    });
  }
}
