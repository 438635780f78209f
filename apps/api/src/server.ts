// Boots the whole server from a Config: database (embedded or external), migrations, bootstrap,
// HTTP. main.ts wires it to the process; tests start it in-process.
import fs from 'node:fs/promises';
import type { Server } from 'node:http';
import path from 'node:path';
import { createDb, migrate, provisionDatabase, type Db } from '@switchyard/db';
import { createApp } from './app.js';
import { answerClientErrors } from './http/client-error.js';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { loadSecretBox } from './modules/byok/secret-box.js';
import { KeyCache } from './modules/keys/auth.service.js';
import { CatalogCache } from './modules/models/catalog-cache.js';
import { GenerationRecorder } from './modules/generations/recorder.js';
import { MemberOrderCache } from './modules/organization/member-order.js';
import { bootstrapOrganization } from './modules/organization/bootstrap.service.js';
import { createMedia } from './storage/media.js';

export interface RunningServer {
  url: string;
  port: number;
  db: Db;
  databaseUrl: string;
  /** Stops accepting, drains in-flight requests, closes the pool, stops embedded PostgreSQL. */
  close(): Promise<void>;
}

export const ADMIN_KEY_FILE = 'admin-key';

async function writeAdminKey(dataDir: string, secret: string): Promise<string> {
  await fs.mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, ADMIN_KEY_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, `${secret}\n`, { mode: 0o600 });
  await fs.rename(tmp, file);
  return file;
}

export async function startServer(config: Config, logger: Logger, options: { now?: () => Date } = {}): Promise<RunningServer> {
  const database = await provisionDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    log: (message) => logger.info({ component: 'postgres' }, message),
  });
  let db: Db | undefined;
  try {
    await migrate(database.url, { log: (message) => logger.info({ component: 'migrate' }, message) });
    db = createDb(database.url, { poolMax: config.databasePoolMax });

    const boot = await bootstrapOrganization(db, { managementKey: config.bootstrapKey });
    if (boot.created && boot.generated) {
      const file = await writeAdminKey(config.dataDir, boot.managementKey).catch((error: Error) => {
        logger.error({ err: error }, 'could not write the admin key file');
        return null;
      });
      // Shown once: the only time the secret is ever printed.
      logger.warn(
        { organization_id: boot.organizationId, file },
        `created organization ${boot.organizationId}; management key (shown once): ${boot.managementKey}`,
      );
    } else if (boot.created) {
      logger.info({ organization_id: boot.organizationId }, 'created organization with SWITCHYARD_BOOTSTRAP_KEY as its management key');
    }

    const secrets = await loadSecretBox({ configured: config.secretKeys, dataDir: config.dataDir });
    if (secrets.source !== 'env' && config.databaseUrl) {
      logger.warn({ file: secrets.file }, 'SWITCHYARD_SECRET_KEY is unset: secrets are encrypted with a key file under DATA_DIR; replicas sharing DATABASE_URL need the same key');
    }
    const media = createMedia(config.dataDir, config.media);

    const now = options.now ?? (() => new Date());
    const app = createApp({
      db,
      logger,
      now,
      secrets: secrets.box,
      media,
      keys: new KeyCache(config.cacheTtlMs),
      catalog: new CatalogCache(config.cacheTtlMs),
      recorder: new GenerationRecorder(db, now),
      memberOrder: new MemberOrderCache(config.cacheTtlMs),
      trustProxy: config.trustProxy,
    });
    const server: Server = await new Promise((resolve, reject) => {
      const s = app.listen(config.port, config.host, () => resolve(s));
      s.once('error', reject);
    });
    server.keepAliveTimeout = 65_000;
    answerClientErrors(server, logger);
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
    logger.info({ url }, 'listening');

    const openDb = db;
    let closing: Promise<void> | undefined;
    return {
      url,
      port,
      db: openDb,
      databaseUrl: database.url,
      close() {
        closing ??= (async () => {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
            // Requests still running after the grace period are cut.
            setTimeout(() => server.closeAllConnections(), 10_000).unref();
          });
          await openDb.$disconnect();
          await database.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await db?.$disconnect().catch(() => undefined);
    await database.close().catch(() => undefined);
    throw error;
  }
}
