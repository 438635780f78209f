// What a request carries while it is served, for every layer that serves it: its id and the logger
// that writes the id into each line. The request log (http/request-log.ts, the outermost layer)
// binds them when the request arrives; the tRPC context, the REST adapter and the byte routes read
// them here, so that nothing below http/ imports it.
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';

interface RequestScope {
  id: string;
  logger: Logger;
  /** The child logger, made on first use (most requests log nothing but their line). */
  child?: Logger;
}

const scopes = new WeakMap<IncomingMessage, RequestScope>();

/** Binds a request's id, and the logger its child logger derives from (the request log does, first). */
export function bindRequestScope(req: IncomingMessage, id: string, logger: Logger): void {
  scopes.set(req, { id, logger });
}

/** The request's id (set before any route runs; undefined outside the request log). */
export function requestIdOf(req: IncomingMessage): string | undefined {
  return scopes.get(req)?.id;
}

/** The logger for what happens while serving `req`: a child logger with its request_id. */
export function loggerOf(req: IncomingMessage, fallback: Logger): Logger {
  const scope = scopes.get(req);
  if (!scope) return fallback;
  return (scope.child ??= scope.logger.child({ request_id: scope.id }));
}
