// Replicas that agree at once, within one server: writes made straight in the database (as another
// replica, a script or psql would make them) reach this server's caches through LISTEN/NOTIFY. The
// server keeps what it reads for CACHE_TTL_MS = 60 s here, so anything seen within the tests' own
// timeouts was announced. The figure between two server processes is in replicas.test.ts.
import { listen, LISTENER_APPLICATION_NAME } from '@switchyard/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CACHE_CHANNEL } from '../../src/cache-events.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { managementActor, until } from '../fixtures.js';
import { createKey, demoCatalog, record } from '../fixtures-catalog.js';
import { testServerWith } from '../fixtures-files.js';
import { ok, trpc } from '../fixtures-trpc.js';

const statusOf = async (server: TestServer, key: string) => (await server.request('/api/v1/key', { key })).status;
/** GET /model/acme/guarded with `key` (a model the guardrail tests write first, see guardedModel). */
const modelStatus = async (server: TestServer, key: string) => (await server.request('/api/v1/model/acme/guarded', { key })).status;
const guardedModel = (on: TestServer = server) =>
  ok(on, 'models.upsert', { ...demoCatalog.models[0]!, id: 'acme/guarded', aliases: [], variants: [], endpoints: [] });

let server: TestServer;
beforeAll(async () => {
  server = await testServerWith({ CACHE_TTL_MS: '60000', USAGE_CACHE_MS: '1000' });
});
afterAll(async () => {
  await server?.close();
});

