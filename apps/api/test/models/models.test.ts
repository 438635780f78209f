// GET /model/{author}/{slug}, GET /embeddings/models and the internal catalog writes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelopeSchema, GetModelOutputSchema, ListEmbeddingsModelsOutputSchema, ModelSchema } from '@switchyard/schema';
import type { TestServer } from '../../src/testing/test-server.js';
import { snapshotAnswer, type CatalogSnapshot } from '../../src/modules/models/catalog-cache.js';
import { createOrganization, expectExactOutput, testServer } from '../fixtures.js';
import { createKey, demoCatalog, importDemoCatalog } from '../fixtures-catalog.js';
import { trpc } from '../fixtures-trpc.js';

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
  await importDemoCatalog(server);
});
afterAll(async () => {
  await server?.close();
});

async function expectError(res: Response, status: number, message: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(ErrorEnvelopeSchema.strict().parse(await res.json())).toMatchObject({ error: { code: status, message } });
}

async function getModel(path: string, key?: string | null) {
  const res = await server.request(`/api/v1/model/${path}`, { key });
  expect(res.status).toBe(200);
  return expectExactOutput(GetModelOutputSchema, await res.json()).data;
}

const embeddingIds = demoCatalog.models
  .filter((m) => m.architecture.output_modalities.includes('embeddings'))
  .map((m) => m.id)
  .sort();

describe('the demo catalog', () => {
  it('has at least 20 chat models and 5 embeddings models, with variants, aliases and reasoning blocks', () => {
    const chat = demoCatalog.models.filter((m) => m.architecture.output_modalities.includes('text'));
    expect(chat.length).toBeGreaterThanOrEqual(20);
    expect(embeddingIds.length).toBeGreaterThanOrEqual(5);
    expect(demoCatalog.models.filter((m) => m.variants?.length).length).toBeGreaterThanOrEqual(3);
    expect(demoCatalog.models.filter((m) => m.aliases?.length).length).toBeGreaterThanOrEqual(3);
    expect(demoCatalog.models.filter((m) => m.reasoning).length).toBeGreaterThanOrEqual(3);
  });

  it('imports again without duplicating anything (idempotent)', async () => {
    const before = await Promise.all([server.db.model.count(), server.db.modelAlias.count(), server.db.modelVariant.count()]);
    await importDemoCatalog(server);
    const after = await Promise.all([server.db.model.count(), server.db.modelAlias.count(), server.db.modelVariant.count()]);
    expect(after).toEqual(before);
    expect(before[0]).toBe(demoCatalog.models.length);
  });
});

