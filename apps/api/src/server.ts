// Boots the whole server from a Config: database (embedded or external), migrations, bootstrap,
// the modules, HTTP. main.ts wires it to the process; tests start it in-process.
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createDb, migrate, poolStats, provisionDatabase, type DatabaseHandle, type Db, type DbOptions } from '@switchyard/db';
import type { Express } from 'express';
import { KeyCache, SERVER_ACTOR, withoutRequest } from './access/callers.js';
import { createApp } from './app.js';
import { listenForCacheEvents } from './cache-events.js';
import type { Config } from './config.js';
import { DatabaseHealth, type DatabaseState } from './health/database-health.js';
import { answerClientErrors } from './http/client-error.js';
import { JobRunner } from './jobs/runner.js';
import { FairShareLimit } from './lib/fair-share-limit.js';
import type { Logger } from './lib/logger.js';
import { Metrics, metricsServer } from './lib/metrics.js';
import { Resources } from './lib/resources.js';
import { VERSION } from './lib/version.js';
import { API_KEY_MINUTE, API_ORGANIZATION_MINUTE, ApiRateLimits, apiRateLimitRules } from './limits/api-rate-limits.js';
import { OrganizationLimitSettings } from './limits/limit-settings.js';
import { CounterStoreUnavailable, Limits, redactedUrl } from './limits/limits.js';
import { createModules } from './modules.js';
import { TOKEN_EXCHANGE_LIMIT } from './modules/auth/token-exchange.js';
import { loadSecretBox } from './lib/secret-box.js';
import type { Deliveries } from './modules/events/index.js';
import { bootstrap, type BootstrapSecret } from './modules/organizations/bootstrap.service.js';
import { FREE_MODEL_MINUTE, freeModelMinuteRule } from './modules/routing/free-quota.js';
import { createMedia } from './storage/media.js';
import type { BlobStorage } from './storage/storage.js';
import type { SweepOptions, SweepReport } from './storage/sweep.js';

export interface RunningServer {
  url: string;
  port: number;
  db: Db;
  databaseUrl: string;
  /** Where stored bytes live (STORAGE_URL). */
  storage: BlobStorage;
  /** Runs one storage sweep now; null when another replica holds the sweep's lock. */
  sweepStorage(options?: SweepOptions): Promise<SweepReport | null>;
  /** http://host:port/metrics when METRICS_PORT is set. */
  metricsUrl: string | undefined;
  /** The job runner (periodic and queued jobs); tests drain its queue. */
  jobs: JobRunner;
  /** Whether the database is there (tests watch it go and come back). */
  databaseHealth: DatabaseHealth;
  /** Delivery of events to destinations (the events module's): tests dispatch and deliver with the poll off. */
  deliveries: Deliveries;
  /**
   * Stops accepting, drains in-flight requests, closes the cache listener, stops the job runner,
   * then the modules in reverse (what they hold pending is written: refusal events, secrets' last
   * uses, BYOK reveals), the limits, then the pool and embedded PostgreSQL.
   */
  close(): Promise<void>;
}

export const ADMIN_KEY_FILE = 'admin-key';
export const PLATFORM_KEY_FILE = 'platform-key';

/** Writes a secret to DATA_DIR/<name> (mode 0600, atomically). */
async function writeSecretFile(dataDir: string, name: string, secret: string): Promise<string> {
  await fs.mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, name);
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, `${secret}\n`, { mode: 0o600 });
  await fs.rename(tmp, file);
  return file;
}

/**
 * A generated key goes to its file, and the log says where, with the key's masked label: no secret
 * is ever written to the log. A key the operator supplied (environment) is only named.
 */
async function announceKey(logger: Logger, dataDir: string, file: string, what: string, made: BootstrapSecret, fields: object) {
  if (!made.generated) {
    logger.info({ ...fields, label: made.label }, `registered the ${what} from the environment`);
    return;
  }
  try {
    const written = await writeSecretFile(dataDir, file, made.secret);
    logger.warn({ ...fields, label: made.label, file: written }, `created the ${what}; its secret is in ${written}`);
  } catch (error) {
    logger.error({ err: error, ...fields, label: made.label }, `could not write the ${what} file: the key exists but its secret is lost`);
  }
}