describe('announcements through LISTEN/NOTIFY', () => {
  it('refuse a key disabled straight in the database as soon as the announcement arrives', async () => {
    const { key, hash } = await createKey(server);
    expect(await statusOf(server, key)).toBe(200); // read once: kept for 60 s
    await server.db.apiKey.update({ where: { hash }, data: { disabled: true } });
    await until(async () => (await statusOf(server, key)) === 401);
    // Deleted keys too.
    const other = await createKey(server);
    expect(await statusOf(server, other.key)).toBe(200);
    await server.db.apiKey.delete({ where: { hash: other.hash } });
    await until(async () => (await statusOf(server, other.key)) === 401);
  });

  it('show a catalog change and a new member straight from the database', async () => {
    const model = { ...demoCatalog.models[0]!, id: 'acme/announced', aliases: [], variants: [], endpoints: [] };
    expect((await trpc(server, 'models.upsert', model)).status).toBe(200);
    const name = async () => ((await (await server.request('/api/v1/model/acme/announced')).json()) as { data: { name: string } }).data.name;
    expect(await name()).toBe(model.name);
    await server.db.model.update({ where: { id: 'acme/announced' }, data: { name: 'Renamed elsewhere' } });
    await until(async () => (await name()) === 'Renamed elsewhere');

    const total = async () => ((await (await server.request('/api/v1/organization/members?limit=1')).json()) as { total_count: number }).total_count;
    const before = await total();
    const actor = await managementActor(server);
    await server.db.user.create({ data: { id: 'user_announced', email: 'announced@example.com' } });
    await server.db.organizationMember.create({ data: { organization_id: actor.organizationId, user_id: 'user_announced' } });
    await until(async () => (await total()) === before + 1);
  });

  it("show providers and a model's endpoints written straight in the database", async () => {
    const providers = async () => ((await (await server.request('/api/v1/providers')).json()) as { data: Array<{ slug: string }> }).data;
    await providers(); // read once: kept for 60 s
    await server.db.provider.create({ data: { slug: 'announced-cloud', name: 'Announced Cloud' } });
    await until(async () => (await providers()).some((p) => p.slug === 'announced-cloud'));
    const model = { ...demoCatalog.models[0]!, id: 'acme/served', aliases: [], variants: [], endpoints: [] };
    expect((await trpc(server, 'models.upsert', model)).status).toBe(200);
    const endpoints = async () =>
      ((await (await server.request('/api/v1/models/acme/served/endpoints')).json()) as { data: { endpoints: unknown[] } }).data.endpoints;
    expect(await endpoints()).toEqual([]);
    await server.db.modelEndpoint.create({
      data: {
        model_id: 'acme/served',
        provider_slug: 'announced-cloud',
        tag: 'announced-cloud',
        name: 'Announced Cloud | acme/served',
        context_length: 1000,
        pricing: { prompt: '0', completion: '0' },
        supported_parameters: [],
        supports_tool_choice: { auto: false, function: false, none: false, required: false },
        position: 0,
      },
    });
    await until(async () => (await endpoints()).length === 1);
  });

  it("apply a guardrail assigned, changed and unassigned straight in the database to the key's next GET /model", async () => {
    await guardedModel();
    const { key, hash } = await createKey(server);
    const row = await server.db.apiKey.findUniqueOrThrow({ where: { hash } });
    expect(await modelStatus(server, key)).toBe(200); // the key's guardrails (none) read once: kept for 60 s
    const g = await server.db.guardrail.create({
      data: { organization_id: row.organization_id, workspace_id: row.workspace_id, name: 'announced', ignored_models: ['acme/guarded'] },
    });
    const assignment = await server.db.guardrailKeyAssignment.create({
      data: { organization_id: row.organization_id, guardrail_id: g.id, api_key_id: row.id, assigned_by: row.creator_user_id },
    });
    await until(async () => (await modelStatus(server, key)) === 403);
    await server.db.guardrail.update({ where: { id: g.id }, data: { ignored_models: ['acme/other'] } });
    await until(async () => (await modelStatus(server, key)) === 200);
    await server.db.guardrail.update({ where: { id: g.id }, data: { ignored_models: ['acme/guarded'] } });
    await until(async () => (await modelStatus(server, key)) === 403);
    await server.db.guardrailKeyAssignment.delete({ where: { id: assignment.id } });
    await until(async () => (await modelStatus(server, key)) === 200);
  });

  it('are sent for what caches hold, and not for the usage a recording moves', async () => {
    const heard: string[] = [];
    const listener = await listen(server.databaseUrl, CACHE_CHANNEL, { message: (payload) => heard.push(payload) });
    try {
      const { key, hash } = await createKey(server); // a new key: nothing cached anywhere, nothing announced
      await record(server, { api_key_hash: hash, usage: 0.25 });
      await record(server, { api_key_hash: hash, usage: 0 });
      expect(await statusOf(server, key)).toBe(200);
      await server.db.apiKey.update({ where: { hash }, data: { name: 'renamed' } });
      // Notifications arrive in commit order: once the rename's is in, the recordings' would be too.
      await until(async () => heard.includes(`key:${hash}`));
      expect(heard.filter((payload) => payload.startsWith('key:'))).toEqual([`key:${hash}`]);
      expect(heard.filter((payload) => payload === 'catalog')).toEqual([]);
    } finally {
      await listener.close();
    }
  });
});

describe('guardrail writes through this server', () => {
  it("apply to the key's very next GET /model, with no announcement at all", async () => {
    const quiet = await testServerWith({ CACHE_TTL_MS: '60000' });
    try {
      // Announcements of guardrail writes are lost in this database: only the server's own forgetting is left.
      for (const table of ['guardrails', 'guardrail_key_assignments']) await quiet.db.$executeRawUnsafe(`DROP TRIGGER ${table}_notify ON ${table}`);
      await guardedModel(quiet);
      const { key, hash } = await createKey(quiet);
      expect(await modelStatus(quiet, key)).toBe(200); // kept for 60 s
      const { data } = await ok(quiet, 'guardrails.create', { name: 'through the API', ignored_models: ['acme/guarded'] });
      expect(await modelStatus(quiet, key)).toBe(200); // assigned to no one yet
      await ok(quiet, 'guardrails.assignKeys', { id: data.id, key_hashes: [hash] });
      expect(await modelStatus(quiet, key)).toBe(403);
      await ok(quiet, 'guardrails.update', { id: data.id, ignored_models: null });
      expect(await modelStatus(quiet, key)).toBe(200);
      await ok(quiet, 'guardrails.update', { id: data.id, ignored_models: ['acme/guarded'] });
      expect(await modelStatus(quiet, key)).toBe(403);
      await ok(quiet, 'guardrails.unassignKeys', { id: data.id, key_hashes: [hash] });
      expect(await modelStatus(quiet, key)).toBe(200);
      await ok(quiet, 'guardrails.assignKeys', { id: data.id, key_hashes: [hash] });
      expect(await modelStatus(quiet, key)).toBe(403);
      await ok(quiet, 'guardrails.delete', { id: data.id });
      expect(await modelStatus(quiet, key)).toBe(200);
    } finally {
      await quiet.close();
    }
  });
});

