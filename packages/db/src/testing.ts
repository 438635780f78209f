// Test databases: one PostgreSQL server per test run (embedded, or TEST_DATABASE_URL), one migrated
// template database, and a fresh database per test file cloned from the template.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from './embedded.js';
import { migrate } from './migrate.js';

export { scaled, timeScale } from './time-scale.js';

// What the vitest global setup (vitest-setup.ts) provides to every test file through inject().
import type {} from 'vitest';
declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

export interface TestDatabaseServer {
  /** URL of a database with the right to create databases (the server's `postgres` database). */
  adminUrl: string;
  /** The migrated template database each test database is cloned from. */
  template: string;
  teardown(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Starts the server for a test run. TEST_DATABASE_URL (any database on a server where the user may
 * create databases) selects an external server, e.g. another PostgreSQL version.
 */
export async function startTestDatabaseServer(): Promise<TestDatabaseServer> {
  let adminUrl = process.env.TEST_DATABASE_URL;
  let stop: () => Promise<void> = async () => undefined;
  let dataDir: string | undefined;
  if (!adminUrl) {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-test-pg-'));
    const server = await startEmbeddedPostgres({ dataDir });
    adminUrl = server.url;
    stop = () => server.stop();
  }
  const template = `sy_template_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${template}`);
  await migrate(withDatabase(adminUrl, template));
  const url = adminUrl;
  return {
    adminUrl: url,
    template,
    async teardown() {
      await adminQuery(url, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => undefined);
      await stop();
      if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A new database, migrated (cloned from the template), for one test file. */
export async function createTestDatabase(adminUrl: string, template: string): Promise<TestDatabase> {
  const name = `sy_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${template}`);
  return {
    url: withDatabase(adminUrl, name),
    name,
    drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** An empty database (no migrations), e.g. a shadow database for the drift check. */
export async function createEmptyDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `sy_empty_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  return {
    url: withDatabase(adminUrl, name),
    name,
    drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * Every table of prisma/schema.prisma whose model has an organization_id column: what an
 * organization owns (offboarding's tests check each is emptied of a deleted one).
 */
export function organizationTables(): string[] {
  return tablesWithColumn('organization_id');
}

/**
 * Every table of prisma/schema.prisma whose model has a workspace_id column: what a workspace owns
 * (the tests of a workspace's deletion check each is emptied of it).
 */
export function workspaceTables(): string[] {
  return tablesWithColumn('workspace_id');
}

function tablesWithColumn(column: string): string[] {
  const schema = readFileSync(fileURLToPath(new URL('../../../prisma/schema.prisma', import.meta.url)), 'utf8');
  const tables: string[] = [];
  const field = new RegExp(`^\\s+${column}\\s+String`, 'm');
  for (const [, name, body] of schema.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    if (!field.test(body!)) continue;
    tables.push(/@@map\("(\w+)"\)/.exec(body!)?.[1] ?? name!);
  }
  return tables;
}
