import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Db } from '@switchyard/db';
import type { Logger } from 'pino';
import type { SecretBox } from '../modules/byok/secret-box.js';
import type { KeyCache } from '../access/callers.js';
import type { GenerationRecorder } from '../modules/generations/recorder.js';
import type { CatalogCache } from '../modules/models/catalog-cache.js';
import type { MemberOrderCache } from '../modules/organization/member-order.js';
import { hashApiKey } from '../modules/keys/key-format.js';
import type { MediaDeps } from '../storage/media.js';
import type { Metrics } from '../metrics.js';
import { loggerOf } from '../http/request-log.js';

export interface AppDeps {
  db: Db;
  logger: Logger;
  /** The clock; tests fix it to check period edges. */
  now: () => Date;
  /** Encrypts secrets at rest (BYOK provider keys). */
  secrets: SecretBox;
  /** Stored bytes and the limits of files and media. */
  media: MediaDeps;
  /** Key rows by hash for authentication, kept up to CACHE_TTL_MS. */
  keys: KeyCache;
  /** The model catalog in memory, reloaded after CACHE_TTL_MS. */
  catalog: CatalogCache;
  /** Writes recorded generations in batches (group commit). */
  recorder: GenerationRecorder;
  /** Organizations' member order for GET /organization/members, kept up to CACHE_TTL_MS. */
  memberOrder: MemberOrderCache;
  /** Prometheus metrics (served on METRICS_PORT). */
  metrics: Metrics;
}

export interface Context extends AppDeps {
  /** SHA-256 of the bearer token, or null when the request carries none. */
  keyHash: string | null;
  /** The request's headers (e.g. promote picks its response shape from them). */
  headers: IncomingHttpHeaders;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Reads the bearer token's hash; the key itself is resolved lazily by authed procedures. */
export function keyHashOf(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = BEARER.exec(header);
  return match?.[1] ? hashApiKey(match[1]) : null;
}

/**
 * The origin the client used to reach us (scheme://host[:port]), for absolute URLs in answers such
 * as pagination links. Behind a proxy, X-Forwarded-Proto and X-Forwarded-Host name it.
 */
export function requestOrigin(headers: IncomingHttpHeaders): string {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
  const proto = first(headers['x-forwarded-proto']) === 'https' ? 'https' : 'http';
  const host = first(headers['x-forwarded-host']) || headers.host || 'localhost';
  return `${proto}://${host}`;
}

export function contextFactory(deps: AppDeps) {
  return ({ req, res }: { req: IncomingMessage; res: { locals?: Record<string, unknown> } }): Context => {
    const keyHash = keyHashOf(req);
    // The request log names the key by its hash, never by the key.
    if (res.locals) res.locals.keyHash = keyHash;
    return {
      ...deps,
      keyHash,
      headers: req.headers,
      // What a procedure logs carries the request's id (the child logger is made when first used).
      get logger() {
        return loggerOf(req, deps.logger);
      },
    };
  };
}