/**
 * Listens, or rejects with a message an operator can act on (the port is taken, the address is not
 * this machine's, ...). `variable` names the setting to change.
 */
export async function listen(server: net.Server, port: number, host: string, variable: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      const reason =
        error.code === 'EADDRINUSE'
          ? `${where} is already in use: stop what listens there, or set ${variable} to another port`
          : error.code === 'EACCES'
            ? `no permission to listen on ${where}: choose a port above 1023 with ${variable}`
            : error.code === 'EADDRNOTAVAIL'
              ? `${host} is not an address of this machine: check HOST`
              : `cannot listen on ${where}: ${error.message}`;
      reject(new Error(reason, { cause: error }));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * Finds out, before anything is written, whether `port` can be listened on: listens and closes at
 * once (port 0, any free port, always can). The real listen comes once the server is built.
 */
export async function probePort(port: number, host: string, variable: string): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  await listen(probe, port, host, variable);
  await new Promise((resolve) => probe.close(resolve));
}

/**
 * Makes the directory `dir` (DATA_DIR) unless it exists, or throws a message naming `variable`,
 * what is wrong and what to do. The nearest existing ancestor must be a directory this user may
 * write into; then each missing level is made one at a time, never with mkdir's recursive option
 * (which spins forever under /proc).
 */
export async function ensureDirectory(dir: string, variable: string): Promise<void> {
  const named = `${variable}=${JSON.stringify(dir)}`;
  const missing: string[] = [];
  let existing = dir;
  for (;;) {
    const stat = await fs.stat(existing).catch((error: NodeJS.ErrnoException) => {
      // ENOTDIR: a level above is a file, which the walk up reports.
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
      throw new Error(`${named}: cannot read ${existing} (${error.code}): choose a directory this user may use`, { cause: error });
    });
    if (stat) {
      if (!stat.isDirectory()) throw new Error(`${named}: ${existing} is not a directory: choose a directory (or a path where one can be made)`);
      break;
    }
    missing.unshift(existing);
    const parent = path.dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  try {
    await fs.access(existing, fsConstants.W_OK | fsConstants.X_OK);
  } catch (error) {
    throw new Error(
      `${named}: this user (uid ${process.getuid?.() ?? '?'}) cannot write into ${existing} (${(error as NodeJS.ErrnoException).code}): choose another directory, or give this user access`,
      { cause: error },
    );
  }
  for (const level of missing) {
    try {
      await fs.mkdir(level, { mode: 0o755 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      throw new Error(`${named}: cannot make the directory ${level} (${code}): choose a directory on a writable file system`, { cause: error });
    }
  }
}

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

/** http://host:port of a listening server (0.0.0.0 is reached at 127.0.0.1). */
function urlOf(server: Server, configuredHost: string): string {
  const port = portOf(server);
  const host = configuredHost === '0.0.0.0' ? '127.0.0.1' : configuredHost === '::' ? '::1' : configuredHost;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Stops accepting and waits for in-flight requests; those still running after 10 s are cut. A
 * keep-alive connection whose request ends during the drain (an answer sent, a stream ended) is
 * closed once it is idle: server.close() closes only those idle when it is called, and would leave
 * the others to their keep-alive timeout (or a client to send another request on them).
 */
function drain(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50).unref();
    server.close(() => {
      clearInterval(idle);
      resolve();
    });
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 10_000).unref();
  });
}

/** Options of startServer beyond its Config. */
export interface StartOptions {
  now?: () => Date;
  /** Told about every statement the server's pool sends (tests count them). */
  onQuery?: DbOptions['onQuery'];
  /**
   * Told when the server gave up on its database (the embedded PostgreSQL could not be started
   * again): main.ts closes the server and exits non-zero, for a supervisor to take over.
   */
  onFatal?: (error: Error) => void;
}

/** What stops while the database is gone and starts again once it is back. */
interface Background {
  stop(): Promise<void>;
  start(): void;
}

/**
 * The database's health. Its probe asks the client `connected` is given; while the database is
 * gone, the background work set with `whileDown` stops (each round would only fail), and starts
 * again once it is back (the changes are applied one after another).
 */
