// The access tokens of the token exchange (platform-api.md D12): ES256 JWTs signed with Switchyard's
// signing keys (signing-keys.ts), each acting as one key of one organization until it expires. A
// token is a bearer on /api/v1 and /trpc: authenticate() (access/callers.ts) verifies it here and
// then treats the request as one made with the key it names, through the same key lookup, so that
// a key revoked or disabled refuses its tokens as it refuses its secret (at once here, on other
// replicas when the change is announced).
import { randomUUID } from 'node:crypto';
import { createLocalJWKSet, errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { AccessTokenVerifier, TokenGrant } from '../../access/callers.js';
import { TtlCache } from '../../lib/cache.js';
import { Unauthorized } from '../../lib/errors.js';
import type { SigningKeys } from './signing-keys.js';

/** Our tokens' `iss` and `aud`: tokens of other issuers, or meant for others, are refused. */
export const TOKEN_ISSUER = 'switchyard';
export const TOKEN_AUDIENCE = 'switchyard';
/** The one scope (D12). */
export const TOKEN_SCOPE = 'inference';

/** What an access token says. */
const VERIFIED_CACHE_MS = 60_000;
/** An unknown `kid` reloads the published keys at most this often (a key made on another replica). */
const RELOAD_EVERY_MS = 1_000;

export class AccessTokens implements AccessTokenVerifier {
  readonly #keys: SigningKeys;
  /** Verified tokens by the SHA-256 of the token (as keys are), so each is verified once. */
  readonly #verified = new TtlCache<string, TokenGrant>(VERIFIED_CACHE_MS, 10_000);
  #lastReload = 0;

  constructor(keys: SigningKeys) {
    this.#keys = keys;
  }

  /** Signs a token for `grant` with the current signing key. */
  async issue(grant: TokenGrant, now: Date): Promise<string> {
    const signer = await this.#keys.signer();
    return new SignJWT({ scope: TOKEN_SCOPE, org: grant.organizationId, fpid: grant.policyId })
      .setProtectedHeader({ alg: 'ES256', kid: signer.kid, typ: 'at+jwt' })
      .setIssuer(TOKEN_ISSUER)
      .setAudience(TOKEN_AUDIENCE)
      .setSubject(grant.keyHash)
      .setJti(randomUUID())
      .setIssuedAt(Math.floor(now.getTime() / 1000))
      .setExpirationTime(Math.floor(grant.expiresAt.getTime() / 1000))
      .sign(signer.key);
  }

  /** What a bearer token grants; 401 unless it is one of ours, unexpired. `hash` is its SHA-256. */
  async verify(token: string, hash: string, now: Date): Promise<TokenGrant> {
    // A failed verification is not kept (TtlCache): it fails again, and costs a verification again.
    const grant = await this.#verified.get(hash, () => this.#verify(token, now));
    if (grant.expiresAt.getTime() <= now.getTime()) throw new Unauthorized('expired access token');
    return grant;
  }

  async #verify(token: string, now: Date): Promise<TokenGrant> {
    let payload: JWTPayload;
    try {
      payload = await this.#check(token, now);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || now.getTime() - this.#lastReload < RELOAD_EVERY_MS) throw refused(error);
      // Signed by a key made on another replica since this one last read them.
      this.#lastReload = now.getTime();
      this.#keys.forget();
      payload = await this.#check(token, now).catch((again: unknown) => {
        throw refused(again);
      });
    }
    const { sub, org, fpid, exp } = payload;
    if (typeof sub !== 'string' || typeof org !== 'string' || typeof fpid !== 'string' || typeof exp !== 'number') {
      throw new Unauthorized('malformed access token');
    }
    return { keyHash: sub, organizationId: org, policyId: fpid, expiresAt: new Date(exp * 1000) };
  }

  async #check(token: string, now: Date): Promise<JWTPayload> {
    const keys = createLocalJWKSet({ keys: await this.#keys.published() });
    const { payload } = await jwtVerify(token, keys, {
      issuer: TOKEN_ISSUER,
      audience: TOKEN_AUDIENCE,
      algorithms: ['ES256'],
      typ: 'at+jwt',
      requiredClaims: ['exp', 'sub'],
      currentDate: now,
    });
    return payload;
  }
}

function refused(error: unknown): Unauthorized {
  if (error instanceof errors.JWTExpired) return new Unauthorized('expired access token');
  return new Unauthorized('invalid access token');
}
