// POST /api/v1/oauth/token (platform-api.md D12, RFC 8693): a plain express route, because its body is
// a form (application/x-www-form-urlencoded) and its errors are the OAuth error body of RFC 6749
// §5.2, `{ error, error_description }`, not the envelope. No key: the subject token is the
// credential, and an Authorization header is not read. The exchange is token-exchange.ts; app.ts
// mounts the route through rawRoutes().
import { API_PREFIX, answers } from '@switchyard/schema';
import type { Request, Response } from 'express';
import { OAuthError, exchangeToken } from './token-exchange.js';
import type { AppDeps } from '../../trpc/service-deps.js';
import { header, TOKEN_ANSWER, type Json } from '../../raw-routes/openapi-parts.js';
import { routeOf, type RawRoute } from '../../raw-routes/route.js';
import { NoQuerySchema, rawInputOf, type RawOperation } from '../../raw-routes/contracts.js';
import { loggerOf } from '../../lib/request-scope.js';

/** The largest form read (a subject token of a few KB, with room to spare). */
export const FORM_MAX_BYTES = 64 * 1024;
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** The body as a form; invalid_request unless it is one, in UTF-8, within FORM_MAX_BYTES. */
async function readForm(req: Request): Promise<URLSearchParams> {
  if (!FORM_TYPE.test(req.headers['content-type'] ?? '')) {
    req.resume();
    throw new OAuthError(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Read to the end (dropped), so that the answer reaches a client still sending.
    if (size <= FORM_MAX_BYTES) chunks.push(chunk);
  }
  if (size > FORM_MAX_BYTES) throw new OAuthError(400, 'invalid_request', `the body is over ${FORM_MAX_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new OAuthError(400, 'invalid_request', 'the body is not UTF-8');
  }
  return new URLSearchParams(text);
}

function sendOAuthError(res: Response, error: OAuthError): void {
  if (error.retryAfterS !== undefined) res.setHeader('Retry-After', String(error.retryAfterS));
  res.status(error.status).json({ error: error.error, error_description: error.description });
}

export const TOKEN_EXCHANGE = {
  method: 'POST',
  prefix: API_PREFIX,
  path: '/oauth/token',
  input: NoQuerySchema,
  body: 'form',
  errorBody: 'oauth',
  statuses: answers(
    {
      400:
        'invalid_request: not an application/x-www-form-urlencoded body (UTF-8, at most 64 KiB), a field missing, given twice or not the exact value; ' +
        'unsupported_grant_type: another grant_type; invalid_scope: a scope other than inference; ' +
        "invalid_grant: an unknown federation policy, a subject token whose signature, iss, aud, sub, exp or nbf fails the policy, issuer keys that cannot be fetched, or the policy's key deleted, disabled or expired",
      429: 'temporarily_unavailable: more than TOKEN_EXCHANGES_PER_MINUTE exchanges from the address in a minute (Retry-After)',
      503: 'temporarily_unavailable: the signing key cannot be used (not made, or sealed with a secret key this server lacks); the counter store is unreachable and COUNTER_STORE_FAILURE_TOKEN_EXCHANGE is closed (Retry-After)',
    },
    'public',
  ),
  listed: [400, 429, 500, 503],
} as const satisfies RawOperation;

const exact = (value: string) => ({ type: 'string', enum: [value] });

/** Its OpenAPI entry: a form in, the Token answer or the OAuth error body out, no key. */
function tokenExchangeOperation(): Json {
  return {
    operationId: 'oauth-token',
    summary: 'Exchange a workload identity token for an access token',
    description:
      "RFC 8693 token exchange. A JWT signed by an identity provider that a federation policy of the organization trusts (signature, iss, aud, sub, exp and nbf checked) is exchanged for an ES256 access token valid for at most 900 seconds, and never beyond the subject token's expiry. The access token is a bearer on /api/v1 and /trpc with exactly the rights of the policy's key, until it expires; a key disabled or deleted refuses its tokens too. No key needed (an Authorization header is not read). Errors are the OAuth error body, not the envelope.",
    tags: ['Authorization'],
    security: [],
    requestBody: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            properties: {
              grant_type: exact('urn:ietf:params:oauth:grant-type:token-exchange'),
              subject_token: { type: 'string', description: 'The JWT issued by the trusted identity provider' },
              subject_token_type: exact('urn:ietf:params:oauth:token-type:jwt'),
              federation_policy_id: { type: 'string', description: 'The federation policy to evaluate; it binds the exchange to one organization' },
              requested_token_type: exact('urn:ietf:params:oauth:token-type:access_token'),
              scope: exact('inference'),
            },
            required: ['grant_type', 'subject_token', 'subject_token_type', 'federation_policy_id'],
          },
        },
      },
    },
    responses: {
      200: {
        description: 'The access token',
        headers: { 'Cache-Control': header('no-store') },
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${TOKEN_ANSWER}` } } },
      },
    },
  };
}

export const OAUTH_ROUTES: readonly RawRoute[] = [
  routeOf(TOKEN_EXCHANGE, {
    access: 'public',
    doc: { operation: tokenExchangeOperation() },
    async handle(deps: AppDeps, req: Request, res: Response) {
      // RFC 6749 §5.1: token answers are never cached.
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Pragma', 'no-cache');
      try {
        try {
          rawInputOf(TOKEN_EXCHANGE, req);
        } catch {
          req.resume();
          throw new OAuthError(400, 'invalid_request', 'POST /oauth/token takes no query parameters');
        }
        const form = await readForm(req);
        const answer = await exchangeToken(
          { db: deps.db, now: deps.now, limits: deps.limits, tokens: deps.identity.tokens, issuers: deps.identity.issuers },
          form,
          req.ip ?? req.socket.remoteAddress ?? 'unknown',
        );
        res.status(200).json(answer);
      } catch (caught) {
        if (caught instanceof OAuthError) {
          sendOAuthError(res, caught);
          return;
        }
        loggerOf(req, deps.logger).error({ err: caught, method: req.method, path: req.path }, 'internal error');
        if (res.headersSent) res.destroy();
        else sendOAuthError(res, new OAuthError(500, 'server_error', 'an unexpected failure'));
      }
    },
  }),
];
