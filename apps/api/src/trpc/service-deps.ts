// What a service is given (docs/decisions/0037, 0046). Services take one signature:
// `(deps, actor, input)`. `deps` is the part of ServiceDeps the service uses (`Uses<'db' | 'now'>`),
// the actor is who acts (a tenant's Actor, the platform's PlatformActor, a SCIM token's ScimCaller,
// the anonymous caller of a public exchange, or SERVER_ACTOR for work no key started), and the input
// is the operation's input. A procedure passes its context's `ctx.deps`; work no request started gives one
// through `withoutRequest` (access/callers.ts). test/http/service-signatures.test.ts keeps it so.
//
// This file declares what lies below the modules: the database, the clock, the secrets, the stored
// bytes, the callers' caches and the limits. Each module that builds something its services share
// (a cache, a recorder, a worker) adds it to ServiceDeps itself, in its index.ts, by declaration
// merging (`declare module '../../trpc/service-deps.js'`): so the modules import their deps' types
// from here, below them, and never from the composition that builds the app. The app's dependencies
// are the intersection of these parts; server.ts and the test server build them, and the compiler
// refuses a build that lacks any module's part.
import type { Db } from '@switchyard/db';
import type { AccessTokenVerifier, KeyCache } from '../access/callers.js';
import type { SessionLifetimes } from '../access/sessions.js';
import type { TrustProxy } from '../config.js';
import type { DatabaseHealth } from '../health/database-health.js';
import type { JobRunner } from '../jobs/runner.js';
import type { FairShareLimit } from '../lib/fair-share-limit.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from '../lib/metrics.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { ApiRateLimits } from '../limits/api-rate-limits.js';
import type { Limits } from '../limits/limits.js';
import type { MediaDeps } from '../storage/media.js';

/** The request a change comes from (trpc/context.ts gives these), for the audit log. */
export interface RequestOrigin {
  requestId(): string | null;
  clientAddress(): string | null;
  now(): Date;
}

/**
 * What a service is given first: the app's dependencies, and where the work comes from for the
 * audit log (a RequestOrigin: the request's id and client address; both null for work no request
 * started). A procedure's context holds its request's (ctx.deps). The modules' own parts are merged in by each module.
 */
export interface ServiceDeps extends RequestOrigin {
  db: Db;
  /** Whether the database is there, and since when (health/database-health.ts): /healthz and /readyz read it. */
  databaseHealth?: DatabaseHealth;
  logger: Logger;
  /** Encrypts secrets at rest (BYOK provider keys, destinations' headers, signing keys). */
  secrets: SecretBox;
  /** Stored bytes and the limits of files and media. */
  media: MediaDeps;
  /** Key rows by hash for authentication, kept up to CACHE_TTL_MS. */
  keys: KeyCache;
  /** Verifies the token exchange's access tokens (built by the auth module). */
  accessTokens: AccessTokenVerifier;
  /** People's sessions' idle and absolute lifetimes (SESSION_IDLE_TIMEOUT_MS, SESSION_MAX_AGE_MS; set by the sessions module). */
  sessionLifetimes: SessionLifetimes;
  /** The limiter: counted limits per key in the counter store (PostgreSQL, or COUNTER_STORE_URL's Redis). */
  limits: Limits;
  /** The API's rate limits for tenant keys (through `limits`, in allowances held by this process). */
  apiRateLimits: ApiRateLimits;
  /** Prometheus metrics (served on METRICS_PORT). */
  metrics: Metrics;
  /** The job runner: queued jobs (SCIM synchronizations) run in the background, once each. */
  jobs: JobRunner;
  /** The costliest other operations' share per organization (HEAVY_OPERATIONS_CONCURRENCY, trpc/init.ts); unset: no limit. */
  heavyOperations?: FairShareLimit;
  /** Express's "trust proxy" setting (TRUST_PROXY); unset: false. */
  trustProxy?: TrustProxy;
  /** Whether the client that asked has gone, so that nobody will read the answer (false for work no request started). */
  clientGone(): boolean;
}

/** The app's dependencies: what every request's ServiceDeps is made from (server.ts and the test server build them). */
export type AppDeps = Omit<ServiceDeps, 'requestId' | 'clientAddress' | 'clientGone'>;

/** The dependencies a service uses: `deps: Uses<'db' | 'now'>`. */
export type Uses<K extends keyof ServiceDeps> = Pick<ServiceDeps, K>;

/** The dependencies of an origin's keys, for a service that writes the audit log (auditOfTenant(actor, deps)). */
export type Audited = keyof RequestOrigin;
