// Keys issued through the authorization-code flow with PKCE (platform-api.md D10, D11; RFC 7636).
import { z } from 'zod';
import { dataOf, IdentifierSchema, listOf, paginationQuery, TimestampSchema } from './common.js';
import { ExpiresAtSchema, LimitUsdSchema } from './keys.js';
import { WorkspaceRefSchema } from './workspaces.js';

/** RFC 7636 §4.1-4.2: a verifier, and a plain challenge, are 43-128 unreserved characters; an S256 challenge is 43 of them. */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

export const CodeChallengeMethodSchema = z.enum(['S256', 'plain']).describe('How the challenge is made from the verifier (RFC 7636): S256 or plain');

export const CreateAuthorizationCodeInputSchema = z.object({
  callback_url: z
    .string()
    .min(1)
    .max(2000)
    .describe('Where the application receives the code: an https URL, or http on localhost or 127.0.0.1 (any port); its origin identifies the application'),
  code_challenge: z.string().regex(PKCE_VALUE, '43-128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636)').optional().describe('PKCE challenge'),
  code_challenge_method: CodeChallengeMethodSchema.optional().describe('Default plain when a challenge is given (RFC 7636 §4.3)'),
  key_label: z.string().min(1).max(200).optional().describe("Name of the key to be created; default: the application's name (its host)"),
  limit: LimitUsdSchema.optional().describe('Credit limit of the key to be created, USD'),
  usage_limit_type: z.enum(['daily', 'weekly', 'monthly']).optional().describe('The limit resets on that interval'),
  expires_at: ExpiresAtSchema.nullable().optional().describe('Expiry of the key to be created'),
  workspace_id: WorkspaceRefSchema.optional().describe("Workspace of the key to be created (UUID or slug); default: the calling key's"),
});
export type CreateAuthorizationCodeInput = z.infer<typeof CreateAuthorizationCodeInputSchema>;

export const AuthorizationCodeSchema = z
  .object({
    id: z.string().describe('The code itself: what the application sends as `code` to POST /auth/keys'),
    app_id: z.number().int().describe('The application the code was issued to'),
    created_at: TimestampSchema,
  })
  .describe('An authorization code, single-use, valid for 10 minutes');
export type AuthorizationCode = z.infer<typeof AuthorizationCodeSchema>;
export const CreateAuthorizationCodeOutputSchema = dataOf(AuthorizationCodeSchema);

export const ExchangeAuthorizationCodeInputSchema = z.object({
  code: z.string().min(1).max(200).describe('The id answered by POST /auth/keys/code'),
  code_verifier: z.string().min(1).max(200).optional().describe('Required when the code was made with a code_challenge'),
  code_challenge_method: CodeChallengeMethodSchema.nullable().optional().describe("The code's own method decides; another one given here is 400"),
});
export type ExchangeAuthorizationCodeInput = z.infer<typeof ExchangeAuthorizationCodeInputSchema>;

export const ExchangedKeySchema = z
  .object({
    key: z.string().describe('The new key, shown in this answer only'),
    user_id: z.string().nullable().describe('The user who owns it'),
  })
  .describe('A key made from an authorization code');
export type ExchangedKey = z.infer<typeof ExchangedKeySchema>;

// Workload identity: the token exchange (platform-api.md D12, RFC 8693), Switchyard's published
// keys (D13, RFC 7517), and the federation policies that say which external tokens are trusted.

/** One of Switchyard's public signing keys (D13): ECDSA P-256, the four constants exact. */
export const SigningJwkSchema = z
  .object({
    kty: z.literal('EC'),
    crv: z.literal('P-256'),
    alg: z.literal('ES256'),
    use: z.literal('sig'),
    kid: z.string().describe('Key id, as in the `kid` header of the tokens it verifies'),
    x: z.string().describe('base64url x coordinate (RFC 7518 §6.2.1)'),
    y: z.string().describe('base64url y coordinate'),
  })
  .describe('A public key that verifies the access tokens POST /oauth/token issues');
export const JwksOutputSchema = z.object({ keys: z.array(SigningJwkSchema) }).describe('A JWK set (RFC 7517)');

