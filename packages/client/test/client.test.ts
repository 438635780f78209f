// The typed client against a real server (express on a free port, real PostgreSQL).
import { describe, expect, it } from 'vitest';
import { createSwitchyardClient, type RouterOutputs } from '../src/index.js';
import { failure, useServer } from './support.js';

const env = useServer();
const { client } = env;

describe('@switchyard/client', () => {
  it('keys.current answers what GET /api/v1/key answers', async () => {
    const viaClient: RouterOutputs['keys']['current'] = await client(env.server.managementKey).keys.current.query();
    const viaRest = await (await env.server.request('/api/v1/key')).json();
    expect(viaClient).toEqual(viaRest);
    expect(viaClient.data.is_management_key).toBe(true);
  });

  it('creates a key whose secret then authenticates, and changes it', async () => {
    const admin = client(env.server.managementKey);
    const created = await admin.keys.create.mutate({ name: 'service', limit: 5, limit_reset: 'daily' });
    expect(created.key).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
    expect(created.data).toMatchObject({ name: 'service', limit: 5, limit_reset: 'daily', disabled: false, is_management_key: false });
    const own = await client(created.key).keys.current.query();
    expect(own.data).toMatchObject({ label: created.data.label, limit: 5, limit_remaining: 5, is_management_key: false });

    const updated = await admin.keys.update.mutate({ hash: created.data.hash, limit: 7, disabled: true });
    expect(updated.data).toMatchObject({ limit: 7, disabled: true });
    expect((await failure(client(created.key).keys.current.query())).status).toBe(401);

    expect(await admin.keys.delete.mutate({ hash: created.data.hash })).toEqual({ deleted: true });
    expect((await failure(admin.keys.get.query({ hash: created.data.hash }))).status).toBe(404);
  });

  it("lists and shows the default workspace's keys, newest first, with offset (and this API's limit)", async () => {
    const admin = client(env.server.managementKey);
    const a = await admin.keys.create.mutate({ name: 'list-a' });
    const b = await admin.keys.create.mutate({ name: 'list-b' });
    const page = await admin.keys.list.query({ limit: 2, offset: 0 });
    expect(page.data.map((k) => k.hash)).toEqual([b.data.hash, a.data.hash]);
    const all = await admin.keys.list.query({});
    expect(all.data.length).toBeGreaterThanOrEqual(3);
    expect((await admin.keys.list.query({ offset: all.data.length })).data).toEqual([]);
    expect((await admin.keys.get.query({ hash: a.data.hash })).data).toEqual(a.data);
    expect(JSON.stringify(page)).not.toContain(a.key);
    expect((await failure(admin.keys.list.query({ limit: 101 }))).status).toBe(400);
  });

  it('rejects with a typed error carrying the HTTP status and the spec message', async () => {
    const missing = await failure(client('sk-sy-v1-nope').keys.current.query());
    expect(missing).toMatchObject({ status: 401, message: 'Missing Authentication header' });

    const { key } = await client(env.server.managementKey).keys.create.mutate({ name: 'regular' });
    const forbidden = await failure(client(key).keys.create.mutate({ name: 'x' }));
    expect(forbidden).toMatchObject({ status: 403, message: 'Only management keys can perform this operation' });

    const invalid = await failure(client(env.server.managementKey).keys.create.mutate({ name: '' }));
    expect(invalid).toMatchObject({ status: 400, message: 'Invalid request parameters' });
    expect(invalid.metadata).toMatchObject({ issues: [{ path: 'name' }] });
  });

  it("cannot reach another organization's keys", async () => {
    const other = await env.server.db.apiKey.findFirstOrThrow({ where: { is_management_key: true } });
    // A second organization, created directly: its key is unknown to this organization's admin.
    const org = await env.server.db.organization.create({ data: { id: 'org_isolation', name: 'Isolated' } });
    const ws = await env.server.db.workspace.create({ data: { organization_id: org.id, slug: 'default', name: 'Default' } });
    const foreign = await env.server.db.apiKey.create({
      data: { ...other, id: undefined, hash: 'f'.repeat(64), organization_id: org.id, workspace_id: ws.id, name: 'foreign' },
    });
    const notFound = await failure(client(env.server.managementKey).keys.update.mutate({ hash: foreign.hash, disabled: true }));
    expect(notFound).toMatchObject({ status: 404, message: 'Resource not found' });
    expect((await env.server.db.apiKey.findUniqueOrThrow({ where: { id: foreign.id } })).disabled).toBe(false);
  });

  it('reports status 0 when the server cannot be reached', async () => {
    const error = await failure(createSwitchyardClient({ url: 'http://127.0.0.1:1', apiKey: 'x' }).keys.current.query());
    expect(error.status).toBe(0);
  });
});
