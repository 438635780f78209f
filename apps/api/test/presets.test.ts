import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListPresetVersionsOutputSchema, PresetVersionSchema } from '@switchyard/schema';
import type { TestServer } from '../src/testing.js';
import { createOrganization, testServer, type OrgFixture } from './fixtures.js';
import { createRegularKey, createWorkspace, expectEnvelope, expectPaginationEdges, ok, rest, trpc } from './fixtures-admin.js';

const ListSchema = ListPresetVersionsOutputSchema.extend({ data: PresetVersionSchema.strict().nullable().array() }).strict();

let server: TestServer;
let other: OrgFixture;
beforeAll(async () => {
  server = await testServer();
  other = await createOrganization(server.db);
});
afterAll(async () => {
  await server?.close();
});

describe('GET /presets/{slug}/versions', () => {
  it('lists versions in ascending order with every field; a deleted version keeps its place as null', async () => {
    const created = await ok(server, 'presets.create', {
      slug: 'support-bot',
      name: 'Support bot',
      config: { model: 'openai/gpt-4o', temperature: 0.2 },
      system_prompt: 'Be kind.',
    });
    expect(created.version).toMatchObject({ version: 1, preset_id: created.data.id });
    await ok(server, 'presets.createVersion', { slug: 'support-bot', config: { model: 'openai/gpt-4o-mini', temperature: 0 } });
    await ok(server, 'presets.createVersion', { slug: 'support-bot', config: { model: 'x/y' }, system_prompt: 'Three.' });
    expect(await ok(server, 'presets.deleteVersion', { slug: 'support-bot', version: 2 })).toEqual({ deleted: true });

    const { status, body } = await rest(server, '/presets/support-bot/versions?limit=50&offset=0');
    expect(status).toBe(200);
    const list = ListSchema.parse(body);
    expect(list.total_count).toBe(3);
    expect(list.data.map((v) => v?.version ?? null)).toEqual([1, null, 3]);
    expect(list.data[0]).toEqual({
      id: created.version.id,
      preset_id: created.data.id,
      version: 1,
      config: { model: 'openai/gpt-4o', temperature: 0.2 },
      system_prompt: 'Be kind.',
      creator_id: expect.stringMatching(/^user_/),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    await expectPaginationEdges(server, '/presets/support-bot/versions', 3);
    expect((await rest(server, '/presets/support-bot/versions?offset=1&limit=1')).body).toEqual({ data: [null], total_count: 3 });
    // Deleting again is a 404; the numbering continues after a deletion.
    expect((await trpc(server, 'presets.deleteVersion', { slug: 'support-bot', version: 2 })).status).toBe(404);
    expect((await ok(server, 'presets.createVersion', { slug: 'support-bot', config: {} })).data.version).toBe(4);
  });

  it('numbers concurrent new versions without gaps or duplicates', async () => {
    await ok(server, 'presets.create', { slug: 'busy', name: 'Busy', config: {} });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => trpc(server, 'presets.createVersion', { slug: 'busy', config: { i } })));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    expect(answers.map((a) => a.data.data.version).sort((x: number, y: number) => x - y)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it('path slugs are percent-decoded; 404 for an unknown or foreign preset', async () => {
    await ok(server, 'presets.create', { slug: 'a.b~c', name: 'odd', config: {} });
    expect((await rest(server, '/presets/a.b~c/versions')).status).toBe(200);
    expect((await rest(server, '/presets/a%2Eb~c/versions')).status).toBe(200);
    expectEnvelope(await rest(server, '/presets/missing/versions'), 404);
    await ok(server, 'presets.create', { slug: 'theirs', name: 'theirs', config: {} }, { key: other.managementKey });
    expectEnvelope(await rest(server, '/presets/theirs/versions'), 404);
    expect((await rest(server, '/presets/theirs/versions', { key: other.managementKey })).body.total_count).toBe(1);
    expect((await trpc(server, 'presets.createVersion', { slug: 'theirs', config: {} })).status).toBe(404);
    // The same slug is free in another organization.
    expect((await trpc(server, 'presets.create', { slug: 'theirs', name: 'mine', config: {} })).status).toBe(200);
  });

  it('400 for bad pagination or internal input; 401 without a key; a regular key sees its own workspace only', async () => {
    expectEnvelope(await rest(server, '/presets/support-bot/versions?offset=x'), 400);
    expect((await trpc(server, 'presets.create', { slug: 'has space', name: 'x', config: {} })).status).toBe(400);
    expect((await trpc(server, 'presets.create', { slug: 'support-bot', name: 'dup', config: {} })).status).toBe(400);
    expect((await trpc(server, 'presets.create', { slug: 'cfg', name: 'x', config: 'not an object' })).status).toBe(400);
    expectEnvelope(await rest(server, '/presets/support-bot/versions', { key: null }), 401);

    const { key } = await createRegularKey(server);
    expect((await rest(server, '/presets/support-bot/versions', { key })).status).toBe(200);
    const ws = await createWorkspace(server, 'elsewhere');
    await ok(server, 'presets.create', { slug: 'elsewhere-preset', name: 'x', config: {}, workspace_id: ws.id });
    expectEnvelope(await rest(server, '/presets/elsewhere-preset/versions', { key }), 404);
    expect((await trpc(server, 'presets.createVersion', { slug: 'support-bot', config: {} }, { key })).status).toBe(403);
  });
});
