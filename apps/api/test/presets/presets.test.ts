import { describe, expect, it } from 'vitest';
import {
  GetPresetOutputSchema,
  GetPresetVersionOutputSchema,
  ListPresetsOutputSchema,
  ListPresetVersionsOutputSchema,
  PresetSchema,
  PresetVersionDetailSchema,
  PresetVersionSchema,
  PresetWithVersionSchema,
} from '@switchyard/schema';
import { testServer, useServer } from '../fixtures.js';
import { createRegularKey, createWorkspace, expectEnvelope, expectPaginationEdges, rest } from '../fixtures-admin.js';
import { ok, trpc, trpcRaw } from '../fixtures-trpc.js';

const ListSchema = ListPresetVersionsOutputSchema.extend({ data: PresetVersionSchema.strict().nullable().array() }).strict();
const PresetsSchema = ListPresetsOutputSchema.extend({ data: PresetSchema.strict().array() }).strict();
const OneSchema = GetPresetOutputSchema.extend({
  data: PresetWithVersionSchema.extend({ designated_version: PresetVersionDetailSchema.strict().nullable() }).strict(),
}).strict();
const VersionSchema = GetPresetVersionOutputSchema.extend({ data: PresetVersionDetailSchema.strict().nullable() }).strict();

const env = useServer();

