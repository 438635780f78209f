// The token exchange (platform-api.md D12, RFC 8693): a workload trades a JWT its identity provider
// signed for one of our access tokens (access-tokens.ts), under a federation policy of the
// organization (federation.service.ts). The subject token's signature is checked by jose against
// the issuer's keys: given inline in the policy, or fetched from its JWKS URL under the upstream
// rules (no loopback or private address unless UPSTREAM_ALLOWED_HOSTS allows the host) and cached.
// Errors are the OAuth error body (RFC 6749 §5.2), never the envelope.
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { Db } from '@switchyard/db';
import { isUuid } from '../../access/workspaces.js';
import { Upstream } from '../../lib/errors.js';
import { CounterStoreUnavailable, type Limits } from '../../limits/limits.js';
import type { MediaDeps } from '../../storage/media.js';
import { upstreamFetch, upstreamPolicyOf, type UpstreamPolicy } from '../../upstream/index.js';
import { ACCESS_TOKEN_MAX_S, SigningKeyUnavailable } from './signing-keys.js';
import { TOKEN_SCOPE, type AccessTokens } from './access-tokens.js';
import { JwkSetSchema } from './federation.service.js';

export const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** The limiter's name for exchanges, counted per client address (TOKEN_EXCHANGES_PER_MINUTE). */
export const TOKEN_EXCHANGE_LIMIT = 'oauth.token';
/** Subject tokens are signed with one of these (never a shared secret: the issuer's keys are public). */
const SUBJECT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** The largest JWK set fetched from an issuer. */
const JWKS_MAX_BYTES = 256 * 1024;

/** An OAuth error answer: its status and body `{ error, error_description }`. */
export class OAuthError extends Error {
  constructor(
    readonly status: 400 | 429 | 500 | 503,
    readonly error: string,
    readonly description: string,
    readonly retryAfterS?: number,
  ) {
    super(description);
  }
}

/** The Token answer (D12, bare). */
export interface TokenAnswer {
  access_token: string;
  expires_in: number;
  issued_token_type: typeof ACCESS_TOKEN_TYPE;
  token_type: 'Bearer';
  scope: string;
}

export interface ExchangeDeps {
  db: Db;
  now: () => Date;
  limits: Limits;
  tokens: AccessTokens;
  issuers: IssuerKeys;
}

/** Exchanges a form's subject token (RFC 8693 §2.1); `client` is the caller's address, for the limit. */
export async function exchangeToken(deps: ExchangeDeps, form: URLSearchParams, client: string): Promise<TokenAnswer> {
  const field = fieldsOf(form);
  const grantType = field('grant_type');
  if (grantType === undefined) throw invalidRequest('grant_type is required');
  if (grantType !== GRANT_TYPE) throw new OAuthError(400, 'unsupported_grant_type', `grant_type must be ${GRANT_TYPE}`);
  const subjectToken = field('subject_token');
  if (!subjectToken) throw invalidRequest('subject_token is required');
  const subjectTokenType = field('subject_token_type');
  if (subjectTokenType !== JWT_TOKEN_TYPE) throw invalidRequest(`subject_token_type must be ${JWT_TOKEN_TYPE}`);
  const policyId = field('federation_policy_id');
  if (!policyId) throw invalidRequest('federation_policy_id is required');
  const requested = field('requested_token_type');
  if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE) throw invalidRequest(`requested_token_type, when given, must be ${ACCESS_TOKEN_TYPE}`);
  const scope = field('scope');
  if (scope !== undefined && scope !== TOKEN_SCOPE) throw new OAuthError(400, 'invalid_scope', `scope, when given, must be ${TOKEN_SCOPE}`);

  // While the counter store is away: COUNTER_STORE_FAILURE_TOKEN_EXCHANGE, closed (the default) a
  // 503 to try again, open an exchange that counts nothing.
  let limit;
  try {
    limit = await deps.limits.consume(TOKEN_EXCHANGE_LIMIT, client);
  } catch (error) {
    if (error instanceof CounterStoreUnavailable) {
      throw new OAuthError(
        503,
        'temporarily_unavailable',
        'the exchange limit cannot be checked now (the counter store is unreachable); try again later',
        error.retryAfterS,
      );
    }
    throw error;
  }
  if (!limit.allowed) {
    throw new OAuthError(429, 'temporarily_unavailable', 'too many token exchanges from this address; try again later', limit.retry_after_s ?? 60);
  }

  const now = deps.now();
  const policy = isUuid(policyId)
    ? await deps.db.federationPolicy.findUnique({
        where: { id: policyId },
        include: { api_key: true, organization: { select: { disabled_at: true } } },
      })
    : null;
  if (!policy) throw invalidGrant('unknown federation policy');
  const keys = policy.jwks_url ? deps.issuers.remote(policy.jwks_url) : deps.issuers.inline(policy.id, policy.updated_at, policy.jwks);
  let subjectExp: number;
  try {
    const { payload } = await jwtVerify(subjectToken, keys, {
      issuer: policy.issuer,
      audience: policy.audience,
      subject: policy.subject,
      algorithms: SUBJECT_ALGORITHMS,
      requiredClaims: ['exp'],
      currentDate: now,
    });
    subjectExp = payload.exp!;
  } catch (error) {
    throw invalidGrant(`the subject token was refused: ${reasonOf(error)}`);
  }

  const key = policy.api_key;
  if (key.deleted_at || key.disabled || policy.organization.disabled_at || (key.expires_at && key.expires_at.getTime() <= now.getTime())) {
    throw invalidGrant("the federation policy's key is deleted, disabled or expired, or its organization is disabled");
  }
  const nowS = Math.floor(now.getTime() / 1000);
  // A token never outlives the key it acts as: not past the key's expiry either.
  const keyExp = key.expires_at ? Math.floor(key.expires_at.getTime() / 1000) : Number.POSITIVE_INFINITY;
  const exp = Math.min(nowS + ACCESS_TOKEN_MAX_S, subjectExp, keyExp);
  if (exp <= nowS) throw invalidGrant('the subject token expires now');
  let accessToken: string;
  try {
    accessToken = await deps.tokens.issue(
      { keyHash: key.hash, organizationId: policy.organization_id, policyId: policy.id, expiresAt: new Date(exp * 1000) },
      now,
    );
  } catch (error) {
    if (error instanceof SigningKeyUnavailable) throw new OAuthError(503, 'temporarily_unavailable', 'the signing key is unavailable');
    throw error;
  }
  return { access_token: accessToken, expires_in: exp - nowS, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', scope: TOKEN_SCOPE };
}

