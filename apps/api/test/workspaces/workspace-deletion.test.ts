// A workspace's data goes with it (docs/operations.md#offboarding): DELETE
// /workspaces/{id} answers as before, and its job (workspace.delete) removes every row with the
// workspace's id, in every table of the Prisma schema with a workspace_id column, and every stored
// byte of it; the other workspace and another organization keep everything; the organization's
// totals stay; the job runs again without harm.
import { randomBytes } from 'node:crypto';
import { queryRows, statement } from '@switchyard/db';
import { workspaceTables } from '@switchyard/db/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { WORKSPACE_DELETE } from '../../src/modules/workspaces/workspace-deletion-job.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { until, useServer } from '../fixtures.js';
import { createRegularKey, createWorkspace, rest } from '../fixtures-admin.js';
import { record } from '../fixtures-catalog.js';
import { fileIdOf, openContainer, writeFile } from '../fixtures-files.js';
import { ok } from '../fixtures-trpc.js';

const env = useServer('Workspace deletion other');
const COUNT = z.object({ n: z.number() });
const CONTENT = { input: { messages: [{ role: 'user', content: 'secret prompt' }] }, output: { completion: 'secret answer' } };

/** Rows with this workspace id, per table with a workspace_id column (and the workspaces row itself). */
async function rowsOfWorkspace(server: TestServer, workspaceId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of workspaceTables()) {
    const [row] = await queryRows(server.db, statement(`SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = $1::uuid`, COUNT), [workspaceId]);
    counts[table] = row!.n;
  }
  const [self] = await queryRows(server.db, statement('SELECT count(*)::int AS n FROM workspaces WHERE id = $1::uuid', COUNT), [workspaceId]);
  counts.workspaces = self!.n;
  return counts;
}

/** Stored objects of a workspace: its containers' files and its documents. */
async function storageKeysOf(server: TestServer, workspaceId: string): Promise<string[]> {
  const files = await server.db.containerFile.findMany({ where: { container: { workspace_id: workspaceId } }, select: { storage_key: true } });
  const documents = await server.db.document.findMany({ where: { workspace_id: workspaceId }, select: { storage_key: true } });
  return [...files, ...documents].map((row) => row.storage_key);
}

/** Fills a workspace: a key, generations with content (rollups), a budget, a container file and a document. */
async function fill(server: TestServer, workspaceId: string, managementKey = server.managementKey) {
  const key = await createRegularKey(server, workspaceId, managementKey);
  for (let i = 0; i < 3; i++) await record(server, { api_key_hash: key.hash, usage: 0.25, content: CONTENT });
  await ok(server, 'budgets.set', { workspace_ref: workspaceId, interval: 'monthly', limit_usd: 50 }, { key: managementKey });
  const container = await openContainer(server, `ws-${workspaceId}`, { workspaceId });
  await writeFile(server, container, 'notes/kept.txt', randomBytes(64));
  await writeFile(server, container, 'notes/promoted.bin', randomBytes(64));
  const promoted = await server.request(`/api/v1/containers/${container}/files/${fileIdOf('notes/promoted.bin')}/promote`, {
    method: 'POST',
    key: managementKey,
  });
  expect(promoted.status, await promoted.clone().text()).toBe(200);
  return key;
}