describe('GET /presets/{slug}/versions', () => {
  it('lists versions in ascending order with every field; a deleted version keeps its place as null', async () => {
    const created = await ok(env.server, 'presets.create', {
      slug: 'support-bot',
      name: 'Support bot',
      config: { model: 'openai/gpt-4o', temperature: 0.2 },
      system_prompt: 'Be kind.',
    });
    expect(created.version).toMatchObject({ version: 1, preset_id: created.data.id });
    await ok(env.server, 'presets.createVersion', { slug: 'support-bot', config: { model: 'openai/gpt-4o-mini', temperature: 0 } });
    await ok(env.server, 'presets.createVersion', { slug: 'support-bot', config: { model: 'x/y' }, system_prompt: 'Three.' });
    expect(await ok(env.server, 'presets.deleteVersion', { slug: 'support-bot', version: 2 })).toEqual({ deleted: true });

    const { status, body } = await rest(env.server, '/presets/support-bot/versions?limit=50&offset=0');
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
    await expectPaginationEdges(env.server, '/presets/support-bot/versions', 3);
    expect((await rest(env.server, '/presets/support-bot/versions?offset=1&limit=1')).body).toEqual({ data: [null], total_count: 3 });
    // Deleting again is a 404; the numbering continues after a deletion.
    expect((await trpc(env.server, 'presets.deleteVersion', { slug: 'support-bot', version: 2 })).status).toBe(404);
    expect((await ok(env.server, 'presets.createVersion', { slug: 'support-bot', config: {} })).data.version).toBe(4);
  });

  it('numbers concurrent new versions without gaps or duplicates', async () => {
    await ok(env.server, 'presets.create', { slug: 'busy', name: 'Busy', config: {} });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => trpc(env.server, 'presets.createVersion', { slug: 'busy', config: { i } })));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    expect(answers.map((a) => a.data.data.version).sort((x: number, y: number) => x - y)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it('path slugs are percent-decoded; 404 for an unknown or foreign preset', async () => {
    await ok(env.server, 'presets.create', { slug: 'a.b~c', name: 'odd', config: {} });
    expect((await rest(env.server, '/presets/a.b~c/versions')).status).toBe(200);
    expect((await rest(env.server, '/presets/a%2Eb~c/versions')).status).toBe(200);
    expectEnvelope(await rest(env.server, '/presets/missing/versions'), 404);
    await ok(env.server, 'presets.create', { slug: 'theirs', name: 'theirs', config: {} }, { key: env.other.managementKey });
    expectEnvelope(await rest(env.server, '/presets/theirs/versions'), 404);
    expect(ListSchema.parse((await rest(env.server, '/presets/theirs/versions', { key: env.other.managementKey })).body).total_count).toBe(1);
    expect((await trpc(env.server, 'presets.createVersion', { slug: 'theirs', config: {} })).status).toBe(404);
    // The same slug is free in another organization.
    expect((await trpc(env.server, 'presets.create', { slug: 'theirs', name: 'mine', config: {} })).status).toBe(200);
  });

  it('400 for bad pagination or internal input; 401 without a key; a regular key sees its own workspace only', async () => {
    expectEnvelope(await rest(env.server, '/presets/support-bot/versions?offset=x'), 400);
    expect((await trpc(env.server, 'presets.create', { slug: 'has space', name: 'x', config: {} })).status).toBe(400);
    expect((await trpc(env.server, 'presets.create', { slug: 'support-bot', name: 'dup', config: {} })).status).toBe(400);
    expect((await trpcRaw(env.server, 'presets.create', { slug: 'cfg', name: 'x', config: 'not an object' })).status).toBe(400);
    expectEnvelope(await rest(env.server, '/presets/support-bot/versions', { key: null }), 401);

    const { key } = await createRegularKey(env.server);
    expect((await rest(env.server, '/presets/support-bot/versions', { key })).status).toBe(200);
    const ws = await createWorkspace(env.server, 'elsewhere');
    await ok(env.server, 'presets.create', { slug: 'elsewhere-preset', name: 'x', config: {}, workspace_id: ws.id });
    expectEnvelope(await rest(env.server, '/presets/elsewhere-preset/versions', { key }), 404);
    expect((await trpc(env.server, 'presets.createVersion', { slug: 'support-bot', config: {} }, { key })).status).toBe(403);
  });
});

describe('GET /presets, /presets/{slug} and /presets/{slug}/versions/{version}', () => {
  it('lists presets most recently updated first, with every field, paginated', async () => {
    const fresh = await testServer();
    try {
      const make = (slug: string) => ok(fresh, 'presets.create', { slug, name: slug.toUpperCase(), config: { model: 'a/b' } });
      const a = await make('alpha');
      await make('beta');
      await make('gamma');
      // A new version makes alpha the most recently updated.
      await ok(fresh, 'presets.createVersion', { slug: 'alpha', config: { model: 'a/c' } });
      const { status, body } = await rest(fresh, '/presets?offset=0&limit=50');
      expect(status).toBe(200);
      const list = PresetsSchema.parse(body);
      expect(list.total_count).toBe(3);
      expect(list.data.map((p) => p.slug)).toEqual(['alpha', 'gamma', 'beta']);
      const owner = await fresh.db.organizationMember.findFirstOrThrow({ where: { organization_id: fresh.organizationId } });
      expect(list.data[0]).toEqual({
        id: a.data.id,
        slug: 'alpha',
        name: 'ALPHA',
        description: null,
        status: 'active',
        status_updated_at: null,
        designated_version_id: expect.any(String),
        creator_user_id: owner.user_id,
        workspace_id: fresh.workspaceId,
        created_at: a.data.created_at,
        updated_at: expect.any(String),
      });
      expect(list.data[0]!.designated_version_id).not.toBe(a.version.id);
      await expectPaginationEdges(fresh, '/presets', 3);
    } finally {
      await fresh.close();
    }
  });

  it('a preset with its version in force; the next newest after that one is deleted; null when none is left', async () => {
    const created = await ok(env.server, 'presets.create', { slug: 'designated', name: 'D', config: { model: 'a/b' } });
    const second = await ok(env.server, 'presets.createVersion', { slug: 'designated', config: { model: 'a/c' }, system_prompt: 'Two.' });
    const read = async () => {
      const answer = await rest(env.server, '/presets/designated');
      expect(answer.status).toBe(200);
      return OneSchema.parse(answer.body).data;
    };
    const first = await read();
    expect(first.designated_version_id).toBe(second.data.id);
    expect(first.designated_version).toEqual({ ...second.data, system_prompt: 'Two.' });
    await ok(env.server, 'presets.deleteVersion', { slug: 'designated', version: 2 });
    const after = await read();
    expect(after.designated_version_id).toBe(created.version.id);
    // system_prompt is present, null, when the version has none.
    expect(after.designated_version).toMatchObject({ version: 1, system_prompt: null });
    await ok(env.server, 'presets.deleteVersion', { slug: 'designated', version: 1 });
    expect(await read()).toMatchObject({ designated_version_id: null, designated_version: null });
  });

  it('one version by number; data null for a deleted one; 404 for one it never had; 400 for a non-number', async () => {
    const created = await ok(env.server, 'presets.create', { slug: 'numbered', name: 'N', config: { temperature: 1 }, system_prompt: 'One.' });
    await ok(env.server, 'presets.createVersion', { slug: 'numbered', config: {} });
    await ok(env.server, 'presets.deleteVersion', { slug: 'numbered', version: 2 });
    const one = await rest(env.server, '/presets/numbered/versions/1');
    expect(one.status).toBe(200);
    expect(VersionSchema.parse(one.body)).toEqual({ data: { ...created.version, system_prompt: 'One.' } });
    const deleted = await rest(env.server, '/presets/numbered/versions/2');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: null });
    expectEnvelope(await rest(env.server, '/presets/numbered/versions/3'), 404);
    expectEnvelope(await rest(env.server, '/presets/missing/versions/1'), 404);
    expectEnvelope(await rest(env.server, '/presets/numbered/versions/one'), 400);
    expectEnvelope(await rest(env.server, '/presets/numbered/versions/-1'), 400);
    expectEnvelope(await rest(env.server, '/presets/missing'), 404);
  });

  it("401 without a key; another organization's presets are 404; a regular key sees its own workspace only", async () => {
    await ok(env.server, 'presets.create', { slug: 'secret-sauce', name: 'S', config: {} }, { key: env.other.managementKey });
    expectEnvelope(await rest(env.server, '/presets/secret-sauce'), 404);
    expectEnvelope(await rest(env.server, '/presets/secret-sauce/versions/1'), 404);
    expect(PresetsSchema.parse((await rest(env.server, '/presets?limit=100')).body).data.map((p) => p.slug)).not.toContain('secret-sauce');
    for (const path of ['/presets', '/presets/support-bot', '/presets/support-bot/versions/1']) {
      expectEnvelope(await rest(env.server, path, { key: null }), 401);
    }
    const ws = await createWorkspace(env.server, 'preset-ws');
    await ok(env.server, 'presets.create', { slug: 'team-only', name: 'T', config: {}, workspace_id: ws.id });
    const { key } = await createRegularKey(env.server);
    const seen = PresetsSchema.parse((await rest(env.server, '/presets?limit=100', { key })).body).data.map((p) => p.slug);
    expect(seen).toContain('support-bot');
    expect(seen).not.toContain('team-only');
    expect((await rest(env.server, '/presets/support-bot', { key })).status).toBe(200);
    expect((await rest(env.server, '/presets/support-bot/versions/1', { key })).status).toBe(200);
    expectEnvelope(await rest(env.server, '/presets/team-only', { key }), 404);
    expectEnvelope(await rest(env.server, '/presets/team-only/versions/1', { key }), 404);
    const { key: theirs } = await createRegularKey(env.server, ws.id);
    expect(PresetsSchema.parse((await rest(env.server, '/presets', { key: theirs })).body).data.map((p) => p.slug)).toEqual(['team-only']);
  });
});

