// A second server replica on a test server's database, in this process: what the limiter and the
// refusal-events tests use to show that replicas share counts and causes.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Logger, pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { type RunningServer, startServer } from '../src/server.js';
import type { TestServer } from '../src/testing/test-server.js';
import type { Requester } from './fixtures-trpc.js';

export type InProcessReplica = RunningServer & Requester & { platformKey: string; managementKey: string };

/** A replica of `server` (same database and platform key, its own DATA_DIR, removed on close). */
export async function inProcessReplica(
  server: TestServer,
  options: { env?: Record<string, string>; logger?: Logger; now?: () => Date } = {},
): Promise<InProcessReplica> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-test-replica-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: server.databaseUrl,
    LOG_LEVEL: 'silent',
    SWITCHYARD_PLATFORM_KEY: server.platformKey,
    DATABASE_POOL_MAX: '5',
    ...options.env,
  });
  const running = await startServer(config, options.logger ?? pino({ level: 'silent' }), options.now ? { now: options.now } : {});
  return {
    ...running,
    platformKey: server.platformKey,
    managementKey: server.managementKey,
    request(pathname, init = {}) {
      const { key = server.managementKey, headers, ...rest } = init;
      const h = new Headers(headers);
      if (key !== null) h.set('authorization', `Bearer ${key}`);
      return fetch(`${running.url}${pathname}`, { ...rest, headers: h });
    },
    async close() {
      await running.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
