// Offboarding: the platform deletes an organization with everything it owns.
// Two organizations get everything the demo makes; one is deleted with `switchyard orgs delete`.
// Every table of the Prisma schema with an organization_id column is then empty of it, and holds
// exactly what it held of the other; its stored bytes are gone and the other's are not; a
// tombstone keeps only ids, totals and dates.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer } from '@switchyard/api/testing';
import { queryRows, statement } from '@switchyard/db';
import { organizationTables, scaled } from '@switchyard/db/testing';
import { CreateOrganizationOutputSchema, OrganizationDeletionSchema } from '@switchyard/schema';
import { createSwitchyardClient } from '@switchyard/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { run } from '../src/cli.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });
});
afterAll(async () => {
  await server?.close();
});

async function switchyard(args: string[], apiKey = server.managementKey) {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: (t) => (stdout += `${t}\n`),
    stderr: (t) => (stderr += `${t}\n`),
    env: { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: apiKey, SWITCHYARD_PLATFORM_KEY: server.platformKey },
    cwd: process.cwd(),
  });
  return { code, stdout, stderr };
}

const COUNT = z.object({ n: z.number() });
async function rowsOf(organizationId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of organizationTables()) {
    const [row] = await queryRows(server.db, statement(`SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1`, COUNT), [organizationId]);
    counts[table] = row!.n;
  }
  return counts;
}

const storedFiles = async (organizationId: string) =>
  (await server.db.containerFile.findMany({ where: { organization_id: organizationId }, select: { storage_key: true } })).map((f) =>
    path.join(server.dataDir, 'blobs', ...f.storage_key.split('/')),
  );

describe('switchyard orgs delete', () => {
  it(
    'removes every row and byte of the organization, and nothing of another',
    async () => {
      const created = await switchyard(['orgs', 'create', '--name', 'Leaving', '--owner-email', 'owner@leaving.example', '--json']);
      expect(created, created.stderr).toMatchObject({ code: 0 });
      const victim = CreateOrganizationOutputSchema.parse(JSON.parse(created.stdout));
      for (const key of [server.managementKey, victim.management_key]) {
        const demo = await switchyard(['demo', '--json'], key);
        expect(demo, demo.stderr).toMatchObject({ code: 0, stderr: '' });
      }

      const tables = organizationTables();
      expect(tables.length).toBeGreaterThan(30);
      const before = { victim: await rowsOf(victim.organization_id), other: await rowsOf(server.organizationId) };
      // The demo made something in most of them, for both.
      expect(Object.values(before.victim).filter((n) => n > 0).length).toBeGreaterThan(20);
      const victimFiles = await storedFiles(victim.organization_id);
      const otherFiles = await storedFiles(server.organizationId);
      expect(victimFiles.length).toBeGreaterThan(0);
      for (const file of [...victimFiles, ...otherFiles]) expect(existsSync(file), file).toBe(true);

      const deleted = await switchyard(['orgs', 'delete', victim.organization_id, '--confirm', victim.organization_id, '--json']);
      expect(deleted, deleted.stderr).toMatchObject({ code: 0, stderr: '' });
      const deletion = OrganizationDeletionSchema.parse(JSON.parse(deleted.stdout));
      expect(deletion).toMatchObject({ organization_id: victim.organization_id, status: 'succeeded', progress: { step: 'done' } });
      expect(deletion.progress!.deleted_objects).toBe(victimFiles.length + (before.victim.documents ?? 0));
      expect(deletion.progress!.deleted_generations).toBe(before.victim.generations);

      const after = { victim: await rowsOf(victim.organization_id), other: await rowsOf(server.organizationId) };
      // Nothing but its tombstone.
      expect(after.victim).toEqual(Object.fromEntries(tables.map((t) => [t, t === 'organization_tombstones' ? 1 : 0])));
      expect(after.other).toEqual(before.other);
      for (const file of victimFiles) expect(existsSync(file), file).toBe(false);
      for (const file of otherFiles) expect(existsSync(file), file).toBe(true);
      expect(await server.db.organization.findUnique({ where: { id: victim.organization_id } })).toBeNull();
      // Its owner belonged to no other organization: gone. The demo's people also belong to the other one: kept.
      expect(await server.db.user.findUnique({ where: { id: victim.owner_user_id } })).toBeNull();
      expect(await server.db.user.count({ where: { email: 'ada@demo.switchyard.dev' } })).toBe(1);

      // The tombstone: ids, totals and dates only.
      const tombstone = await server.db.organizationTombstone.findUniqueOrThrow({ where: { organization_id: victim.organization_id } });
      expect(Object.keys(tombstone).sort()).toEqual([
        'created_at',
        'credit_balance',
        'deleted_at',
        'deleted_by',
        'organization_id',
        'total_credits',
        'total_usage',
      ]);
      expect(Number(tombstone.total_usage)).toBeGreaterThan(0);

      // Its keys are refused; the deletion stays readable.
      const res = await fetch(`${server.url}/api/v1/key`, { headers: { authorization: `Bearer ${victim.management_key}` } });
      expect(res.status).toBe(401);
      const shown = await switchyard(['orgs', 'deletion', deletion.id, '--json']);
      expect(JSON.parse(shown.stdout)).toEqual(deletion);
    },
    scaled(240_000),
  );

  it('refuses without the id repeated, for an unknown organization, and for any tenant key', async () => {
    const created = CreateOrganizationOutputSchema.parse(JSON.parse((await switchyard(['orgs', 'create', '--name', 'Staying', '--json'])).stdout));
    const wrong = await switchyard(['orgs', 'delete', created.organization_id, '--confirm', 'org_other']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('confirm must repeat the organization id');
    expect((await server.db.organization.findUniqueOrThrow({ where: { id: created.organization_id } })).disabled_at).toBeNull();
    const unknown = await switchyard(['orgs', 'delete', 'org_nosuch', '--confirm', 'org_nosuch']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/404|not found|organization org_nosuch/i);
    const platform = createSwitchyardClient({ url: server.url, apiKey: server.platformKey });
    await expect(platform.organizations.deletion.query({ id: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({ data: { httpStatus: 404 } });
    // A tenant, even the organization's own management key, is refused: only the platform deletes.
    const tenant = createSwitchyardClient({ url: server.url, apiKey: created.management_key });
    await expect(tenant.organizations.delete.mutate({ organization_id: created.organization_id, confirm: created.organization_id })).rejects.toMatchObject({
      data: { httpStatus: 403 },
    });
    const anonymous = createSwitchyardClient({ url: server.url, apiKey: '' });
    await expect(anonymous.organizations.delete.mutate({ organization_id: created.organization_id, confirm: created.organization_id })).rejects.toMatchObject({
      data: { httpStatus: 401 },
    });
    expect(await server.db.organization.findUnique({ where: { id: created.organization_id } })).not.toBeNull();
  });
});
