// The one place that reads process.env. Every variable is validated at start; a bad value stops
// the server with a message naming the variable.
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { z } from 'zod';
import { DEFAULT_CONNECT_TIMEOUT_MS, maskedUrl } from '@switchyard/db';
import { LOG_FORMATS, LOG_LEVELS } from './lib/logger.js';
import { parseSecretKeyRing } from './lib/secret-box.js';
// The one import up the layers (config.ts sits below access/): the bootstrap and platform keys an
// operator supplies are checked against the key formats themselves, which authentication owns,
// rather than against a copy that could drift from them.
import { API_KEY_PATTERN, PLATFORM_KEY_PATTERN } from './access/key-format.js';
import { parseAllowedHosts, type AllowedHost } from './upstream/policy.js';

/** A variable read by `parse`; what it throws becomes the variable's message, with `hint`. */
function parsedWith<T>(parse: (value: string) => T, hint: string) {
  return z.string().transform((value, ctx) => {
    try {
      return parse(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `${(error as Error).message} (${hint})` });
      return z.NEVER;
    }
  });
}

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./.data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  LOG_FORMAT: z.enum(LOG_FORMATS).default('auto'),
  SWITCHYARD_BOOTSTRAP_KEY: z.string().regex(API_KEY_PATTERN, 'must be sk-sy-v1- followed by 64 lowercase hex characters').optional(),
  SWITCHYARD_PLATFORM_KEY: z.string().regex(PLATFORM_KEY_PATTERN, 'must be sk-sy-platform-v1- followed by 64 lowercase hex characters').optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(500).default(20),
  // How long a connection to DATABASE_URL may take (TCP, TLS, authentication) before it counts as failed.
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_CONNECT_TIMEOUT_MS),
  // When the database goes away (health/database-health.ts): how long /healthz stays 200 meanwhile,
  // and how many times the embedded PostgreSQL is started again before the server gives up.
  DATABASE_UNHEALTHY_AFTER_MS: z.coerce.number().int().min(0).max(86_400_000).default(30_000),
  DATABASE_RESTART_ATTEMPTS: z.coerce.number().int().min(1).max(1_000).default(10),
  CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(1_000),
  USAGE_CACHE_MS: z.coerce.number().int().min(0).max(1_000).default(250),
  DECIDER_HEARTBEAT_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
  DECIDER_CHANGE_BUFFER: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  RESERVATION_TTL_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(600_000),
  RESERVATION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  // The job runner (jobs/runner.ts): how often each replica looks for queued jobs, and how long it holds one.
  JOB_POLL_MS: z.coerce.number().int().min(0).max(3_600_000).default(1_000),
  JOB_LEASE_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(300_000),
  KEY_EXPIRY_SCAN_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(600_000),
  // Delivery of events to destinations (modules/events/delivery.ts, decision 0025).
  DELIVERY_POLL_MS: z.coerce.number().int().min(0).max(3_600_000).default(1_000),
  DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  DELIVERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  // The audit log (docs/audit.md): entries older than this many days are deleted (0: kept forever), looked for this often.
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(365),
  AUDIT_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(3_600_000),
  // People's sessions (docs/sessions.md): unused this long, a session ends; used or not, it ends this long after sign-in.
  SESSION_IDLE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(2_592_000_000).default(1_800_000),
  SESSION_MAX_AGE_MS: z.coerce.number().int().min(1_000).max(31_536_000_000).default(43_200_000),
  SESSION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(600_000),
  // Generation content past each organization's retention (docs/operations.md#retention) is looked for this often.
  CONTENT_RETENTION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(3_600_000),
  // The limiter (limits/): its counters live in PostgreSQL unless this names a Redis or Valkey server.
  COUNTER_STORE_URL: z
    .string()
    .regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL (Redis or Valkey); unset keeps the counters in PostgreSQL')
    .optional(),
  // While the counter store cannot be reached, each caller of the limiter fails open (allows,
  // uncounted) or closed (503 with Retry-After): this for all of them, each _<CALLER> for its own.
  COUNTER_STORE_FAILURE: z.enum(['open', 'closed']).optional(),
  COUNTER_STORE_FAILURE_API_RATE_LIMITS: z.enum(['open', 'closed']).optional(),
  COUNTER_STORE_FAILURE_FREE_MODELS: z.enum(['open', 'closed']).optional(),
  COUNTER_STORE_FAILURE_TOKEN_EXCHANGE: z.enum(['open', 'closed']).optional(),
  FREE_MODEL_REQUESTS_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(20),
  // The API's rate limits for tenant keys (docs/rate-limits.md): per key, and per organization for all its keys together.
  API_REQUESTS_PER_MINUTE_PER_KEY: z.coerce.number().int().min(1).max(100_000_000).default(600_000),
  API_REQUESTS_PER_MINUTE_PER_ORGANIZATION: z.coerce.number().int().min(1).max(100_000_000).default(1_200_000),
  // The token exchange (POST /oauth/token): exchanges per client address per minute, and how long a signing key signs.
  TOKEN_EXCHANGES_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(60),
  SIGNING_KEY_ROTATION_DAYS: z.coerce.number().min(0.001).max(365).default(30),
  SWITCHYARD_SECRET_KEY: parsedWith(parseSecretKeyRing, 'comma-separated for rotation, newest first').optional(),
  // Files and media (container files, promoted documents, video downloads).
  STORAGE_QUOTA_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .default(10 * 1024 ** 3),
  MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .default(100 * 1024 ** 2),
  CONTAINER_FILE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .default(1024 ** 3),
  UPSTREAM_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(10_000),
  UPSTREAM_IDLE_TIMEOUT_MS: z.coerce.number().int().min(1).max(3_600_000).default(30_000),
  UPSTREAM_MIN_BYTES_PER_SECOND: z.coerce
    .number()
    .int()
    .min(0)
    .max(1024 ** 3)
    .default(1024),
  UPSTREAM_RATE_WINDOW_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  UPSTREAM_ALLOWED_HOSTS: parsedWith(parseAllowedHosts, 'comma-separated host[:port]').default([]),
  // Where stored bytes live: unset or file://<dir> (a local directory), s3://<bucket>[/<prefix>].
  STORAGE_URL: z
    .string()
    .regex(
      /^(file:\/\/.+|s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/([A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/?)?)?)$/,
      'must be file://<directory> or s3://<bucket>[/<prefix>] (prefix segments of A-Z a-z 0-9 . _ -)',
    )
    .optional(),
  STORAGE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(600_000),
  ANALYTICS_QUERY_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(10_000),
  ANALYTICS_CONCURRENCY: z.coerce.number().int().min(1).max(100).optional(),
  // Worker threads that run analytics statements and shape their answers, off the event loop.
  ANALYTICS_WORKER_THREADS: z.coerce.number().int().min(1).max(16).default(1),
  // GET /keys, GET /organization/members and the bulk guardrail assignments at once per process (one organization: half).
  HEAVY_OPERATIONS_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(8),
  // The AWS SDK's standard variables, for STORAGE_URL=s3://...
  AWS_ACCESS_KEY_ID: z.string().optional(),
  AWS_SECRET_ACCESS_KEY: z.string().optional(),
  AWS_SESSION_TOKEN: z.string().optional(),
  AWS_REGION: z.string().optional(),
  AWS_ENDPOINT_URL_S3: z.url({ protocol: /^https?$/ }).optional(),
  AWS_ENDPOINT_URL: z.url({ protocol: /^https?$/ }).optional(),
  S3_FORCE_PATH_STYLE: z.enum(['0', '1', 'true', 'false']).default('0'),
  // Operations.
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().min(1).optional(),
  CORS_ORIGINS: z
    .string()
    .transform((value, ctx) => {
      const origins = value
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean);
      for (const origin of origins) {
        if (origin === '*') continue;
        let parsed: URL | undefined;
        try {
          parsed = new URL(origin);
        } catch {
          parsed = undefined;
        }
        if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin) {
          ctx.addIssue({ code: 'custom', message: `"${origin}" is not an origin (scheme://host[:port], no path or trailing slash), nor *` });
        }
      }
      return origins;
    })
    .optional(),
  TRUST_PROXY: parsedWith(
    trustProxySetting,
    `express's "trust proxy": true, false, a hop count, or addresses, subnets and loopback/linklocal/uniquelocal, comma-separated`,
  ).default(false),
});

