import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startTestDatabaseServer } from './testing.js';

/**
 * One PostgreSQL server with a migrated template for the whole run, and a scratch directory for
 * what lives as long as a test process (the S3 server's objects: SWITCHYARD_TEST_SCRATCH, inherited
 * by the test processes). Test processes end without running their exit handlers, so the scratch
 * directory is removed here, after the last of them.
 */
export default async function setup(project: TestProject) {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-test-scratch-'));
  process.env.SWITCHYARD_TEST_SCRATCH = scratch;
  const server = await startTestDatabaseServer();
  project.provide('pgAdminUrl', server.adminUrl);
  project.provide('pgTemplate', server.template);
  return async () => {
    await server.teardown();
    await fs.rm(scratch, { recursive: true, force: true });
  };
}