describe('GET /model/{author}/{slug}', () => {
  it('returns the full Model record, every field present, null where unknown', async () => {
    const res = await server.request('/api/v1/model/openai/gpt-4o');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { data: Record<string, unknown> };
    const model = GetModelOutputSchema.strict().parse(body).data;
    expect(model).toEqual({
      id: 'openai/gpt-4o',
      canonical_slug: 'openai/gpt-4o-2024-08-06',
      name: 'OpenAI: GPT-4o',
      description: expect.any(String),
      created: 1715558400,
      context_length: 128000,
      architecture: {
        input_modalities: ['text', 'image', 'file'],
        output_modalities: ['text'],
        modality: 'text+image+file->text',
        tokenizer: 'GPT',
        instruct_type: null,
      },
      pricing: { prompt: '0.0000025', completion: '0.00001', image: '0.003613', request: '0' },
      top_provider: { context_length: 128000, is_moderated: true, max_completion_tokens: 16384 },
      supported_parameters: expect.arrayContaining(['temperature', 'tools']),
      supported_voices: null,
      default_parameters: null,
      per_request_limits: null,
      expiration_date: null,
      knowledge_cutoff: '2023-10',
      links: { details: '/api/v1/models/openai/gpt-4o/endpoints' },
    });
    for (const field of ['supported_voices', 'default_parameters', 'per_request_limits', 'expiration_date', 'knowledge_cutoff']) {
      expect(body.data).toHaveProperty(field);
    }
    // reasoning is "object, optional" in the spec: present on reasoning models only.
    expect(body.data).not.toHaveProperty('reasoning');
  });

  it('carries the reasoning block, expiration date and per-request limits where the catalog has them', async () => {
    expect((await getModel('openai/o3')).reasoning).toEqual({
      default_effort: 'medium',
      default_enabled: true,
      mandatory: true,
      supported_efforts: ['high', 'medium', 'low'],
    });
    expect((await getModel('mistralai/mistral-large-2411')).expiration_date).toBe('2026-12-31T00:00:00.000Z');
    expect((await getModel('cohere/command-r-plus-08-2024')).per_request_limits).toEqual({
      prompt_tokens: 4_000_000,
      completion_tokens: 1_000_000,
    });
  });

  it('returns a variant with its own id and pricing, percent-encoded or not', async () => {
    for (const path of ['openai/gpt-oss-20b%3Afree', 'openai/gpt-oss-20b:free', 'openai/gpt-oss-20b%3aFREE']) {
      const model = await getModel(path);
      expect(model).toMatchObject({
        id: 'openai/gpt-oss-20b:free',
        canonical_slug: 'openai/gpt-oss-20b',
        name: 'OpenAI: gpt-oss-20b (free)',
        pricing: { prompt: '0', completion: '0', image: '0', request: '0' },
        links: { details: '/api/v1/models/openai/gpt-oss-20b:free/endpoints' },
      });
    }
    const base = await getModel('openai/gpt-oss-20b');
    expect(base.pricing.prompt).toBe('0.00000003');
    const extended = await getModel('google/gemma-3-27b-it%3Aextended');
    expect(extended).toMatchObject({
      id: 'google/gemma-3-27b-it:extended',
      context_length: 262144,
      top_provider: { context_length: 262144 },
      pricing: { prompt: '0.00000015', completion: '0.0000003', image: '0', request: '0' },
    });
  });

  it('resolves aliases to the canonical model, with or without a variant', async () => {
    expect((await getModel('openai/chatgpt-4o')).id).toBe('openai/gpt-4o');
    expect((await getModel('anthropic/claude-4-sonnet')).id).toBe('anthropic/claude-sonnet-4');
    expect((await getModel('meta-llama/llama-3.3-70b%3Afree')).id).toBe('meta-llama/llama-3.3-70b-instruct:free');
  });

  it('matches case-insensitively', async () => {
    expect((await getModel('OpenAI/GPT-4o')).id).toBe('openai/gpt-4o');
    expect((await getModel('Anthropic/Claude-4-Sonnet')).id).toBe('anthropic/claude-sonnet-4');
  });

  it('answers every kind of key: the catalog is the same for every organization', async () => {
    const other = await createOrganization(server.db);
    const { key } = await createKey(server);
    expect(await getModel('openai/gpt-4o', other.managementKey)).toEqual(await getModel('openai/gpt-4o', key));
  });

  it('404 for an unknown author, slug, variant or alias', async () => {
    for (const path of ['nobody/gpt-4o', 'openai/gpt-5-ultra', 'openai/gpt-4o%3Afree', 'openai/gpt-4o%3A', 'openai/gpt-4o%2Fx']) {
      await expectError(await server.request(`/api/v1/model/${path}`), 404, 'Resource not found');
    }
  });

  it('401 without a key, or with an unknown one', async () => {
    await expectError(await server.request('/api/v1/model/openai/gpt-4o', { key: null }), 401, 'Missing Authentication header');
    await expectError(await server.request('/api/v1/model/openai/gpt-4o', { key: 'sk-sy-v1-nope' }), 401, 'Missing Authentication header');
  });

  describe('403 when a guardrail of the key keeps the model out', () => {
    async function guardrail(organizationId: string, workspaceId: string, data: Record<string, unknown>) {
      return server.db.guardrail.create({ data: { organization_id: organizationId, workspace_id: workspaceId, name: randomUUID(), ...data } });
    }

    it('ignored_models on a guardrail assigned to the key', async () => {
      const blocked = await createKey(server);
      const free = await createKey(server);
      const row = await server.db.apiKey.findUniqueOrThrow({ where: { hash: blocked.hash } });
      const g = await guardrail(row.organization_id, row.workspace_id, { ignored_models: ['openai/GPT-4o'] });
      await server.db.guardrailKeyAssignment.create({
        data: { organization_id: row.organization_id, guardrail_id: g.id, api_key_id: row.id, assigned_by: row.creator_user_id },
      });
      // Blocked by id, through an alias, and in any case; other models and other keys are unaffected.
      for (const path of ['openai/gpt-4o', 'openai/chatgpt-4o', 'OPENAI/gpt-4o']) {
        await expectError(await server.request(`/api/v1/model/${path}`, { key: blocked.key }), 403, 'Only management keys can perform this operation');
      }
      expect((await getModel('openai/gpt-4o-mini', blocked.key)).id).toBe('openai/gpt-4o-mini');
      expect((await getModel('openai/gpt-4o', free.key)).id).toBe('openai/gpt-4o');
    });

    it("allowed_models on a guardrail assigned to the key's user; a variant is allowed with its model", async () => {
      const other = await createOrganization(server.db);
      const { key } = await createKey(server, {}, other.managementKey);
      // A guardrail assigned to no one applies to no one.
      await guardrail(other.organizationId, other.workspaceId, { ignored_models: ['openai/gpt-oss-20b'] });
      const g = await guardrail(other.organizationId, other.workspaceId, { allowed_models: ['openai/gpt-oss-20b', 'google/gemma-3-27b-it:free'] });
      await server.db.guardrailMemberAssignment.create({
        data: { organization_id: other.organizationId, guardrail_id: g.id, user_id: other.userId, assigned_by: other.userId },
      });
      expect((await getModel('openai/gpt-oss-20b%3Afree', key)).id).toBe('openai/gpt-oss-20b:free');
      expect((await getModel('google/gemma-3-27b-it%3Afree', key)).id).toBe('google/gemma-3-27b-it:free');
      await expectError(await server.request('/api/v1/model/google/gemma-3-27b-it', { key }), 403, 'Only management keys can perform this operation');
      await expectError(
        await server.request('/api/v1/model/openai/gpt-4o', { key: other.managementKey }),
        403,
        'Only management keys can perform this operation',
      );
      // The first organization's keys are untouched by the other's guardrails.
      expect((await getModel('openai/gpt-4o')).id).toBe('openai/gpt-4o');
    });
  });
});

