// A request's bearer token as authenticate() takes it: its SHA-256 (a key's secret is never kept),
// and the token itself only when it is shaped as an access token (a JWT), to be verified.
import type { IncomingMessage } from 'node:http';
import { hashApiKey, looksLikeJwt } from './key-format.js';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** What a request's bearer token is, for authenticate(): its hash, and itself when it is an access token (JWT). */
export interface Credential {
  keyHash: string | null;
  accessToken: string | null;
}

/** Reads the bearer token (its hash: a key's secret is never kept); the key itself is resolved lazily by authed procedures. */
export function credentialOf(req: IncomingMessage): Credential {
  const header = req.headers.authorization;
  const token = header ? BEARER.exec(header)?.[1] : undefined;
  if (!token) return { keyHash: null, accessToken: null };
  return { keyHash: hashApiKey(token), accessToken: looksLikeJwt(token) ? token : null };
}