describe('DELETE /workspaces/{id} with its data', () => {
  let leaving: string;
  let staying: string;
  let leavingKey: { hash: string };
  beforeAll(async () => {
    const { server } = env;
    await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 100 });
    leaving = (await createWorkspace(server, 'leaving')).id;
    staying = (await createWorkspace(server, 'staying')).id;
    leavingKey = await fill(server, leaving);
    await fill(server, staying);
  });

  it('answers { deleted: true }, then its job removes every row and byte of the workspace and nothing else', async () => {
    const { server } = env;
    const before = {
      leaving: await rowsOfWorkspace(server, leaving),
      staying: await rowsOfWorkspace(server, staying),
      leavingBytes: await storageKeysOf(server, leaving),
      stayingBytes: await storageKeysOf(server, staying),
      organization: await server.db.organization.findUniqueOrThrow({ where: { id: server.organizationId } }),
      otherGenerations: await server.db.generation.count({ where: { organization_id: env.other.organizationId } }),
    };
    expect(workspaceTables().length).toBeGreaterThan(15);
    // Something of it in the tables that matter (generations, rollups, keys, budgets, files, documents).
    for (const table of ['generations', 'analytics_hourly', 'analytics_daily', 'activity_daily', 'api_keys', 'budgets', 'containers', 'documents']) {
      expect(before.leaving[table], table).toBeGreaterThan(0);
    }
    expect(before.leavingBytes.length).toBe(3);
    for (const key of [...before.leavingBytes, ...before.stayingBytes]) expect(await server.storage.stat(key), key).not.toBeNull();
    const leavingGenerations = (await server.db.generation.findMany({ where: { workspace_id: leaving }, select: { id: true } })).map((g) => g.id);
    expect(await server.db.generationContent.count({ where: { generation_id: { in: leavingGenerations } } })).toBe(3);

    // Its active key first: a workspace with active keys is refused (400), as before.
    expect((await rest(server, `/workspaces/${leaving}`, { method: 'DELETE' })).status).toBe(400);
    await ok(server, 'keys.update', { hash: leavingKey.hash, disabled: true });
    const answer = await rest(server, `/workspaces/${leaving}`, { method: 'DELETE' });
    expect(answer).toMatchObject({ status: 200, body: { deleted: true } });
    // Gone for every lookup at once.
    expect((await rest(server, `/workspaces/${leaving}`)).status).toBe(404);

    const job = async () => server.db.job.findFirst({ where: { kind: WORKSPACE_DELETE, payload: { path: ['workspace_id'], equals: leaving } } });
    await until(async () => (await job())?.status === 'succeeded', { what: 'the workspace.delete job done' });
    expect((await job())!.progress).toMatchObject({ step: 'done', deleted_objects: 3, deleted_generations: 3 });

    // No row with its id in any table with a workspace_id (derived from the schema), nor its own row.
    const after = await rowsOfWorkspace(server, leaving);
    expect(after).toEqual(Object.fromEntries(Object.keys(before.leaving).map((table) => [table, 0])));
    expect(await server.db.generationContent.count({ where: { generation_id: { in: leavingGenerations } } })).toBe(0);
    expect(await server.db.keyUsageDaily.count({ where: { api_key: { workspace_id: leaving } } })).toBe(0);
    // No byte of it in the store; the other workspace's all there.
    for (const key of before.leavingBytes) expect(await server.storage.stat(key), key).toBeNull();
    for (const key of before.stayingBytes) expect(await server.storage.stat(key), key).not.toBeNull();
    // The other workspace and the other organization untouched; the organization's money stays.
    expect(await rowsOfWorkspace(server, staying)).toEqual(before.staying);
    expect(await server.db.generation.count({ where: { organization_id: env.other.organizationId } })).toBe(before.otherGenerations);
    const organization = await server.db.organization.findUniqueOrThrow({ where: { id: server.organizationId } });
    expect({
      usage: organization.total_usage.toString(),
      credits: organization.total_credits.toString(),
      balance: organization.credit_balance.toString(),
    }).toEqual({
      usage: before.organization.total_usage.toString(),
      credits: before.organization.total_credits.toString(),
      balance: before.organization.credit_balance.toString(),
    });

    // Run again (a server that died after the work, before recording it: the lease ended): it finds nothing left and succeeds.
    await server.db.job.updateMany({
      where: { id: (await job())!.id },
      data: { status: 'running', locked_until: new Date(Date.now() - 1000), finished_at: null },
    });
    await server.jobs.drain();
    expect((await job())!.status).toBe('succeeded');
    expect(await rowsOfWorkspace(server, staying)).toEqual(before.staying);
  });

  it('a second DELETE is 404; the default workspace is still refused (400)', async () => {
    const { server } = env;
    expect((await rest(server, `/workspaces/${leaving}`, { method: 'DELETE' })).status).toBe(404);
    expect((await rest(server, `/workspaces/${server.workspaceId}`, { method: 'DELETE' })).status).toBe(400);
    expect(await server.db.job.count({ where: { kind: WORKSPACE_DELETE, payload: { path: ['workspace_id'], equals: server.workspaceId } } })).toBe(0);
  });
});
