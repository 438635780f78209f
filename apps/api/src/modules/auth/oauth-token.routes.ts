// POST /api/v1/oauth/token (platform-api.md D12, RFC 8693): a plain express route, because its body is
// a form (application/x-www-form-urlencoded) and its errors are the OAuth error body of RFC 6749
// §5.2, `{ error, error_description }`, not the envelope. No key: the subject token is the
// credential, and an Authorization header is not read. The exchange is token-exchange.ts; app.ts
// mounts the route through rawRoutes().
import type { Request, Response } from 'express';
import { OAuthError, exchangeToken } from './token-exchange.js';
import type { AppDeps } from '../../trpc/service-deps.js';
import type { RawRoute } from '../../raw-routes/route.js';
import { expressPath, rawInputOf, TOKEN_EXCHANGE } from '../../raw-routes/contracts.js';
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

export const OAUTH_ROUTES: readonly RawRoute[] = [
  {
    method: 'post',
    path: expressPath(TOKEN_EXCHANGE),
    access: 'public',
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
  },
];
