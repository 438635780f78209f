import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

/** The levels LOG_LEVEL takes (pino's, and `silent`). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The forms LOG_FORMAT takes. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * JSON lines for machines; with `readable`, one coloured line per entry for a person at a terminal
 * (pino-pretty, in-process and synchronous, so a fatal line before exit is never lost).
 */
export function createLogger(level: LogLevel, readable = false): Logger {
  const options = {
    level,
    base: undefined,
    // Defence in depth: nothing that looks like a credential reaches the log.
    redact: ['req.headers.authorization', '*.authorization', 'authorization'],
  };
  if (!readable) return pino(options);
  return pino(
    options,
    pretty({
      sync: true,
      colorize: true,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      // The request line reads "GET /api/v1/key 200 3ms"; its fields stay in the JSON form.
      ignore: 'method,path,status,latency_ms',
      messageFormat: (log, messageKey) =>
        log[messageKey] === 'request' && log.method !== undefined
          ? `${String(log.method)} ${String(log.path)} ${String(log.status)} ${Number(log.latency_ms).toFixed(1)}ms`
          : String(log[messageKey] ?? ''),
    }),
  );
}

/** LOG_FORMAT: auto is readable lines when stdout is a terminal, JSON otherwise. */
export function readableLogs(format: LogFormat, isTTY = process.stdout.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && isTTY);
}