/** TRUST_PROXY as express's "trust proxy" setting: true/false, a number of hops, or a list of addresses. */
export type TrustProxy = boolean | number | string;

/** What each caller of the limiter does while the counter store cannot be reached (docs/configuration.md). */
export interface CounterStoreFailure {
  apiRateLimits: 'open' | 'closed';
  freeModels: 'open' | 'closed';
  tokenExchange: 'open' | 'closed';
}

/**
 * Each caller's default: the API's rate limits fail open (a store outage must not take the whole
 * API down with it, and the limits only shape traffic); free-model decisions and the token
 * exchange fail closed (their limits are the only bound on free capacity and on exchanges from an
 * address, and the caller is told when to try again).
 */
export const COUNTER_STORE_FAILURE_DEFAULTS: CounterStoreFailure = { apiRateLimits: 'open', freeModels: 'closed', tokenExchange: 'closed' };

function trustProxySetting(value: string): TrustProxy {
  const trimmed = value.trim();
  const setting = trimmed === 'true' || trimmed === 'false' ? trimmed === 'true' : /^\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
  // express compiles the setting when it is set: what it refuses is refused here, at start.
  express().set('trust proxy', setting);
  return setting;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  /** auto: readable lines when stdout is a terminal, JSON lines otherwise. */
  logFormat: z.infer<typeof EnvSchema>['LOG_FORMAT'];
  bootstrapKey: string | undefined;
  /** A platform key that must exist; unset: one is generated on first start into DATA_DIR/platform-key. */
  platformKey: string | undefined;
  databasePoolMax: number;
  /** How long a connection to the database may take before it counts as failed (DATABASE_CONNECT_TIMEOUT_MS). */
  databaseConnectTimeoutMs: number;
  /** How long the database may be gone before /healthz answers 503 (DATABASE_UNHEALTHY_AFTER_MS). */
  databaseUnhealthyAfterMs: number;
  /** How many times a dead embedded PostgreSQL is started again before the server exits (DATABASE_RESTART_ATTEMPTS). */
  databaseRestartAttempts: number;
  /**
   * How long what is read into memory may be reused (0: read every time): API key rows for
   * authentication, the model catalog, organizations' member order. Changes made through this
   * process apply at once; changes made elsewhere as soon as their announcement arrives
   * (cache-events.ts), and within this time if it is lost.
   */
  cacheTtlMs: number;
  /**
   * How long GET /key may reuse a key's spend figures. Recordings made through this process apply
   * at once; recordings made through another replica within this time (at most 1 s).
   */
  usageCacheMs: number;
  /** How often the deciders' change stream says it is alive when nothing changes (DECIDER_HEARTBEAT_MS). */
  deciderHeartbeatMs: number;
  /** How many changes are kept for deciders that reconnect (DECIDER_CHANGE_BUFFER). */
  deciderChangeBuffer: number;
  /** How long a routing reservation holds its amount unless settled or released (RESERVATION_TTL_MS). */
  reservationTtlMs: number;
  /** How often expired reservations are deleted (RESERVATION_SWEEP_INTERVAL_MS); 0: never. */
  reservationSweepIntervalMs: number;
  /** How often each replica looks for queued jobs (JOB_POLL_MS; 0: only when this replica queues one). */
  jobPollMs: number;
  /** How long a replica holds a queued job before another may take it again (JOB_LEASE_MS). */
  jobLeaseMs: number;
  /** How often keys about to expire are looked for, for their key.expiring events (KEY_EXPIRY_SCAN_INTERVAL_MS; 0: never). */
  keyExpiryScanIntervalMs: number;
  /** How often events are dispatched to destinations and due deliveries looked for (DELIVERY_POLL_MS; 0: never). */
  deliveryPollMs: number;
  /** Delivery attempts running at once per server (DELIVERY_CONCURRENCY). */
  deliveryConcurrency: number;
  /** One delivery attempt's deadline, connection to last byte (DELIVERY_TIMEOUT_MS). */
  deliveryTimeoutMs: number;
  /** How many days audit log entries are kept (AUDIT_RETENTION_DAYS, default 365; 0: forever). */
  auditRetentionDays: number;
  /** How often the audit log's retention sweep runs (AUDIT_SWEEP_INTERVAL_MS, default an hour; 0: never). */
  auditSweepIntervalMs: number;
  /** A session unused this long ends (SESSION_IDLE_TIMEOUT_MS, default 30 minutes). */
  sessionIdleTimeoutMs: number;
  /** A session ends this long after its sign-in, used or not (SESSION_MAX_AGE_MS, default 12 hours). */
  sessionMaxAgeMs: number;
  /** How often ended and expired sessions are deleted (SESSION_SWEEP_INTERVAL_MS, default 10 minutes; 0: never). */
  sessionSweepIntervalMs: number;
  /** How often the content retention sweep runs (CONTENT_RETENTION_SWEEP_INTERVAL_MS, default an hour; 0: never). */
  contentRetentionSweepIntervalMs: number;
  /** Where the limiter's counters live (COUNTER_STORE_URL): a Redis or Valkey URL; undefined: PostgreSQL. */
  counterStoreUrl: string | undefined;
  /**
   * Free-model requests a key may make per minute (FREE_MODEL_REQUESTS_PER_MINUTE) unless its
   * organization's settings row says otherwise; 0: none.
   */
  freeModelRequestsPerMinute: number;
  /**
   * The API's rate limits for tenant keys, unless an organization's settings row says otherwise
   * (docs/rate-limits.md): requests per minute per key (API_REQUESTS_PER_MINUTE_PER_KEY) and for
   * all of an organization's keys together (API_REQUESTS_PER_MINUTE_PER_ORGANIZATION).
   */
  apiRequestsPerMinute: { key: number; organization: number };
  /** Token exchanges (POST /oauth/token) a client address may make per minute (TOKEN_EXCHANGES_PER_MINUTE); 0: none. */
  tokenExchangesPerMinute: number;
  /**
   * What each caller of the limiter does while the counter store cannot be reached: `open` allows
   * uncounted, `closed` answers 503 with Retry-After (a routing decision: the limits_unavailable
   * refusal). COUNTER_STORE_FAILURE_<CALLER>, else COUNTER_STORE_FAILURE, else the caller's default
   * (COUNTER_STORE_FAILURE_DEFAULTS).
   */
  counterStoreFailure: CounterStoreFailure;
  /** How long one of Switchyard's token-signing keys signs before a new one takes over (SIGNING_KEY_ROTATION_DAYS). */
  signingKeyRotationMs: number;
  /** Keys that encrypt secrets at rest (first seals, all open); unset: DATA_DIR/secret-key. */
  secretKeys: Buffer[] | undefined;
  media: MediaConfig;
  /**
   * Express's "trust proxy": which peers' X-Forwarded-Proto / X-Forwarded-Host are believed when
   * the server writes absolute links (links.next). false: none, the Host header only.
   */
  trustProxy: TrustProxy;
  /** Where stored bytes live. */
  storage: StorageConfig;
  /** How often a replica tries to sweep unreferenced objects and abandoned uploads (0: never). */
  storageSweepIntervalMs: number;
  /** The time limit of one POST /analytics/query statement; past it the answer is 408. */
  analyticsQueryTimeoutMs: number;
  /** POST /analytics/query statements run at once (fewer than the pool's connections); one organization's at most half (rounded up). */
  analyticsConcurrency: number;
  /** GET /activity's statements at once: as many, but not past the connections analytics leaves but one; at least 1. */
  activityConcurrency: number;
  /** Worker threads running analytics statements and shaping their answers (ANALYTICS_WORKER_THREADS, default 1). */
  analyticsWorkerThreads: number;
  /** GET /keys, GET /organization/members and the bulk guardrail assignments at once (HEAVY_OPERATIONS_CONCURRENCY); one organization's at most half. */
  heavyOperationsConcurrency: number;
  /** Where GET /metrics is served (its own listener, never the public port); undefined: nowhere. */
  metrics: { port: number; host: string } | undefined;
  /** Origins allowed to call from a browser (CORS); empty: CORS is off. `*`: any origin. */
  corsOrigins: string[];
}

