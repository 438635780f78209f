// Test data written straight to the database: organizations and keys that the API under test then
// reads. (Creating organizations is not an API operation yet.)
import { Prisma, type Db } from '@switchyard/db';
import { scaled } from '@switchyard/db/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import type { z } from 'zod';
import { generateApiKey, hashApiKey, maskApiKey } from '../src/access/key-format.js';
import { authenticate, KeyCache, type Actor } from '../src/access/callers.js';
import { admitTenant, type AccessRule } from '../src/access/rules.js';
import { appRouter } from '../src/router.js';
import { metaOf, proceduresOf } from '../src/trpc/procedures.js';
import type { ProcedureMeta } from '../src/trpc/init.js';
import { startTestServer, type TestServer } from '../src/testing/test-server.js';

export const testServer = () => startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });

/** The caller of a management key (default: the server's), as services receive it. */
export const managementActor = async (server: TestServer, key = server.managementKey): Promise<Actor> =>
  admitTenant(await authenticate(server.db, new KeyCache(0), hashApiKey(key), new Date()), 'management');

/** One procedure of the router, as the router-derived tests read it. */
export interface RouterProcedure {
  path: string;
  /** Its kind, and its input parsers: fields of tRPC's public Procedure type (`_def.type`, `_def.inputs`). */
  type: 'query' | 'mutation' | 'subscription';
  inputs: z.ZodType[];
  meta: ProcedureMeta | undefined;
}

/** Every procedure of the router (trpc/procedures.ts), in the order the routers list them. */
export const routerProcedures = (): RouterProcedure[] =>
  Object.entries(proceduresOf(appRouter)).map(([path, procedure]) => {
    const { type, inputs } = procedure._def;
    return { path, type, inputs: inputs as z.ZodType[], meta: metaOf(procedure) };
  });

/** The access rule a procedure declares (access/rules.ts), from the router itself. */
export function accessRuleOf(procedure: string): AccessRule | undefined {
  const found = proceduresOf(appRouter)[procedure];
  if (!found) throw new Error(`no procedure ${procedure}`);
  return metaOf(found)?.access;
}

/**
 * The key a test calls a procedure with when it names none: the platform key for platform
 * procedures (catalog writes, recording, credits, containers, video jobs), else the management key.
 */
export function defaultKeyFor(server: { platformKey: string; managementKey: string }, procedure: string): string {
  return accessRuleOf(procedure) === 'platform' ? server.platformKey : server.managementKey;
}

/**
 * The answer of a procedure that names its answer's schema instead of declaring an output
 * (ProcedureMeta.answer), checked as tRPC would have checked it, and more: the schema's output must
 * be the answer itself, byte for byte (no field stripped, transformed or reordered), so that the
 * server's not parsing it changes nothing.
 */
export function expectExactOutput<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.parse(body);
  expect(JSON.stringify(parsed)).toBe(JSON.stringify(body));
  return parsed;
}

/** How long `until` waits by default: well inside the test timeout, far beyond any healthy wait. */
export const UNTIL_TIMEOUT_MS = scaled(30_000);

/**
 * Polls until `check` holds, every `everyMs`, for at most `timeoutMs`; then fails, naming `what`
 * (or the check's source). Waiting for something to happen, never asserting how soon: the bound
 * is generous, so that a busy machine does not fail a correct server.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  { everyMs = 10, timeoutMs = UNTIL_TIMEOUT_MS, what, detail }: { everyMs?: number; timeoutMs?: number; what?: string; detail?: () => string } = {},
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) {
      throw new Error(`waited ${timeoutMs} ms, in vain, for ${what ?? check.toString()}${detail ? `:\n${detail()}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export interface OrgFixture {
  organizationId: string;
  workspaceId: string;
  userId: string;
  managementKey: string;
}

/** A second organization with its default workspace, an owner and a management key. */
export async function createOrganization(db: Db, name = 'Other'): Promise<OrgFixture> {
  const suffix = randomUUID().slice(0, 8);
  const organizationId = `org_${suffix}`;
  const userId = `user_${suffix}`;
  const managementKey = generateApiKey();
  await db.$transaction(async (tx) => {
    await tx.organization.create({ data: { id: organizationId, name } });
    await tx.user.create({ data: { id: userId, email: `${suffix}@example.com` } });
    await tx.organizationMember.create({
      data: { organization_id: organizationId, user_id: userId, role: 'admin', first_name: name, last_name: 'Owner' },
    });
    const ws = await tx.workspace.create({ data: { organization_id: organizationId, slug: 'default', name: 'Default' } });
    await tx.organization.update({ where: { id: organizationId }, data: { default_workspace_id: ws.id } });
    await tx.apiKey.create({
      data: {
        organization_id: organizationId,
        workspace_id: ws.id,
        creator_user_id: userId,
        hash: hashApiKey(managementKey),
        label: maskApiKey(managementKey),
        name: 'mgmt',
        is_management_key: true,
      },
    });
  });
  const ws = await db.organization.findUniqueOrThrow({ where: { id: organizationId } });
  return { organizationId, workspaceId: ws.default_workspace_id!, userId, managementKey };
}

/**
 * A server for the calling test file (or describe block), with a second organization (`other`, named
 * `otherName`) beside the server's own: both made before its tests, the server closed after them. Read `env.server` and
 * `env.other` inside tests and hooks (they exist from the first beforeAll on); the file's own
 * beforeAll hooks, registered after this call, run after it.
 */
export function useServer(otherName?: string): { readonly server: TestServer; readonly other: OrgFixture } {
  let running: TestServer | undefined;
  let second: OrgFixture | undefined;
  beforeAll(async () => {
    running = await testServer();
    second = await createOrganization(running.db, otherName);
  });
  afterAll(async () => {
    await running?.close();
  });
  return {
    get server(): TestServer {
      if (!running) throw new Error('the test server starts in beforeAll');
      return running;
    },
    get other(): OrgFixture {
      if (!second) throw new Error('the second organization is made in beforeAll');
      return second;
    },
  };
}

/** Adds spend to a key's daily rollup and lifetime totals, as recording a generation does. */
export async function addUsage(db: Db, keyHash: string, day: string, usage: number, byok = 0, freeRequests = 0) {
  const key = await db.apiKey.findUniqueOrThrow({ where: { hash: keyHash } });
  await db.keyUsageDaily.upsert({
    where: { api_key_id_day: { api_key_id: key.id, day: new Date(`${day}T00:00:00Z`) } },
    create: {
      api_key_id: key.id,
      day: new Date(`${day}T00:00:00Z`),
      organization_id: key.organization_id,
      usage: new Prisma.Decimal(usage),
      byok_usage: new Prisma.Decimal(byok),
      request_count: 1,
      free_request_count: freeRequests,
    },
    update: { usage: { increment: usage }, byok_usage: { increment: byok }, free_request_count: { increment: freeRequests } },
  });
  await db.apiKey.update({ where: { id: key.id }, data: { usage: { increment: usage }, byok_usage: { increment: byok } } });
}