function watchDatabase(config: Config, logger: Logger, database: DatabaseHandle, onFatal: StartOptions['onFatal']) {
  let db: Db | undefined;
  let background: Background | undefined;
  let transitions = Promise.resolve();
  const health = new DatabaseHealth({
    // Bounded: a connection that hangs (a firewall, something else on the port) counts as gone.
    probe: async () => {
      if (!db) throw new Error('no database client yet');
      await Promise.race([
        db.$executeRaw`SELECT 1`,
        new Promise((_, reject) => setTimeout(() => reject(new Error('no answer to SELECT 1 within 5 s')), 5_000).unref()),
      ]);
    },
    ...(database.embedded ? { restart: () => database.embedded!.restart() } : {}),
    maxRestarts: config.databaseRestartAttempts,
    unhealthyAfterMs: config.databaseUnhealthyAfterMs,
    logger,
    changed: (state: DatabaseState, error?: Error) => {
      if (state === 'given up') {
        onFatal?.(error ?? new Error('the database is gone'));
        return;
      }
      transitions = transitions.then(async () => {
        if (!background) return;
        if (state === 'down') await background.stop();
        // Still back once the stop is done (it may have gone again meanwhile: then it stays stopped).
        else if (health.up) background.start();
      });
    },
  });
  return {
    health,
    connected: (opened: Db) => {
      db = opened;
    },
    whileDown: (work: Background | undefined) => {
      background = work;
    },
  };
}

/** Migrates the database, then opens the server's pool (its failures go to the database's health). */
async function openPool(config: Config, logger: Logger, url: string, health: DatabaseHealth, onQuery: StartOptions['onQuery'], resources: Resources) {
  await migrate(url, { log: (message) => logger.info({ component: 'migrate' }, message), connectTimeoutMs: config.databaseConnectTimeoutMs });
  return resources.hold(
    createDb(url, {
      poolMax: config.databasePoolMax,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      onIdleError: (error) => {
        if (!health.report(error)) logger.warn({ err: error }, 'an idle database connection failed; the next query opens another');
      },
      onConnectionError: (error) => health.report(error),
      onConnect: () => health.connected(),
      ...(onQuery ? { onQuery } : {}),
    }),
    (opened) => opened.$disconnect(),
  );
}

/** The platform key and the first organization's management key, made once (each generated secret to its file). */
async function bootstrapKeys(config: Config, logger: Logger, db: Db): Promise<void> {
  const boot = await bootstrap(withoutRequest({ db }), SERVER_ACTOR, { managementKey: config.bootstrapKey, platformKey: config.platformKey });
  if (boot.platform) await announceKey(logger, config.dataDir, PLATFORM_KEY_FILE, 'platform key', boot.platform, {});
  if (boot.organization) {
    const { organizationId } = boot.organization;
    await announceKey(logger, config.dataDir, ADMIN_KEY_FILE, `organization ${organizationId}'s management key`, boot.organization, {
      organization_id: organizationId,
    });
  }
}

/** The secret box (SWITCHYARD_SECRET_KEY, or a key file under DATA_DIR) and the store of bytes. */
async function openSecretsAndMedia(config: Config, logger: Logger) {
  const secrets = await loadSecretBox({ configured: config.secretKeys, dataDir: config.dataDir });
  if (secrets.source !== 'env' && config.databaseUrl) {
    logger.warn(
      { file: secrets.file },
      'SWITCHYARD_SECRET_KEY is unset: secrets are encrypted with a key file under DATA_DIR; replicas sharing DATABASE_URL need the same key',
    );
  }
  const media = await createMedia(config.storage, config.media);
  logger.info({ storage: media.storage.location }, 'storage');
  return { secrets: secrets.box, media };
}

/**
 * The counter store's limits (PostgreSQL, or COUNTER_STORE_URL's Redis), organizations' limit
 * settings, and the API's rate limits, which count through them.
 */
