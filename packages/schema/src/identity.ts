// Keys issued through the authorization-code flow with PKCE (platform-api.md D10, D11; RFC 7636).
import { z } from 'zod';
import { dataOf, TimestampSchema } from './common.js';
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