export type StorageConfig = { kind: 'local'; root: string } | S3StorageConfig;

export interface S3StorageConfig {
  kind: 's3';
  bucket: string;
  /** '' or segments ending with '/'. */
  prefix: string;
  /** Unset: the AWS SDK resolves it (profile files, instance metadata). */
  region: string | undefined;
  endpoint: string | undefined;
  forcePathStyle: boolean;
  /** Unset: the AWS SDK's default credential chain (profile files, instance or container roles). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
}

export interface MediaConfig {
  /** Default storage quota of a workspace whose storage_quota_bytes is null. */
  storageQuotaBytes: number;
  /** Largest file that promote copies into a workspace. */
  maxFileBytes: number;
  /** Largest file the sandbox runner may write into a container. */
  containerFileMaxBytes: number;
  upstreamConnectTimeoutMs: number;
  upstreamIdleTimeoutMs: number;
  /** A provider averaging fewer bytes per second than this over upstreamRateWindowMs is cut off (0: never). */
  upstreamMinBytesPerSecond: number;
  upstreamRateWindowMs: number;
  /** Hosts whose addresses upstream fetches do not check (UPSTREAM_ALLOWED_HOSTS). */
  upstreamAllowedHosts: AllowedHost[];
  /** The address the server listens on (HOST): upstream fetches never reach the server itself. */
  listenHost: string;
}