/** A form's single values: a field given twice is invalid_request (RFC 6749 §3.2). */
function fieldsOf(form: URLSearchParams): (name: string) => string | undefined {
  return (name) => {
    const values = form.getAll(name);
    if (values.length > 1) throw invalidRequest(`${name} is given more than once`);
    return values[0];
  };
}

const invalidRequest = (description: string) => new OAuthError(400, 'invalid_request', description);
const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description);

/** Why jose refused a subject token, in words a caller can act on (never a stack). */
function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'it has expired';
  if (error instanceof errors.JWTClaimValidationFailed)
    return `claim ${error.claim} ${error.reason === 'check_failed' ? 'does not match the policy' : error.reason}`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (error instanceof errors.JWKSNoMatchingKey) return "no key of the issuer's key set matches its header";
  if (error instanceof errors.JOSEAlgNotAllowed) return 'its algorithm is not allowed';
  if (error instanceof errors.JWKSTimeout || error instanceof Upstream) return "the issuer's keys could not be fetched";
  if (error instanceof errors.JOSEError) return `${error.code}`;
  return "the issuer's keys could not be read";
}

/** The issuers' key sets: inline ones by policy, fetched ones by URL (jose caches them, refetching an unknown kid). */
export class IssuerKeys {
  readonly #inline = new Map<string, { version: number; keys: JWTVerifyGetKey }>();
  readonly #remote = new Map<string, JWTVerifyGetKey>();
  readonly #policy: UpstreamPolicy;
  readonly #timeoutMs: number;

  constructor(media: MediaDeps) {
    this.#policy = upstreamPolicyOf(media);
    this.#timeoutMs = media.upstreamIdleTimeoutMs;
  }

  inline(policyId: string, updatedAt: Date, jwks: unknown): JWTVerifyGetKey {
    const held = this.#inline.get(policyId);
    if (held && held.version === updatedAt.getTime()) return held.keys;
    const keys = createLocalJWKSet(JwkSetSchema.parse(jwks));
    this.#bounded(this.#inline).set(policyId, { version: updatedAt.getTime(), keys });
    return keys;
  }

  remote(url: string): JWTVerifyGetKey {
    let keys = this.#remote.get(url);
    if (!keys) {
      keys = createRemoteJWKSet(new URL(url), { [customFetch]: (href: string, init: { signal?: AbortSignal }) => this.#fetch(href, init.signal) });
      this.#bounded(this.#remote).set(url, keys);
    }
    return keys;
  }

  /** One GET of a key set under the upstream rules (no redirect followed), its body bounded. */
  async #fetch(href: string, signal: AbortSignal | undefined): Promise<Response> {
    const res = await upstreamFetch(this.#policy, href, {
      headers: { accept: 'application/json' },
      timeoutMs: this.#timeoutMs,
      maxBodyBytes: JWKS_MAX_BYTES,
      ...(signal ? { signal } : {}),
    });
    if (res.truncated) throw new Upstream(`the key set at ${new URL(href).host} is over ${JWKS_MAX_BYTES} bytes`);
    // jose refuses anything but 200, and reads the JSON itself.
    return new Response(res.body, { status: res.status === 200 ? 200 : 502, headers: { 'content-type': 'application/json' } });
  }

  /** A map kept under 1,000 entries: the oldest go first. */
  #bounded<V>(map: Map<string, V>): Map<string, V> {
    if (map.size >= 1_000) map.delete(map.keys().next().value!);
    return map;
  }
}