describe('snapshotAnswer', () => {
  it('builds an answer once per snapshot and key, as a deep-frozen copy; a new snapshot builds anew', () => {
    const snapshot = {} as CatalogSnapshot;
    let builds = 0;
    const build = () => ({ data: { n: ++builds } });
    const first = snapshotAnswer(snapshot, 'a', build);
    expect(snapshotAnswer(snapshot, 'a', build)).toBe(first);
    expect(builds).toBe(1);
    expect(Object.isFrozen(first.data)).toBe(true);
    expect(snapshotAnswer(snapshot, 'b', build).data.n).toBe(2);
    expect(snapshotAnswer({} as CatalogSnapshot, 'a', build).data.n).toBe(3);
  });
});

describe('GET /embeddings/models', () => {
  async function list(query: string) {
    const res = await server.request(`/api/v1/embeddings/models${query}`);
    expect(res.status).toBe(200);
    return expectExactOutput(ListEmbeddingsModelsOutputSchema, await res.json());
  }

  it('returns the whole list, in id order, when neither offset nor limit is given', async () => {
    const body = await list('');
    expect(body.total_count).toBe(embeddingIds.length);
    expect(body.data.map((m) => m.id)).toEqual(embeddingIds);
    expect(body.links.next).toBeNull();
    for (const model of body.data) {
      ModelSchema.strict().parse(model);
      expect(model.architecture.output_modalities).toContain('embeddings');
      expect(model.architecture.modality).toBe('text->embeddings');
    }
  });

  it('answers every key the same bytes; a catalog write shows at once', async () => {
    const other = await createOrganization(server.db, 'Embeddings reader');
    const bytes = async (key?: string) => (await server.request('/api/v1/embeddings/models', { key })).text();
    const first = await bytes();
    expect(await bytes(other.managementKey)).toBe(first);
    expect(await bytes()).toBe(first);
    // A write replaces the snapshot, and the list built from it.
    const entry = demoCatalog.models.find((m) => m.id === embeddingIds[0])!;
    expect((await trpc(server, 'models.upsert', { ...entry, name: 'Renamed' })).status).toBe(200);
    const renamed = await list('');
    expect(renamed.data[0]).toMatchObject({ id: embeddingIds[0], name: 'Renamed' });
    expect(await bytes(other.managementKey)).toBe(JSON.stringify(renamed));
    expect((await trpc(server, 'models.upsert', entry)).status).toBe(200);
    expect(await bytes()).toBe(first);
  });

  it('pages with offset and limit; links.next walks the list without repeats or gaps', async () => {
    const seen: string[] = [];
    let next: string | null = '/api/v1/embeddings/models?limit=3&offset=0';
    let pages = 0;
    while (next) {
      const res = await server.request(next.replace(server.url, ''));
      const body = expectExactOutput(ListEmbeddingsModelsOutputSchema, await res.json());
      expect(body.total_count).toBe(embeddingIds.length);
      expect(body.data.length).toBeLessThanOrEqual(3);
      seen.push(...body.data.map((m) => m.id));
      next = body.links.next;
      if (next) expect(next.startsWith(`${server.url}/api/v1/embeddings/models?`)).toBe(true);
      pages += 1;
    }
    expect(seen).toEqual(embeddingIds);
    expect(pages).toBe(Math.ceil(embeddingIds.length / 3));
  });

  it('defaults: limit 500 with only an offset, offset 0 with only a limit; pages past the end are empty', async () => {
    expect((await list('?offset=5')).data.map((m) => m.id)).toEqual(embeddingIds.slice(5));
    const first = await list('?limit=2');
    expect(first.data.map((m) => m.id)).toEqual(embeddingIds.slice(0, 2));
    expect(first.links.next).toBe(`${server.url}/api/v1/embeddings/models?offset=2&limit=2`);
    const past = await list('?offset=100&limit=10');
    expect(past).toEqual({ data: [], total_count: embeddingIds.length, links: { next: null } });
    expect((await list('?limit=1000&offset=0')).data).toHaveLength(embeddingIds.length);
  });

  it('400 with the envelope for bad values', async () => {
    for (const query of ['limit=0', 'limit=1001', 'offset=-1', 'limit=abc', 'offset=abc', 'limit=1.5', 'limit=-3']) {
      await expectError(await server.request(`/api/v1/embeddings/models?${query}`), 400, 'Invalid request parameters');
    }
  });

  it('401 without a key', async () => {
    await expectError(await server.request('/api/v1/embeddings/models', { key: null }), 401, 'Missing Authentication header');
  });
});