const JwkValue = z.string().min(1).max(8192);
/** Members that only a private or symmetric key has: an issuer's key set is public. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'] as const;

/** A public key an identity provider signs with (RFC 7517/7518): RSA, EC or OKP; never private or symmetric. */
export const IssuerJwkSchema = z
  .object({
    kty: z.enum(['RSA', 'EC', 'OKP']),
    kid: JwkValue.optional(),
    alg: JwkValue.optional(),
    use: JwkValue.optional(),
    crv: JwkValue.optional(),
    x: JwkValue.optional(),
    y: JwkValue.optional(),
    n: JwkValue.optional(),
    e: JwkValue.optional(),
  })
  .passthrough()
  .superRefine((jwk, ctx) => {
    for (const member of PRIVATE_MEMBERS) {
      if (member in jwk) ctx.addIssue({ code: 'custom', path: [member], message: 'a private or symmetric key member: give public keys only' });
    }
    const needs = jwk.kty === 'RSA' ? ['n', 'e'] : jwk.kty === 'EC' ? ['crv', 'x', 'y'] : ['crv', 'x'];
    for (const member of needs) {
      if (!(jwk as Record<string, unknown>)[member]) ctx.addIssue({ code: 'custom', path: [member], message: `required for kty ${jwk.kty}` });
    }
  });
export const IssuerJwkSetSchema = z.object({ keys: z.array(IssuerJwkSchema).min(1).max(20) }).describe("The issuer's public keys, as a JWK set");

export const FederationPolicySchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    issuer: z.string().describe("The subject token's `iss`, exactly"),
    audience: z.string().describe("The subject token's `aud` must include it"),
    subject: z.string().describe("The subject token's `sub`, exactly"),
    jwks_url: z.string().nullable().describe("Where the issuer's keys are fetched from; null when given inline"),
    jwks: IssuerJwkSetSchema.nullable().describe("The issuer's keys inline; null when fetched"),
    key_hash: z.string().describe('The key the access tokens act as'),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .describe('Which external tokens POST /oauth/token exchanges, and for which key');
export type FederationPolicy = z.infer<typeof FederationPolicySchema>;

const ClaimSchema = z.string().min(1).max(2048);
export const CreateFederationPolicyInputSchema = z
  .object({
    name: z.string().min(1).max(200).optional(),
    issuer: ClaimSchema,
    audience: ClaimSchema,
    subject: ClaimSchema,
    jwks_url: z.string().min(1).max(2048).optional().describe('https (http only to a loopback host UPSTREAM_ALLOWED_HOSTS allows)'),
    jwks: IssuerJwkSetSchema.optional(),
    key_hash: IdentifierSchema.describe('A key of the organization (its hash)'),
  })
  .refine((input) => (input.jwks_url === undefined) !== (input.jwks === undefined), {
    message: 'give exactly one of jwks_url and jwks',
    path: ['jwks_url'],
  });
export type CreateFederationPolicyInput = z.infer<typeof CreateFederationPolicyInputSchema>;
export const ListFederationPoliciesInputSchema = z.object(paginationQuery({ defaultLimit: 50, maxLimit: 100 }));
export const FederationPolicyIdInputSchema = z.object({ id: IdentifierSchema });
export const ListFederationPoliciesOutputSchema = listOf(FederationPolicySchema);

/** The Token answer of POST /oauth/token (D12, bare; RFC 8693 §2.2.1). */
export const TokenAnswerSchema = z
  .object({
    access_token: z.string().describe('A short-lived JWT (ES256), sent as `Authorization: Bearer` afterwards'),
    expires_in: z.number().int().describe('Seconds; at most 900, and never beyond the expiry of the subject token'),
    issued_token_type: z.literal('urn:ietf:params:oauth:token-type:access_token'),
    token_type: z.literal('Bearer'),
    scope: z.string().describe('The granted scope: inference'),
  })
  .describe('An access token acting as the key of the federation policy');

/** The error body of POST /oauth/token (RFC 6749 §5.2), not the envelope. */
export const OAuthErrorBodySchema = z
  .object({
    error: z.string().describe('invalid_request, invalid_grant, unsupported_grant_type, invalid_scope, server_error, temporarily_unavailable (open set)'),
    error_description: z.string(),
  })
  .describe('An OAuth error (RFC 6749 §5.2)');
