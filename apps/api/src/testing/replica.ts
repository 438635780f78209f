// A second server replica on a test server's database, in the test's process: what the limiter,
// refusal-event and decider tests use to show that replicas share counts, causes and changes.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Logger, pino } from 'pino';
import { loadConfig } from '../config.js';
import { type RunningServer, startServer } from '../server.js';

/** A replica of `server` (same database and platform key, its own DATA_DIR, removed on close). */
export async function startReplica(
  server: { databaseUrl: string; platformKey: string },
  options: { env?: Record<string, string>; logger?: Logger; now?: () => Date } = {},
): Promise<RunningServer> {
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
  try {
    const running = await startServer(config, options.logger ?? pino({ level: 'silent' }), options.now ? { now: options.now } : {});
    return {
      ...running,
      async close() {
        await running.close();
        await fs.rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await fs.rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}
