// SCIM directory synchronizations (platform-api.md D15, D16): POST /scim/sync-jobs answers 202 with
// the job and its Location, runs it in the background (a queued job of the job runner), one at a
// time per organization; GET /scim/sync-jobs/{id} reads its outcome. A grant a mapping should give
// but that went missing is restored; a mapped group that no longer exists is counted as deleted.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SyncJobOutputSchema } from '@switchyard/schema';
import type { TestServer } from '../../src/testing/test-server.js';
import { createOrganization, testServer, until, type OrgFixture } from '../fixtures.js';
import { createScimGroup, createScimUser, email, scimToken } from '../fixtures-scim.js';
import { ok } from '../fixtures-trpc.js';

let server: TestServer;
let other: OrgFixture;
let regularKey: string;

beforeAll(async () => {
  server = await testServer();
  other = await createOrganization(server.db);
  regularKey = (await ok(server, 'keys.create', { name: 'regular' })).key;
});
afterAll(async () => {
  await server?.close();
});

const start = (key: string | null = server.managementKey, on: TestServer = server) => on.request('/api/v1/scim/sync-jobs', { method: 'POST', key });
const read = (id: string, key: string | null = server.managementKey) => server.request(`/api/v1/scim/sync-jobs/${id}`, { key });

async function finished(id: string) {
  let job!: ReturnType<typeof SyncJobOutputSchema.parse>['data'];
  await until(async () => {
    job = SyncJobOutputSchema.strict().parse(await (await read(id)).json()).data;
    return job.status === 'succeeded' || job.status === 'failed';
  });
  return job;
}

describe('POST /scim/sync-jobs (D15) and GET /scim/sync-jobs/{id} (D16)', () => {
  it('404 while the organization has no SCIM directory (no groups, no mappings)', async () => {
    const res = await start();
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 404 } });
  });

  it('applies every mapping again: a lost grant is restored, a mapped group that is gone is counted', async () => {
    const token = await scimToken(server);
    const person = await createScimUser(server, token, email('sync'));
    const group = await createScimGroup(server, token, `engineers-${randomUUID().slice(0, 6)}`, [person.id]);
    const workspace = await ok(server, 'workspaces.create', { slug: `sync-${randomUUID().slice(0, 6)}`, name: 'Sync' });
    await ok(server, 'scim.createGroupMapping', { scim_group_id: group.id, workspace_id: workspace.data.id, role: 'member' });
    // A mapping of a group that does not exist (any more).
    await ok(server, 'scim.createGroupMapping', { scim_group_id: randomUUID(), workspace_id: workspace.data.id, role: 'member' });
    const userId = (await server.db.scimUser.findUniqueOrThrow({ where: { id: person.id } })).user_id;
    // The grant went missing behind the directory's back.
    await server.db.workspaceMember.deleteMany({ where: { workspace_id: workspace.data.id, user_id: userId } });

    const res = await start();
    expect(res.status).toBe(202);
    const { data } = SyncJobOutputSchema.strict().parse(await res.json());
    expect(res.headers.get('location')).toBe(`/api/v1/scim/sync-jobs/${data.id}`);
    expect(['queued', 'running', 'succeeded']).toContain(data.status);
    const job = await finished(data.id);
    expect(job).toMatchObject({ status: 'succeeded', synced_groups: 1, deleted_groups: 1, error_message: null });
    expect(job.started_at).not.toBeNull();
    expect(job.finished_at).not.toBeNull();
    expect(await server.db.workspaceMember.count({ where: { workspace_id: workspace.data.id, user_id: userId, scim_granted: true } })).toBe(1);
  });

  it('while one is queued or running, asking again answers that one', async () => {
    // The runner stopped: jobs stay queued.
    await server.jobs.stop();
    try {
      const first = SyncJobOutputSchema.parse(await (await start()).json()).data;
      const again = await Promise.all([start(), start()]);
      for (const res of again) {
        expect(res.status).toBe(202);
        expect(SyncJobOutputSchema.parse(await res.json()).data).toMatchObject({ id: first.id, status: 'queued', started_at: null, synced_groups: null });
      }
    } finally {
      server.jobs.start();
    }
    const latest = await server.db.job.findFirstOrThrow({
      where: { organization_id: server.organizationId, kind: 'scim.sync' },
      orderBy: { created_at: 'desc' },
    });
    expect((await finished(latest.id)).status).toBe('succeeded');
  });

  it("another organization's job, an unknown id and a malformed one are 404", async () => {
    const mine = SyncJobOutputSchema.parse(await (await start()).json()).data;
    await finished(mine.id);
    expect((await read(mine.id, other.managementKey)).status).toBe(404);
    expect((await read(randomUUID())).status).toBe(404);
    expect((await read('not-a-job')).status).toBe(404);
    expect((await read('x'.repeat(300))).status).toBe(404);
  });

  it('401 without a key; 403 for a regular key and a platform key', async () => {
    const mine = SyncJobOutputSchema.parse(await (await start()).json()).data;
    for (const [key, status] of [
      [null, 401],
      [regularKey, 403],
      [server.platformKey, 403],
    ] as const) {
      expect((await start(key)).status).toBe(status);
      expect((await read(mine.id, key)).status).toBe(status);
    }
  });
});