describe('timestamps', () => {
  it('come from the server clock: create, a new version, a deleted version', async () => {
    const at = (iso: string) => {
      env.server.setNow(new Date(iso));
      return iso;
    };
    try {
      const created = at('2026-02-03T04:05:06.007Z');
      const preset = await ok(env.server, 'presets.create', { slug: 'clocked', name: 'C', config: {} });
      expect(preset.data).toMatchObject({ created_at: created, updated_at: created });
      expect(preset.version).toMatchObject({ created_at: created, updated_at: created });

      const versioned = at('2026-02-04T00:00:00.000Z');
      const second = await ok(env.server, 'presets.createVersion', { slug: 'clocked', config: { n: 2 } });
      expect(second.data).toMatchObject({ created_at: versioned, updated_at: versioned });
      expect(OneSchema.parse((await rest(env.server, '/presets/clocked')).body).data).toMatchObject({ created_at: created, updated_at: versioned });

      const deleted = at('2026-02-05T00:00:00.000Z');
      await ok(env.server, 'presets.deleteVersion', { slug: 'clocked', version: 2 });
      const row = await env.server.db.presetVersion.findFirstOrThrow({ where: { id: second.data.id } });
      expect(row.deleted_at?.toISOString()).toBe(deleted);
      expect(OneSchema.parse((await rest(env.server, '/presets/clocked')).body).data).toMatchObject({ updated_at: deleted });
    } finally {
      env.server.setNow(null);
    }
  });
});
