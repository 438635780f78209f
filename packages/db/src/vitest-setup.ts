import type { TestProject } from 'vitest/node';
import { startTestDatabaseServer } from './testing.js';

export default async function setup(project: TestProject) {
  const server = await startTestDatabaseServer();
  project.provide('pgAdminUrl', server.adminUrl);
  project.provide('pgTemplate', server.template);
  return () => server.teardown();
}