describe("a key's spend figures in GET /key (kept for USAGE_CACHE_MS = 1 s here, never announced)", () => {
  const usageOf = async (key: string) =>
    ((await (await server.request('/api/v1/key', { key })).json()) as { data: { usage: number; usage_daily: number } }).data;

  it('show a generation recorded through this server in the very next GET /key', async () => {
    const { key, hash } = await createKey(server);
    expect(await usageOf(key)).toMatchObject({ usage: 0, usage_daily: 0 }); // read once: kept for 1 s
    await record(server, { api_key_hash: hash, usage: 0.25 });
    expect(await usageOf(key)).toMatchObject({ usage: 0.25, usage_daily: 0.25 });
    // Through the batch path too.
    const { data } = await trpc(server, 'generations.recordBatch', {
      generations: [{ id: `batch-${hash.slice(0, 8)}`, api_key_hash: hash, model: 'openai/gpt-4o', usage: 0.5 }],
    });
    expect(data.results[0]).toMatchObject({ status: 'recorded' });
    expect(await usageOf(key)).toMatchObject({ usage: 0.75, usage_daily: 0.75 });
  });

  it('show spend recorded anywhere else (another replica, straight in the database) once USAGE_CACHE_MS has passed', async () => {
    const { key, hash } = await createKey(server);
    expect((await usageOf(key)).usage).toBe(0);
    await server.db.apiKey.update({ where: { hash }, data: { usage: 2 } });
    await until(async () => (await usageOf(key)).usage === 2);
  });
});

describe('a lost announcement', () => {
  it('after the listening connection is cut, the server listens again, drops what it holds, and hears again', async () => {
    const { key, hash } = await createKey(server);
    expect(await statusOf(server, key)).toBe(200);
    const logged = server.logs.length;
    await server.db.$executeRaw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = ${LISTENER_APPLICATION_NAME} AND datname = current_database()`;
    // Announced while it reconnects (lost), or after (heard): refused either way.
    await server.db.apiKey.update({ where: { hash }, data: { disabled: true } });
    await until(async () => server.logs.slice(logged).some((entry) => entry.component === 'cache-events' && entry.level === 30));
    await until(async () => (await statusOf(server, key)) === 401);
    // And announcements are heard again.
    const next = await createKey(server);
    expect(await statusOf(server, next.key)).toBe(200);
    await server.db.apiKey.update({ where: { hash: next.hash }, data: { disabled: true } });
    await until(async () => (await statusOf(server, next.key)) === 401);
  });

  it('is still bounded by CACHE_TTL_MS', async () => {
    const bounded = await testServerWith({ CACHE_TTL_MS: '1000' });
    try {
      // No announcement at all for key updates in this database: every one is lost.
      await bounded.db.$executeRaw`DROP TRIGGER api_keys_notify_update ON api_keys`;
      const { key, hash } = await createKey(bounded);
      expect(await statusOf(bounded, key)).toBe(200);
      await bounded.db.apiKey.update({ where: { hash }, data: { disabled: true } });
      // No notification comes: the TTL alone ends the cached row.
      await until(async () => (await statusOf(bounded, key)) === 401, { everyMs: 50, what: 'the TTL to end the disabled key' });
    } finally {
      await bounded.close();
    }
  });
});
