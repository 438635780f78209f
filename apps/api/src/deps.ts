// The composition root's list: every dependency the app is built from (server.ts and testing/test-server.ts
// build one). The tRPC context (trpc/context.ts), the REST face and the raw routes receive it; a
// request's context adds only what is the request's own.
//
// Services take one signature: `(deps, actor, input)` (docs/decisions/0037). `deps` is the part of
// ServiceDeps the service uses (`Uses<'db' | 'now'>`), the actor is who acts (a tenant's Actor, the
// platform's PlatformActor, a SCIM token's ScimCaller, the anonymous caller of a public exchange, or
// SERVER_ACTOR for work no key started), and the input is the operation's input. A procedure's
// context is a ServiceDeps; work no request started gives one through `withoutRequest` (access/callers.ts).
// test/http/service-signatures.test.ts keeps it so.
import type { DatabaseHealth } from './health/database-health.js';
import type { Db } from '@switchyard/db';
import type { Logger } from 'pino';
import type { SecretBox } from './modules/byok/secret-box.js';
import type { KeyCache } from './access/callers.js';
import type { SessionLifetimes } from './access/sessions.js';
import type { GenerationRecorder } from './modules/generations/recorder.js';
import type { CatalogCache } from './modules/models/catalog-cache.js';
import type { GuardrailCache } from './modules/guardrails/guardrail-cache.js';
import type { UsageCache } from './modules/keys/usage-cache.js';
import type { FairShareLimit } from './lib/fair-share-limit.js';
import type { AnalyticsWorkers } from './modules/analytics/analytics-workers.js';
import type { MemberOrderCache } from './modules/members/member-order.js';
import type { SpendCache } from './modules/routing/spend.js';
import type { WorkspaceRoutingCache } from './modules/routing/routing.service.js';
import type { FreeModelQuota } from './modules/routing/free-quota.js';
import type { Limits } from './limits/limits.js';
import type { ApiRateLimits } from './limits/api-rate-limits.js';
import type { RefusalEvents } from './modules/events/refusal-events.js';
import type { ByokReveals } from './modules/audit/byok-reveals.js';
import type { WorkloadIdentity } from './modules/auth/identity.js';
import type { JobRunner } from './jobs/runner.js';
import type { MediaDeps } from './storage/media.js';
import type { Metrics } from './lib/metrics.js';
import type { TrustProxy } from './config.js';
import type { RequestOrigin } from './modules/audit/audit.js';

export interface AppDeps {
  db: Db;
  /** Whether the database is there, and since when (health/database-health.ts): /healthz and /readyz read it. */
  databaseHealth?: DatabaseHealth;
  logger: Logger;
  /** The clock; tests fix it to check period edges. */
  now: () => Date;
  /** Encrypts secrets at rest (BYOK provider keys). */
  secrets: SecretBox;
  /** Stored bytes and the limits of files and media. */
  media: MediaDeps;
  /** Key rows by hash for authentication, kept up to CACHE_TTL_MS. */
  keys: KeyCache;
  /** People's sessions' idle and absolute lifetimes (SESSION_IDLE_TIMEOUT_MS, SESSION_MAX_AGE_MS; the sessions module). */
  sessionLifetimes: SessionLifetimes;
  /** The model catalog in memory, reloaded after CACHE_TTL_MS. */
  catalog: CatalogCache;
  /** Writes recorded generations in batches (group commit). */
  recorder: GenerationRecorder;
  /** Organizations' member order for GET /organization/members, kept up to CACHE_TTL_MS. */
  memberOrder: MemberOrderCache;
  /** The guardrails that apply to each key (GET /model's check), kept up to CACHE_TTL_MS. */
  guardrails: GuardrailCache;
  /** Each key's spend figures for GET /key, kept up to USAGE_CACHE_MS; forgotten when this process records for the key. */
  usage: UsageCache;
  /** Each workspace's budgets, BYOK credentials and settings for routing decisions, kept up to CACHE_TTL_MS. */
  workspaceRouting: WorkspaceRoutingCache;
  /** Limits' remaining amounts for decisions that hold nothing, kept up to USAGE_CACHE_MS. */
  spend: SpendCache;
  /** The limiter: counted limits per key in the counter store (PostgreSQL, or COUNTER_STORE_URL's Redis). */
  limits: Limits;
  /** The free-model quota per minute (through `limits`), with organizations' settings kept up to CACHE_TTL_MS. */
  freeQuota: FreeModelQuota;
  /** The API's rate limits for tenant keys (through `limits`, in allowances held by this process). */
  apiRateLimits: ApiRateLimits;
  /** How long a routing reservation holds its amount (RESERVATION_TTL_MS). */
  reservationTtlMs: number;
  /** routing.authorize's refusals as events in the outbox, written in batches off the request path. */
  refusalEvents: RefusalEvents;
  /** BYOK secrets revealed by routing.authorize, audited one entry per credential per hour (off the request path). */
  byokReveals: ByokReveals;
  /** Prometheus metrics (served on METRICS_PORT). */
  metrics: Metrics;
  /** Workload identity: signing keys, access tokens, issuers' keys (the token exchange). */
  identity: WorkloadIdentity;
  /** The job runner: queued jobs (SCIM synchronizations) run in the background, once each. */
  jobs: JobRunner;
  /** The time limit of one analytics query statement (ANALYTICS_QUERY_TIMEOUT_MS); unset: 10 s. */
  analyticsQueryTimeoutMs?: number;
  /** How many analytics queries run at once (ANALYTICS_CONCURRENCY); unset: no limit. */
  analyticsLimit?: FairShareLimit;
  /** The worker threads analytics statements run in, with their shaping (ANALYTICS_WORKER_THREADS). */
  analyticsWorkers: AnalyticsWorkers;
  /** How many GET /activity statements run at once (ANALYTICS_CONCURRENCY, slots of their own); unset: no limit. */
  activityLimit?: FairShareLimit;
  /** The costliest other operations' share per organization (HEAVY_OPERATIONS_CONCURRENCY, trpc/init.ts); unset: no limit. */
  heavyOperations?: FairShareLimit;
  /** Express's "trust proxy" setting (TRUST_PROXY); unset: false. */
  trustProxy?: TrustProxy;
}

/**
 * What a service is given first: the app's dependencies, and where the work comes from for the
 * audit log (a RequestOrigin: the request's id and client address; both null for work no request
 * started). A procedure's context is one.
 */
export interface ServiceDeps extends AppDeps, RequestOrigin {
  /** Whether the client that asked has gone, so that nobody will read the answer (false for work no request started). */
  clientGone(): boolean;
}

/** The dependencies a service uses: `deps: Uses<'db' | 'now'>`. */
export type Uses<K extends keyof ServiceDeps> = Pick<ServiceDeps, K>;

/** The dependencies of an origin's keys, for a service that writes the audit log (auditOfTenant(actor, deps)). */
export type Audited = keyof RequestOrigin;