async function openLimits(config: Config, logger: Logger, databaseUrl: string, metrics: Metrics, health: DatabaseHealth, resources: Resources) {
  const limitLog = logger.child({ component: 'limits' });
  const storeKind = config.counterStoreUrl ? 'redis' : 'postgres';
  const limits = await Limits.open({
    store: config.counterStoreUrl ? { kind: 'redis', url: config.counterStoreUrl } : { kind: 'postgres', databaseUrl },
    rules: {
      [FREE_MODEL_MINUTE]: freeModelMinuteRule(config.freeModelRequestsPerMinute, config.counterStoreFailure.freeModels),
      [TOKEN_EXCHANGE_LIMIT]: { points: config.tokenExchangesPerMinute, durationS: 60, storeDown: config.counterStoreFailure.tokenExchange },
      ...apiRateLimitRules(config.apiRequestsPerMinute),
    },
    // The API's rate limits count their refusals themselves: the store refuses an allowance once, the API every request until the window ends.
    rejected: (name) => {
      if (name !== API_KEY_MINUTE && name !== API_ORGANIZATION_MINUTE) metrics.limiterRejections.inc({ limit: name });
    },
    // With the counters in the server's own database, its loss and return are the database's (logged once, by its health).
    // Each change is logged once (not once per request), with what the limits' callers do meanwhile.
    storeState: (state, error) => {
      metrics.counterStoreUp.set({ store: storeKind }, state === 'lost' ? 0 : 1);
      if (!config.counterStoreUrl && (state === 'back' || health.report(error))) return;
      if (state === 'lost') {
        limitLog.warn(
          { err: error, while_unreachable: config.counterStoreFailure },
          'the counter store is unreachable: until it is back, each caller of the limits fails open (allowed, uncounted) or closed (503) as COUNTER_STORE_FAILURE_* says',
        );
      } else limitLog.info('the counter store is reachable again: the limits count again');
    },
  });
  resources.hold(limits, (opened) => opened.close().catch(() => undefined));
  metrics.counterStoreUp.set({ store: storeKind }, limits.available ? 1 : 0);
  for (const limit of [FREE_MODEL_MINUTE, TOKEN_EXCHANGE_LIMIT, API_KEY_MINUTE, API_ORGANIZATION_MINUTE]) metrics.limiterRejections.inc({ limit }, 0);
  limitLog.info({ store: config.counterStoreUrl ? redactedUrl(config.counterStoreUrl) : 'postgresql (the server database)' }, 'counter store');
  const limitSettings = new OrganizationLimitSettings(config.cacheTtlMs, metrics.cache('organization_settings'));
  const apiRateLimits = new ApiRateLimits(
    limits,
    config.apiRequestsPerMinute,
    limitSettings,
    (name) => metrics.limiterRejections.inc({ limit: name }),
    // Requests pass meanwhile. A lost store is logged once: by its state (Redis, above) or the database's health.
    (error) => {
      if (error instanceof CounterStoreUnavailable) return;
      if (!config.counterStoreUrl && !health.report(error)) limitLog.warn({ err: error }, 'the API rate limits could not count; requests pass meanwhile');
    },
    config.counterStoreFailure.apiRateLimits,
  );
  // Allowances of the API's rate limits not spent go back to the store (other replicas may use them).
  resources.defer(() => apiRateLimits.clear());
  return { limits, limitSettings, apiRateLimits };
}

/**
 * Listens with the app, and with the metrics on their own port (if any), so that they are never
 * public by accident. Both are drained first at close (registered last).
 */
async function serve(config: Config, logger: Logger, app: Express, metrics: Metrics, resources: Resources) {
  let metricsUrl: string | undefined;
  if (config.metrics) {
    const metricsListener = metricsServer(metrics);
    await listen(metricsListener, config.metrics.port, config.metrics.host, 'METRICS_PORT');
    resources.defer(() => drain(metricsListener));
    metricsUrl = `${urlOf(metricsListener, config.metrics.host)}/metrics`;
    logger.info({ url: metricsUrl }, 'serving metrics');
  }
  // Not app.listen(): express 5 hands a listen error to its callback, which would read as success.
  // No Host header: the envelope from the app (requireHost), not Node's bare 400.
  const server = createServer({ requireHostHeader: false }, app);
  answerClientErrors(server, logger);
  await listen(server, config.port, config.host, 'PORT');
  resources.defer(() => drain(server));
  server.keepAliveTimeout = 65_000;
  const url = urlOf(server, config.host);
  logger.info({ version: VERSION, url }, 'listening');
  return { url, port: portOf(server), metricsUrl };
}

