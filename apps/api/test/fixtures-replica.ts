// A second server replica on a test server's database, in this process (the testing entry's
// startReplica), with a request helper: what the limiter and the refusal-events tests use.
import type { Logger } from 'pino';
import { startReplica } from '../src/testing/replica.js';
import type { RunningServer } from '../src/server.js';
import type { TestServer } from '../src/testing/test-server.js';
import type { Requester } from './fixtures-trpc.js';

export type InProcessReplica = RunningServer & Requester & { platformKey: string; managementKey: string };

/** A replica of `server` (same database and platform key, its own DATA_DIR, removed on close). */
export async function inProcessReplica(
  server: TestServer,
  options: { env?: Record<string, string>; logger?: Logger; now?: () => Date } = {},
): Promise<InProcessReplica> {
  const running: RunningServer = await startReplica(server, options);
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
  };
}