describe('internal catalog writes (tRPC, management key)', () => {
  const entry = {
    id: 'acme/rocket-1',
    name: 'Acme: Rocket 1',
    created: 1760000000,
    context_length: 32768,
    architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: 'Other' },
    pricing: { prompt: '0.000001', completion: '0.000002' },
    supported_parameters: ['temperature'],
    aliases: ['acme/rocket'],
    variants: [{ variant: 'free', pricing: { prompt: '0', completion: '0' } }],
  };

  it('upserts a model with defaults filled in, then replaces its aliases and variants', async () => {
    const { status, data } = await trpc(server, 'models.upsert', entry);
    expect(status).toBe(200);
    expect(ModelSchema.strict().parse(data)).toMatchObject({
      id: 'acme/rocket-1',
      canonical_slug: 'acme/rocket-1',
      description: '',
      pricing: { prompt: '0.000001', completion: '0.000002', image: '0', request: '0' },
      top_provider: { context_length: 32768, is_moderated: false, max_completion_tokens: null },
    });
    expect((await getModel('acme/rocket%3Afree')).id).toBe('acme/rocket-1:free');

    await trpc(server, 'models.upsert', { ...entry, name: 'Acme: Rocket One', aliases: ['acme/rocket-one'], variants: [] });
    expect((await getModel('acme/rocket-one')).name).toBe('Acme: Rocket One');
    await expectError(await server.request('/api/v1/model/acme/rocket'), 404, 'Resource not found');
    await expectError(await server.request('/api/v1/model/acme/rocket-1%3Afree'), 404, 'Resource not found');
  });

  it('upserts a single variant and a single alias', async () => {
    await trpc(server, 'models.upsert', { ...entry, id: 'acme/rocket-2', aliases: [], variants: [] });
    const variant = await trpc(server, 'models.upsertVariant', { model_id: 'acme/rocket-2', variant: 'nitro', pricing: { prompt: '0.000003' } });
    expect(variant.status).toBe(200);
    expect(variant.data).toMatchObject({ id: 'acme/rocket-2:nitro', name: 'Acme: Rocket 1 (nitro)', pricing: { prompt: '0.000003', completion: '0.000002' } });
    const alias = await trpc(server, 'models.upsertAlias', { alias: 'Acme/Rocket-Two', model_id: 'acme/rocket-2' });
    expect(alias).toMatchObject({ status: 200, data: { alias: 'acme/rocket-two', model_id: 'acme/rocket-2' } });
    expect((await getModel('acme/rocket-two%3Anitro')).id).toBe('acme/rocket-2:nitro');
    expect((await trpc(server, 'models.upsertAlias', { alias: 'acme/x', model_id: 'acme/none' })).status).toBe(404);
    expect((await trpc(server, 'models.upsertVariant', { model_id: 'acme/none', variant: 'free' })).status).toBe(404);
  });

  it('a write by another process (straight to the database) shows once the snapshot is reloaded', async () => {
    await trpc(server, 'models.upsert', { ...entry, id: 'acme/rocket-3', aliases: [], variants: [] });
    expect((await getModel('acme/rocket-3')).name).toBe('Acme: Rocket 1');
    await server.db.model.update({ where: { id: 'acme/rocket-3' }, data: { name: 'Acme: Rocket Three' } });
    // The snapshot read just now is used until its TTL runs out, then reloaded in the background
    // (the answer that finds it stale still comes from it).
    await expect.poll(async () => (await getModel('acme/rocket-3')).name, { interval: 50 }).toBe('Acme: Rocket Three');
  });

  it('400 for bad entries, and nothing of a failed import is kept', async () => {
    for (const bad of [
      { ...entry, pricing: { prompt: 'abc', completion: '1' } },
      { ...entry, pricing: { prompt: '-1', completion: '1' } },
      { ...entry, id: 'no-slash' },
      { ...entry, context_length: 0 },
      { ...entry, aliases: ['openai/gpt-4o'] }, // an alias may not shadow a model id
      { ...entry, aliases: ['acme/rocket-1'] }, // nor be the model's own id
      { ...entry, variants: [{ variant: 'free' }, { variant: 'free' }] },
    ]) {
      const { status } = await trpc(server, 'models.upsert', bad);
      expect(status, JSON.stringify(bad)).toBe(400);
    }
    const before = await server.db.model.count();
    const failed = await trpc(server, 'models.import', {
      models: [
        { ...entry, id: 'acme/fresh-1', aliases: [] },
        { ...entry, id: 'acme/fresh-2', aliases: ['acme/fresh-1'] },
      ],
    });
    expect(failed.status).toBe(400);
    expect(await server.db.model.count()).toBe(before);
    expect((await trpc(server, 'models.import', { models: [entry, entry] })).status).toBe(400);
    expect((await trpc(server, 'models.import', { models: [] })).status).toBe(400);
  });

  it('403 for a regular key, 401 without a key', async () => {
    const { key } = await createKey(server);
    expect((await trpc(server, 'models.upsert', entry, { key })).status).toBe(403);
    expect((await trpc(server, 'models.import', demoCatalog, { key })).status).toBe(403);
    expect((await trpc(server, 'models.upsert', entry, { key: null })).status).toBe(401);
  });

  it('are not reachable over REST', async () => {
    const res = await server.request('/api/v1/models/import', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await expectError(res, 404, 'Resource not found');
  });
});

describe('OpenAPI document', () => {
  it('documents the catalog and generation operations, and none of the internal procedures', async () => {
    const res = await server.request('/api/v1/openapi.json', { key: null });
    const doc = (await res.json()) as { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> };
    expect(doc.paths['/model/{author}/{slug}']?.get).toBeDefined();
    expect(doc.paths['/embeddings/models']?.get?.parameters?.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['query:limit', 'query:offset']);
    expect(doc.paths['/generation']?.get?.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(['query:id']);
    expect(doc.paths['/generation/content']?.get).toBeDefined();
    expect(doc.paths['/generation/feedback']?.post).toBeDefined();
    expect(Object.keys(doc.paths).filter((p) => /import|upsert|record|add-?credits/i.test(p))).toEqual([]);
  });
});