/**
 * The composition: what every module shares (the database, the secrets, the stored bytes, the
 * limits, the job runner), then each module's create in MODULES' order, then the app. Everything
 * opened is registered with `resources`, so that a close (or a start that failed halfway) runs in
 * reverse: the requests drain first, then the modules write what is pending, then the pool goes,
 * then PostgreSQL.
 */
export async function startServer(config: Config, logger: Logger, options: StartOptions = {}): Promise<RunningServer> {
  // What can be found wrong without writing anything comes first: the ports, then the data directory.
  await probePort(config.port, config.host, 'PORT');
  if (config.metrics) await probePort(config.metrics.port, config.metrics.host, 'METRICS_PORT');
  await ensureDirectory(config.dataDir, 'DATA_DIR');
  const database = await provisionDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    log: (message) => logger.info({ component: 'postgres' }, message),
    connectTimeoutMs: config.databaseConnectTimeoutMs,
  });
  const resources = new Resources();
  resources.defer(() => database.close());
  const watch = watchDatabase(config, logger, database, options.onFatal);
  const databaseHealth = watch.health;
  try {
    const db = await openPool(config, logger, database.url, databaseHealth, options.onQuery, resources);
    watch.connected(db);
    await bootstrapKeys(config, logger, db);
    const { secrets, media } = await openSecretsAndMedia(config, logger);
    const metrics = new Metrics(() => poolStats(db));
    const { limits, limitSettings, apiRateLimits } = await openLimits(config, logger, database.url, metrics, databaseHealth, resources);
    const keys = new KeyCache(config.cacheTtlMs, metrics.cache('api_keys'));
    const jobs = new JobRunner({ db, logger, pollMs: config.jobPollMs, leaseMs: config.jobLeaseMs });
    const now = options.now ?? (() => new Date());
    const shared = { db, databaseUrl: database.url, databaseHealth, now, logger, metrics, jobs, secrets, media, limits, limitSettings, keys };
    // The modules' own caches, workers and jobs (each module's create; stopped in reverse after the drain).
    const modules = await createModules(config, shared, resources);
    // Stopped before the modules (registered after them): no job starts while they write what is pending.
    resources.defer(() => jobs.stop());
    const caches = { keys, limitSettings, apiRateLimits, ...modules.deps };
    const listener = await listenForCacheEvents(database.url, caches, logger, (error) => databaseHealth.report(error));
    resources.hold(listener, (opened) => opened.close().catch(() => undefined));
    const heavyOperations = new FairShareLimit(config.heavyOperationsConcurrency, 'request');
    metrics.slots('heavy', () => heavyOperations.state);
    const deps = { ...shared, ...modules.deps, apiRateLimits, heavyOperations, trustProxy: config.trustProxy };
    const { url, port, metricsUrl } = await serve(config, logger, createApp(deps, { corsOrigins: config.corsOrigins }), metrics, resources);

    jobs.start();
    modules.start();
    // While the database is gone, the job runner and the modules' workers and sweeps stop (each would
    // only fail, round after round); they start again once it is back. The cache listener reconnects
    // by itself (notifications.ts), and the flushers keep what they hold and write it at their next
    // tick after recovery.
    watch.whileDown({
      stop: async () => {
        await Promise.all([jobs.stop(), modules.pause()]);
      },
      start: () => {
        jobs.start();
        modules.start();
      },
    });
    return {
      url,
      port,
      metricsUrl,
      db,
      databaseUrl: database.url,
      storage: media.storage,
      sweepStorage: (sweepOptions) => modules.deps.storageSweeper.sweep(sweepOptions),
      jobs,
      databaseHealth,
      deliveries: modules.deps.deliveries,
      close() {
        // The health watch first, so that no recovery starts the background work again meanwhile.
        databaseHealth.close();
        watch.whileDown(undefined);
        // Streams never finish by themselves: ended first, they do not hold the drain.
        modules.endStreams();
        return resources.close();
      },
    };
  } catch (error) {
    databaseHealth.close();
    await resources.close().catch(() => undefined);
    throw error;
  }
}
