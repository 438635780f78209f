// Test support: a real server (express on a free port) over a fresh PostgreSQL database cloned
// from the migrated template that the vitest global setup prepared.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from '@switchyard/db/testing';
import { pino } from 'pino';
import { loadConfig } from './config.js';
import { generateApiKey, generatePlatformKey, hashApiKey } from './modules/keys/key-format.js';
import { startServer, type RunningServer } from './server.js';

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
  /** fetch against the server with a bearer key (null: no Authorization header). */
  request(pathname: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
}

export async function startTestServer(options: {
  adminUrl: string;
  template: string;
  /** Extra configuration variables (e.g. a small STORAGE_QUOTA_BYTES). */
  env?: Record<string, string>;
}): Promise<TestServer> {
  const database = await createTestDatabase(options.adminUrl, options.template);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-test-data-'));
  const managementKey = generateApiKey();
  const platformKey = generatePlatformKey();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'info',
    SWITCHYARD_BOOTSTRAP_KEY: managementKey,
    SWITCHYARD_PLATFORM_KEY: platformKey,
    DATABASE_POOL_MAX: '5',
    ...options.env,
  });
  let fixed: Date | null = null;
  const logs: Record<string, unknown>[] = [];
  const sink = { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) };
  const server = await startServer(config, pino({ level: config.logLevel }, sink), { now: () => fixed ?? new Date() });
  const owner = await server.db.apiKey.findUniqueOrThrow({ where: { hash: hashApiKey(managementKey) } });
  return {
    ...server,
    organizationId: owner.organization_id,
    workspaceId: owner.workspace_id,
    managementKey,
    platformKey,
    dataDir,
    logs,
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
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
