// Shared by the client tests: a real server over a fresh database, and a helper that expects a
// call to reject with SwitchyardError.
import { startTestServer, type TestServer } from '@switchyard/api/testing';
import { expect, inject } from 'vitest';
import { SwitchyardError } from '../src/index.js';

export const startServer = (): Promise<TestServer> =>
  startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });

export async function failure(promise: Promise<unknown>): Promise<SwitchyardError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SwitchyardError);
  return error as SwitchyardError;
}
