// Test support: a real server (express on a free port) over a fresh PostgreSQL database cloned
// from the migrated template that the vitest global setup prepared, storing bytes in a temporary
// directory or in a bucket of its own on the test process's S3 server (testing-s3.ts).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createEmptyDatabase, createTestDatabase, scaled } from '@switchyard/db/testing';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { loadConfig } from '../config.js';
import { generateApiKey, generatePlatformKey, hashApiKey } from '../access/key-format.js';
import { startServer, type RunningServer } from '../server.js';
import { testS3 } from './s3.js';

export { testS3, type TestS3 } from './s3.js';
export { startReplica } from './replica.js';

/** Where a test server stores bytes: its data directory, or an S3 bucket. */
export type TestStore = 'local' | 's3';

/** Every store, for tests that run against each (describe.each(TEST_STORES)). */
export const TEST_STORES: readonly TestStore[] = ['local', 's3'];

/**
 * What every process a test starts inherits of the run's environment besides PATH and HOME: the
 * run's temporary directory, and the switches that keep tsx's and Node's compile caches out of it,
 * so that what these processes leave behind is seen (and refused) by the run's leftover check.
 */
export function inheritedEnv(): Record<string, string> {
  const names = ['TMPDIR', 'TSX_DISABLE_CACHE', 'NODE_DISABLE_COMPILE_CACHE'] as const;
  return Object.fromEntries(names.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])));
}

export interface TestServer extends RunningServer {
  /** The bootstrap management key of the server's organization. */
  managementKey: string;
  /** The server's platform key (no organization: catalog, recording, credits, containers, video jobs). */
  platformKey: string;
  /** The bootstrap organization (the management key's) and its default workspace. */
  organizationId: string;
  workspaceId: string;
  dataDir: string;
  /** Fixes the server's clock (null: real time). */
  setNow(at: Date | null): void;
  /** Every log entry the server wrote (it logs at info level, into memory). */
  logs: Record<string, unknown>[];
  /** The server's logger, whose lines `logs` holds. */
  logger: Logger;
  /** fetch against the server with a bearer key (null: no Authorization header). */
  request(pathname: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  store: TestStore;
  /**
   * Makes the store fail until the returned function is called: in a local store, writes under
   * `prefix` (its directory becomes a file); in S3, everything (the S3 server stops answering).
   */
  breakStorage(prefix: string): Promise<() => Promise<void>>;
}

/** A release's database as its upgrade fixture keeps it (scripts/upgrade-fixture.sh). */
export interface RestoredRelease {
  /** The plain-SQL dump (pg_dump --inserts, without psql's backslash commands). */
  sql: string;
  /** The directory of the bytes it stored (DATA_DIR/blobs). */
  blobs: string;
  managementKey: string;
  platformKey: string;
  secretKey: string;
}

async function restoreRelease(url: string, dataDir: string, release: RestoredRelease): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // One simple-protocol query of many statements: the dump runs as psql would run it.
    await client.query(release.sql);
  } finally {
    await client.end();
  }
  await fs.cp(release.blobs, path.join(dataDir, 'blobs'), { recursive: true });
}

export async function startTestServer(options: {
  adminUrl: string;
  template: string;
  /** Extra configuration variables (e.g. a small STORAGE_QUOTA_BYTES). */
  env?: Record<string, string>;
  /** Default: local. */
  store?: TestStore;
  /** Told about every statement the server's pool sends (e.g. to count the statements of some requests). */
  onQuery?: (event: { query: string; params: string }) => void;
  /**
   * Starts on a database restored from a release's plain-SQL dump (and the bytes it stored), which
   * the server then migrates to HEAD, with that release's keys (the upgrade test): local store only.
   */
  restore?: RestoredRelease;
  /**
   * The database: a clone of the template (default); `embedded`, the server's own embedded
   * PostgreSQL under DATA_DIR (as with DATABASE_URL unset); or an existing database, which the
   * server's close() drops (a restored one, in the backup test).
   */
  database?: 'template' | 'embedded' | { url: string; drop(): Promise<void> };
  /** Start on this data directory (removed by close()) instead of a new one. */
  dataDir?: string;
  /** The bootstrap keys, when the database already has them (a restored one); default: new ones. */
  keys?: { managementKey: string; platformKey: string };
}): Promise<TestServer> {
  const store = options.store ?? 'local';
  const restore = options.restore;
  const which = options.database ?? 'template';
  const database =
    which === 'embedded'
      ? null
      : typeof which === 'object'
        ? which
        : restore
          ? await createEmptyDatabase(options.adminUrl)
          : await createTestDatabase(options.adminUrl, options.template);
  const dataDir = options.dataDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-test-data-')));
  if (restore && !database) throw new Error('restore needs a database of the test server (not embedded)');
  if (restore && database) await restoreRelease(database.url, dataDir, restore);
  const s3 = store === 's3' ? await testS3() : undefined;
  const storageEnv = s3 ? s3.env(await s3.createBucket()) : {};
  const managementKey = options.keys?.managementKey ?? restore?.managementKey ?? generateApiKey();
  const platformKey = options.keys?.platformKey ?? restore?.platformKey ?? generatePlatformKey();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ...(database ? { DATABASE_URL: database.url } : {}),
    LOG_LEVEL: 'info',
    SWITCHYARD_BOOTSTRAP_KEY: managementKey,
    SWITCHYARD_PLATFORM_KEY: platformKey,
    DATABASE_POOL_MAX: '5',
    // The deadlines a server puts on work of its own, stretched as the tests' own limits are: a
    // busy machine makes a test slower, and trips no deadline the test is not about. A test about
    // one of them sets it.
    ANALYTICS_QUERY_TIMEOUT_MS: String(scaled(60_000)),
    DELIVERY_TIMEOUT_MS: String(Math.min(120_000, scaled(30_000))),
    UPSTREAM_CONNECT_TIMEOUT_MS: String(scaled(30_000)),
    ...(restore ? { SWITCHYARD_SECRET_KEY: restore.secretKey } : {}),
    ...storageEnv,
    ...options.env,
  });
  let fixed: Date | null = null;
  const logs: Record<string, unknown>[] = [];
  const sink = { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) };
  const logger = pino({ level: config.logLevel }, sink);
  const server = await startServer(config, logger, { now: () => fixed ?? new Date(), ...(options.onQuery ? { onQuery: options.onQuery } : {}) });
  const owner = await server.db.apiKey.findUniqueOrThrow({ where: { hash: hashApiKey(managementKey) } });
  return {
    ...server,
    organizationId: owner.organization_id,
    workspaceId: owner.workspace_id,
    managementKey,
    platformKey,
    dataDir,
    logs,
    logger,
    store,
    async breakStorage(prefix) {
      if (s3) {
        await s3.suspend();
        return () => s3.resume();
      }
      const dir = path.join(dataDir, 'blobs', ...prefix.split('/').filter(Boolean));
      const moved = `${dir}.moved`;
      await fs.mkdir(dir, { recursive: true });
      await fs.rename(dir, moved);
      await fs.writeFile(dir, 'a file where the directory should be');
      return async () => {
        await fs.rm(dir);
        await fs.rename(moved, dir);
      };
    },
    setNow(at) {
      fixed = at;
    },
    request(pathname, init = {}) {
      const { key = managementKey, headers, ...rest } = init;
      const h = new Headers(headers);
      if (key !== null) h.set('authorization', `Bearer ${key}`);
      return fetch(`${server.url}${pathname}`, { ...rest, headers: h });
    },
    async close() {
      await server.close();
      await database?.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
