// Sessions for people (docs/sessions.md): a browser signs in once (POST /session/sign-in with a
// management key) and then calls /trpc with an HttpOnly cookie instead of a key, sending the CSRF
// token in a header on every state-changing call.
import { z } from 'zod';
import { TimestampSchema } from './common.js';

/** The cookie that carries a session's token (HttpOnly: scripts never read it). */
export const SESSION_COOKIE = 'switchyard_session';

/** The header a state-changing call made with a session cookie carries its session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

export const SESSION_METHODS = ['key', 'oidc'] as const;

export const SessionSchema = z
  .object({
    id: z.string().describe('The session id (not its token, which only the cookie carries)'),
    organization_id: z.string(),
    user_id: z.string().describe('The person the session acts as (a key-made session: the key’s creator)'),
    method: z.enum(SESSION_METHODS).describe('How it was made: key (a management key exchanged once) or oidc (the organization’s identity provider)'),
    key_hash: z.string().nullable().describe('A key-made session’s key (its stable hash); null otherwise'),
    role: z
      .enum(['org:admin', 'org:member'])
      .nullable()
      .describe('An identity provider’s session: its person’s organization role, which gives its authority; null for a key-made session'),
    created_at: TimestampSchema,
    idle_expires_at: TimestampSchema.describe('It ends unless used before this (moved forward by each use, never past expires_at)'),
    expires_at: TimestampSchema.describe('Its absolute end, which use never moves'),
    csrf_token: z.string().describe('Send it back in the X-CSRF-Token header on every state-changing call made with the session'),
  })
  .describe('A signed-in session');
export type Session = z.infer<typeof SessionSchema>;

export const CurrentSessionSchema = z
  .object({
    organization_id: z.string(),
    user_id: z.string(),
    session: SessionSchema.nullable().describe('The session the call was made with; null for a call made with a key'),
  })
  .describe('Who is calling');
export type CurrentSession = z.infer<typeof CurrentSessionSchema>;

export const SignOutSchema = z.object({ ended: z.number().int().describe('How many sessions this ended') });

/** Where an identity provider's sign-in starts and returns (under SESSION_PREFIX). */
export const OIDC_START_PATH = '/oidc/start';
export const OIDC_CALLBACK_PATH = '/oidc/callback';

const EmailDomainSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^(?!-)[A-Za-z0-9-]{1,63}(?:\.(?!-)[A-Za-z0-9-]{1,63})+$/, 'a domain name, such as example.com')
  .transform((domain) => domain.toLowerCase());

export const SetIdentityProviderInputSchema = z
  .object({
    issuer: z.string().url().max(2048).describe('The provider’s issuer; discovery is at <issuer>/.well-known/openid-configuration'),
    client_id: z.string().min(1).max(512),
    client_secret: z.string().min(1).max(4096).describe('Sealed at rest and never answered'),
    allowed_email_domains: z.array(EmailDomainSchema).min(1).max(100).describe('A person’s verified e-mail must be in one of these on first sign-in'),
  })
  .describe('The organization’s OpenID Connect identity provider');
export type SetIdentityProviderInput = z.infer<typeof SetIdentityProviderInputSchema>;

export const IdentityProviderSchema = z
  .object({
    organization_id: z.string(),
    issuer: z.string(),
    client_id: z.string(),
    has_secret: z.literal(true),
    client_secret_label: z.string().describe('The client secret, masked: first 3 characters, "...", last 4'),
    allowed_email_domains: z.array(z.string()),
    redirect_uri_path: z.string().describe('The callback to register with the provider, on this server’s origin'),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .describe('The organization’s OpenID Connect identity provider (its secret never answered)');
export type IdentityProvider = z.infer<typeof IdentityProviderSchema>;

export const IdentityProviderOutputSchema = z.object({ data: IdentityProviderSchema.nullable() });
export const SetIdentityProviderOutputSchema = z.object({ data: IdentityProviderSchema });
export const DeleteIdentityProviderOutputSchema = z.object({ deleted: z.boolean() });
