import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

export type { Logger };

export function createLogger(level: Config['logLevel']): Logger {
  return pino({
    level,
    base: undefined,
    // Defence in depth: nothing that looks like a credential reaches the log.
    redact: ['req.headers.authorization', '*.authorization', 'authorization'],
  });
}
