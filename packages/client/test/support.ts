// Shared by the client tests: a real server over a fresh database, and a helper that expects a
// call to reject with SwitchyardError.
import { startTestServer, type TestServer, type TestStore } from '@switchyard/api/testing';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { createSwitchyardClient, SwitchyardError, type SwitchyardClient } from '../src/index.js';

export const startServer = (store: TestStore = 'local'): Promise<TestServer> =>
  startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), store });

/** A server for the calling test file (or describe block): started before its tests, closed after them. */
export function useServer(store: TestStore = 'local'): { readonly server: TestServer; client(apiKey: string): SwitchyardClient } {
  let running: TestServer | undefined;
  beforeAll(async () => {
    running = await startServer(store);
  });
  afterAll(async () => {
    await running?.close();
  });
  const env = {
    get server(): TestServer {
      if (!running) throw new Error('the test server starts in beforeAll');
      return running;
    },
    client: (apiKey: string) => createSwitchyardClient({ url: env.server.url, apiKey }),
  };
  return env;
}

export async function failure(promise: Promise<unknown>): Promise<SwitchyardError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SwitchyardError);
  return error as SwitchyardError;
}