export class ConfigError extends Error {}

/** The last line of every configuration error: what to do about it. */
export const CONFIG_FIX = 'Fix or unset each variable named above (docs/configuration.md gives its rule and default), then start again.';

/** Settings that are secrets as a whole: an error gives their length, never their value. */
export const SECRET_SETTINGS = new Set([
  'SWITCHYARD_SECRET_KEY',
  'SWITCHYARD_BOOTSTRAP_KEY',
  'SWITCHYARD_PLATFORM_KEY',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
]);
/** URLs that may carry a password or other credentials: an error shows them with these masked. */
export const URL_SETTINGS = new Set(['DATABASE_URL', 'COUNTER_STORE_URL', 'STORAGE_URL']);

/** `NAME="value"` as an error may show it: a secret's length instead of its value, a URL's password masked. */
export function shownSetting(name: string, value: string | undefined): string {
  if (value === undefined) return `${name} (unset)`;
  if (SECRET_SETTINGS.has(name)) return `${name} (${value.length} characters, not shown)`;
  if (URL_SETTINGS.has(name)) return `${name}=${JSON.stringify(maskedUrl(value, name === 'STORAGE_URL'))}`;
  return `${name}=${JSON.stringify(value)}`;
}

function storageConfig(e: z.infer<typeof EnvSchema>, dataDir: string): StorageConfig {
  const url = e.STORAGE_URL;
  if (!url) return { kind: 'local', root: path.join(dataDir, 'blobs') };
  if (url.startsWith('file://')) return { kind: 'local', root: path.resolve(url.slice('file://'.length)) };
  const [bucket = '', ...segments] = url.slice('s3://'.length).split('/').filter(Boolean);
  const endpoint = e.AWS_ENDPOINT_URL_S3 ?? e.AWS_ENDPOINT_URL;
  return {
    kind: 's3',
    bucket,
    prefix: segments.map((segment) => `${segment}/`).join(''),
    // An S3-compatible endpoint rarely cares about the region, but the SDK needs one.
    region: e.AWS_REGION ?? (endpoint ? 'us-east-1' : undefined),
    endpoint,
    forcePathStyle: e.S3_FORCE_PATH_STYLE === '1' || e.S3_FORCE_PATH_STYLE === 'true',
    credentials:
      e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
        ? {
            accessKeyId: e.AWS_ACCESS_KEY_ID,
            secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
            ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}),
          }
        : undefined,
  };
}

