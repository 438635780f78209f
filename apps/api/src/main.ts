// Process entry: config -> database -> app -> listen; graceful shutdown on SIGINT/SIGTERM.
import './process/heap.js';
import { AWS_SDK_NOTICE, AWS_SDK_NOTICE_DUE } from './lib/aws-sdk-notice.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger, readableLogs } from './lib/logger.js';
import { NODE_FLAGS } from './process/node-flags.js';
import { startServer } from './server.js';

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}

const logger = createLogger(config.logLevel, readableLogs(config.logFormat));
// They cannot come from NODE_OPTIONS (node refuses them there): a server started some other way than
// `pnpm start` says what it lacks.
const missingFlags = NODE_FLAGS.filter((flag) => !process.execArgv.includes(flag));
if (missingFlags.length > 0) {
  logger.warn({ missing: missingFlags }, `node was started without ${missingFlags.join(' ')}: see docs/operations.md, section Memory`);
}
if (AWS_SDK_NOTICE_DUE) logger.warn(AWS_SDK_NOTICE);
try {
  let fatal: ((error: Error) => void) | undefined;
  let signalled = false;
  const server = await startServer(config, logger, { onFatal: (error) => fatal?.(error) });
  // The server gave up on its database (logged where it happened): close what can be closed, and
  // exit non-zero so that a supervisor (systemd's Restart=, Kubernetes) takes over.
  fatal = () => {
    if (signalled) return;
    signalled = true;
    server.close().then(
      () => process.exit(1),
      () => process.exit(1),
    );
  };
  const shutdown = (signal: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
} catch (error) {
  logger.fatal({ err: error }, `could not start: ${(error as Error).message}`);
  process.exit(1);
}
