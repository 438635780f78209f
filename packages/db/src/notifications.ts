// PostgreSQL LISTEN on one channel, on a connection of its own that pg-listen keeps alive: it checks
// the connection every few seconds, reconnects with backoff for as long as it takes, and listens
// again. Notifications sent while no connection was listening are lost; `connected` tells the caller
// when listening (again), so that it can drop whatever it may have missed.
import pgListen from 'pg-listen';

export interface ListenHandlers {
  /** A notification's payload ('' when it had none). */
  message(payload: string): void;
  /** Listening: at start, and again after each reconnection (`reconnected` true). */
  connected?(reconnected: boolean): void;
  /** The connection failed (it is being re-established), or a reconnection attempt did. */
  error?(error: Error): void;
}

export interface ListenOptions {
  /** How often the idle connection is checked with a query (default 10 s). */
  checkIntervalMs?: number;
}

export interface Listener {
  close(): Promise<void>;
}

/** The listening connection's application_name (in pg_stat_activity). */
export const LISTENER_APPLICATION_NAME = 'switchyard-listen';

const createSubscriber = pgListen.default;

/** Listens on `channel` until closed; resolves once the first LISTEN is in place. */
export async function listen(databaseUrl: string, channel: string, handlers: ListenHandlers, options: ListenOptions = {}): Promise<Listener> {
  const subscriber = createSubscriber(
    { connectionString: databaseUrl, application_name: LISTENER_APPLICATION_NAME },
    {
      parse: (payload: string) => payload,
      paranoidChecking: options.checkIntervalMs ?? 10_000,
      // Reconnect forever: 100 ms, doubling up to 5 s between attempts.
      retryLimit: Number.POSITIVE_INFINITY,
      retryTimeout: 0,
      retryInterval: (attempt: number) => Math.min(5_000, 100 * 2 ** attempt),
    },
  );
  let started = false;
  subscriber.events.on('error', (error: Error) => handlers.error?.(error));
  subscriber.events.on('connected', () => {
    if (started) handlers.connected?.(true);
  });
  subscriber.notifications.on(channel, (payload: unknown) => handlers.message(typeof payload === 'string' ? payload : ''));
  await subscriber.connect();
  try {
    await subscriber.listenTo(channel);
  } catch (error) {
    await subscriber.close().catch(() => undefined);
    throw error;
  }
  started = true;
  handlers.connected?.(false);
  return { close: () => subscriber.close() };
}