/** `cpus`: the cores this process may use, which size ANALYTICS_CONCURRENCY's default. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cpus = os.availableParallelism()): Config {
  // An empty variable means "not set", as in most shells' habits (FOO= cmd).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0]);
      return `  ${shownSetting(name, env[name])}: ${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}\n${CONFIG_FIX}`);
  }
  const e = parsed.data;
  if ((e.AWS_ACCESS_KEY_ID === undefined) !== (e.AWS_SECRET_ACCESS_KEY === undefined)) {
    throw new ConfigError(`Invalid configuration:\n  AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both or neither\n${CONFIG_FIX}`);
  }
  // Fewer than the pool's connections (but at least one), so that analytics never holds them all:
  // 4, or one less than a smaller pool. Analytics queries by default no more than the cores, from 2
  // (so that one organization's query never waits for all of another's): each keeps a database
  // process busy, then the worker thread, and more at once than the cores only share the CPU that
  // every other organization's requests need (decision 0040).
  const slots = e.ANALYTICS_CONCURRENCY ?? Math.max(1, Math.min(4, e.DATABASE_POOL_MAX - 1));
  const analyticsConcurrency = e.ANALYTICS_CONCURRENCY ?? Math.min(slots, Math.max(2, cpus));
  if (e.DATABASE_POOL_MAX > 1 && analyticsConcurrency >= e.DATABASE_POOL_MAX) {
    throw new ConfigError(
      `Invalid configuration:\n  ANALYTICS_CONCURRENCY=${e.ANALYTICS_CONCURRENCY}: must be less than DATABASE_POOL_MAX (${e.DATABASE_POOL_MAX}), so that analytics queries never hold every pooled connection\n${CONFIG_FIX}`,
    );
  }
  // GET /activity's short statements get slots of their own (`slots`, whatever the cores: fewer cost
  // it answers a second, decision 0040), unless the two kinds together would hold
  // every pooled connection: then what analytics leaves but one (at least 1).
  const activityConcurrency = Math.max(1, Math.min(slots, e.DATABASE_POOL_MAX - 1 - analyticsConcurrency));
  const dataDir = path.resolve(e.DATA_DIR);
  if (e.SESSION_IDLE_TIMEOUT_MS > e.SESSION_MAX_AGE_MS) {
    throw new ConfigError(
      `Invalid configuration:\n  ${shownSetting('SESSION_IDLE_TIMEOUT_MS', env.SESSION_IDLE_TIMEOUT_MS)}: must be at most SESSION_MAX_AGE_MS (${e.SESSION_MAX_AGE_MS}; the idle timeout is ${e.SESSION_IDLE_TIMEOUT_MS}), since no use moves a session past its absolute end: lower it or raise SESSION_MAX_AGE_MS\n${CONFIG_FIX}`,
    );
  }
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && e.METRICS_PORT === e.PORT) {
    throw new ConfigError(
      `Invalid configuration:\n  METRICS_PORT=${JSON.stringify(env.METRICS_PORT)}: must differ from PORT (metrics are never served on the public port)\n${CONFIG_FIX}`,
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    bootstrapKey: e.SWITCHYARD_BOOTSTRAP_KEY,
    platformKey: e.SWITCHYARD_PLATFORM_KEY,
    databasePoolMax: e.DATABASE_POOL_MAX,
    databaseConnectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
    databaseUnhealthyAfterMs: e.DATABASE_UNHEALTHY_AFTER_MS,
    databaseRestartAttempts: e.DATABASE_RESTART_ATTEMPTS,
    cacheTtlMs: e.CACHE_TTL_MS,
    usageCacheMs: e.USAGE_CACHE_MS,
    deciderHeartbeatMs: e.DECIDER_HEARTBEAT_MS,
    deciderChangeBuffer: e.DECIDER_CHANGE_BUFFER,
    reservationTtlMs: e.RESERVATION_TTL_MS,
    reservationSweepIntervalMs: e.RESERVATION_SWEEP_INTERVAL_MS,
    jobPollMs: e.JOB_POLL_MS,
    jobLeaseMs: e.JOB_LEASE_MS,
    keyExpiryScanIntervalMs: e.KEY_EXPIRY_SCAN_INTERVAL_MS,
    deliveryPollMs: e.DELIVERY_POLL_MS,
    deliveryConcurrency: e.DELIVERY_CONCURRENCY,
    deliveryTimeoutMs: e.DELIVERY_TIMEOUT_MS,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    auditSweepIntervalMs: e.AUDIT_SWEEP_INTERVAL_MS,
    sessionIdleTimeoutMs: e.SESSION_IDLE_TIMEOUT_MS,
    sessionMaxAgeMs: e.SESSION_MAX_AGE_MS,
    sessionSweepIntervalMs: e.SESSION_SWEEP_INTERVAL_MS,
    contentRetentionSweepIntervalMs: e.CONTENT_RETENTION_SWEEP_INTERVAL_MS,
    counterStoreUrl: e.COUNTER_STORE_URL,
    freeModelRequestsPerMinute: e.FREE_MODEL_REQUESTS_PER_MINUTE,
    apiRequestsPerMinute: { key: e.API_REQUESTS_PER_MINUTE_PER_KEY, organization: e.API_REQUESTS_PER_MINUTE_PER_ORGANIZATION },
    tokenExchangesPerMinute: e.TOKEN_EXCHANGES_PER_MINUTE,
    counterStoreFailure: {
      apiRateLimits: e.COUNTER_STORE_FAILURE_API_RATE_LIMITS ?? e.COUNTER_STORE_FAILURE ?? COUNTER_STORE_FAILURE_DEFAULTS.apiRateLimits,
      freeModels: e.COUNTER_STORE_FAILURE_FREE_MODELS ?? e.COUNTER_STORE_FAILURE ?? COUNTER_STORE_FAILURE_DEFAULTS.freeModels,
      tokenExchange: e.COUNTER_STORE_FAILURE_TOKEN_EXCHANGE ?? e.COUNTER_STORE_FAILURE ?? COUNTER_STORE_FAILURE_DEFAULTS.tokenExchange,
    },
    signingKeyRotationMs: Math.round(e.SIGNING_KEY_ROTATION_DAYS * 86_400_000),
    secretKeys: e.SWITCHYARD_SECRET_KEY,
    trustProxy: e.TRUST_PROXY,
    media: {
      storageQuotaBytes: e.STORAGE_QUOTA_BYTES,
      maxFileBytes: e.MAX_FILE_BYTES,
      containerFileMaxBytes: e.CONTAINER_FILE_MAX_BYTES,
      upstreamConnectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
      upstreamIdleTimeoutMs: e.UPSTREAM_IDLE_TIMEOUT_MS,
      upstreamMinBytesPerSecond: e.UPSTREAM_MIN_BYTES_PER_SECOND,
      upstreamRateWindowMs: e.UPSTREAM_RATE_WINDOW_MS,
      upstreamAllowedHosts: e.UPSTREAM_ALLOWED_HOSTS,
      listenHost: e.HOST,
    },
    storage: storageConfig(e, dataDir),
    storageSweepIntervalMs: e.STORAGE_SWEEP_INTERVAL_MS,
    analyticsQueryTimeoutMs: e.ANALYTICS_QUERY_TIMEOUT_MS,
    analyticsConcurrency,
    activityConcurrency,
    analyticsWorkerThreads: e.ANALYTICS_WORKER_THREADS,
    heavyOperationsConcurrency: e.HEAVY_OPERATIONS_CONCURRENCY,
    metrics: e.METRICS_PORT === undefined ? undefined : { port: e.METRICS_PORT, host: e.METRICS_HOST ?? e.HOST },
    corsOrigins: e.CORS_ORIGINS ?? [],
  };
}
