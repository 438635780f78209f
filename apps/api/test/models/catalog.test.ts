// The catalog's reads over real HTTP: GET /models, GET /models/count, GET /models/{author}/{slug}/endpoints
// and GET /providers (public: no key needed), and the providers and endpoints models.import writes.
import {
  CountModelsOutputSchema,
  ErrorEnvelopeSchema,
  GetModelEndpointsOutputSchema,
  ListModelsOutputSchema,
  ListProvidersOutputSchema,
  ModelSchema,
  ProviderSchema,
  EndpointSchema,
} from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../src/testing/test-server.js';
import { createKey, demoCatalog, importDemoCatalog } from '../fixtures-catalog.js';
import { testServer } from '../fixtures.js';
import { trpc, type InputOf } from '../fixtures-trpc.js';

let server: TestServer;
let regular: string;
beforeAll(async () => {
  server = await testServer();
  await importDemoCatalog(server);
  regular = (await createKey(server)).key;
});
afterAll(async () => {
  await server?.close();
});

/** The catalog writes of these tests, as the platform, in one place. */
const importCatalog = (catalog: InputOf<'models.import'>) => trpc(server, 'models.import', catalog, { key: server.platformKey });

async function get(path: string, key: string | null = null) {
  const res = await server.request(`/api/v1${path}`, { key });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, body: (await res.json()) as unknown };
}

function expectError(answer: { status: number; body: unknown }, status: number) {
  expect(answer.status).toBe(status);
  expect(ErrorEnvelopeSchema.parse(answer.body).error.code).toBe(status);
}

const textModels = demoCatalog.models.filter((m) => m.architecture.output_modalities.includes('text'));

describe('the demo catalog', () => {
  it('carries providers and endpoints: every model is served by at least one provider it lists', () => {
    const slugs = new Set(demoCatalog.providers!.map((p) => p.slug));
    expect(slugs.size).toBeGreaterThanOrEqual(10);
    for (const model of demoCatalog.models) {
      expect(model.endpoints?.length, model.id).toBeGreaterThanOrEqual(1);
      for (const e of model.endpoints!) expect(slugs.has(e.provider)).toBe(true);
    }
  });
});

describe('GET /providers', () => {
  it('lists every provider by name, bare records, without a key', async () => {
    const { status, body } = await get('/providers');
    expect(status).toBe(200);
    const { data } = ListProvidersOutputSchema.strict().parse(body);
    expect(data.map((p) => p.slug).sort()).toEqual(demoCatalog.providers!.map((p) => p.slug).sort());
    expect(data.map((p) => p.name)).toEqual([...data.map((p) => p.name)].sort((a, b) => a.localeCompare(b, 'en')));
    expect(ProviderSchema.strict().parse(data.find((p) => p.slug === 'amazon-bedrock'))).toEqual({
      name: 'Amazon Bedrock',
      slug: 'amazon-bedrock',
      privacy_policy_url: 'https://aws.amazon.com/privacy/',
      terms_of_service_url: 'https://aws.amazon.com/service-terms/',
      status_page_url: 'https://health.aws.amazon.com/health/status',
      headquarters: 'US',
      datacenters: ['US', 'DE', 'IE', 'JP'],
    });
    expect(data.find((p) => p.slug === 'google-ai-studio')!.datacenters).toBeNull();
  });

  it('answers the same to any key', async () => {
    const anonymous = (await get('/providers')).body;
    for (const key of [regular, server.managementKey, server.platformKey]) expect((await get('/providers', key)).body).toEqual(anonymous);
  });
});

describe('GET /models/{author}/{slug}/endpoints', () => {
  it("answers the model and every provider's offer, in the published order", async () => {
    const { status, body } = await get('/models/anthropic/claude-sonnet-4/endpoints');
    expect(status).toBe(200);
    const { data } = GetModelEndpointsOutputSchema.strict().parse(body);
    const published = demoCatalog.models.find((m) => m.id === 'anthropic/claude-sonnet-4')!;
    expect(data).toMatchObject({
      id: 'anthropic/claude-sonnet-4',
      name: published.name,
      created: published.created,
      architecture: { input_modalities: published.architecture.input_modalities, tokenizer: published.architecture.tokenizer },
    });
    expect(data.endpoints.map((e) => e.provider_name)).toEqual(['Anthropic', 'Amazon Bedrock', 'Google Vertex']);
    const first = EndpointSchema.strict().parse(data.endpoints[0]);
    expect(first).toEqual({
      name: 'Anthropic | anthropic/claude-sonnet-4',
      model_id: published.canonical_slug,
      model_name: published.name,
      provider_name: 'Anthropic',
      tag: 'anthropic',
      context_length: published.context_length,
      max_completion_tokens: published.top_provider?.max_completion_tokens ?? null,
      max_prompt_tokens: null,
      pricing: published.endpoints![0]!.pricing,
      quantization: null,
      supported_parameters: published.supported_parameters,
      supports_implicit_caching: false,
      supports_tool_choice: { auto: true, function: true, none: true, required: true },
      latency_last_30m: null,
      throughput_last_30m: null,
      uptime_last_5m: null,
      uptime_last_30m: null,
      uptime_last_1d: null,
      status: 0,
    });
    // An endpoint published without prices offers the model's.
    expect(data.endpoints[1]!.pricing).toEqual({ prompt: published.pricing.prompt, completion: published.pricing.completion });
  });

  it("is the target of every model's links.details, for every key and none", async () => {
    const listed = ListModelsOutputSchema.parse((await get('/models?output_modalities=all')).body).data;
    expect(listed).toHaveLength(demoCatalog.models.length);
    for (const model of listed) {
      const res = await server.request(model.links.details);
      expect(res.status, model.links.details).toBe(200);
      const { data } = GetModelEndpointsOutputSchema.parse(await res.json());
      expect(data.id).toBe(model.id);
      expect(data.endpoints.length).toBeGreaterThanOrEqual(1);
    }
    for (const key of [regular, server.managementKey, server.platformKey]) {
      expect((await get('/models/openai/gpt-4o/endpoints', key)).status).toBe(200);
    }
  });

  it("resolves aliases, case and variants; a variant's own prices replace the endpoints'", async () => {
    expect(GetModelEndpointsOutputSchema.parse((await get('/models/Anthropic/claude-4-sonnet/endpoints')).body).data.id).toBe('anthropic/claude-sonnet-4');
    const free = GetModelEndpointsOutputSchema.parse((await get('/models/openai/gpt-oss-20b%3Afree/endpoints')).body).data;
    expect(free.id).toBe('openai/gpt-oss-20b:free');
    expect(free.endpoints.length).toBeGreaterThanOrEqual(1);
    for (const e of free.endpoints) expect(e.pricing).toMatchObject({ prompt: '0', completion: '0' });
  });

  it('404 for an unknown model or variant', async () => {
    expectError(await get('/models/openai/nope/endpoints'), 404);
    expectError(await get('/models/openai/gpt-4o%3Anope/endpoints'), 404);
  });
});

describe('GET /models and GET /models/count', () => {
  it('lists text models by default, every Model record complete, with total_count and no next page', async () => {
    const { status, body } = await get('/models');
    expect(status).toBe(200);
    const list = ListModelsOutputSchema.strict().parse(body);
    expect(list.total_count).toBe(textModels.length);
    expect(list.data.map((m) => m.id)).toEqual(textModels.map((m) => m.id).sort());
    for (const model of list.data) ModelSchema.strict().parse(model);
    expect(list.links.next).toBeNull();
    expect((await get('/models/count')).body).toEqual({ data: { count: textModels.length } });
    CountModelsOutputSchema.strict().parse((await get('/models/count')).body);
  });

  it('pages by offset and limit, links.next carrying the filters', async () => {
    const all = ListModelsOutputSchema.parse((await get('/models?output_modalities=all')).body);
    const first = ListModelsOutputSchema.parse((await get('/models?output_modalities=all&offset=0&limit=10')).body);
    expect(first.data.map((m) => m.id)).toEqual(all.data.slice(0, 10).map((m) => m.id));
    expect(first.total_count).toBe(all.total_count);
    expect(first.links.next).toBe(`${server.url}/api/v1/models?output_modalities=all&offset=10&limit=10`);
    const seen: string[] = [];
    let next: string | null = `${server.url}/api/v1/models?output_modalities=all&offset=0&limit=10`;
    while (next) {
      const res = await server.request(new URL(next).pathname + new URL(next).search);
      const page = (await res.json()) as { data: Array<{ id: string }>; links: { next: string | null } };
      seen.push(...page.data.map((m) => m.id));
      next = page.links.next;
    }
    expect(seen).toEqual(all.data.map((m) => m.id));
  });

  it('filters by modality, text, parameters, context, price, family, author, provider and age', async () => {
    const ids = async (query: string) =>
      ListModelsOutputSchema.parse((await get(`/models?${query}`)).body)
        .data.map((m) => m.id)
        .sort();
    const published = (pred: (m: (typeof demoCatalog.models)[number]) => boolean) =>
      demoCatalog.models
        .filter(pred)
        .map((m) => m.id)
        .sort();
    expect(await ids('output_modalities=embeddings')).toEqual(published((m) => m.architecture.output_modalities.includes('embeddings')));
    expect(CountModelsOutputSchema.parse((await get('/models/count?output_modalities=embeddings')).body).data.count).toBe(
      published((m) => m.architecture.output_modalities.includes('embeddings')).length,
    );
    expect(CountModelsOutputSchema.parse((await get('/models/count?output_modalities=all')).body).data.count).toBe(demoCatalog.models.length);
    expect(await ids('q=claude')).toEqual(published((m) => m.id.startsWith('anthropic/')));
    expect(await ids('input_modalities=image,file')).toEqual(
      published((m) => m.architecture.output_modalities.includes('text') && ['image', 'file'].every((i) => m.architecture.input_modalities.includes(i))),
    );
    expect(await ids('supported_parameters=tools,reasoning')).toEqual(
      published((m) => m.architecture.output_modalities.includes('text') && ['tools', 'reasoning'].every((p) => m.supported_parameters.includes(p))),
    );
    expect(await ids('context=1000000')).toEqual(published((m) => m.architecture.output_modalities.includes('text') && m.context_length >= 1_000_000));
    expect(await ids('max_price=0.5')).toEqual(published((m) => m.architecture.output_modalities.includes('text') && Number(m.pricing.prompt) * 1e6 <= 0.5));
    expect(await ids('min_output_price=10')).toEqual(
      published((m) => m.architecture.output_modalities.includes('text') && Number(m.pricing.completion) * 1e6 >= 10),
    );
    expect(await ids('arch=claude')).toEqual(published((m) => m.architecture.tokenizer.toLowerCase() === 'claude'));
    expect(await ids('model_authors=mistralai,deepseek')).toEqual(
      published((m) => m.architecture.output_modalities.includes('text') && ['mistralai', 'deepseek'].includes(m.id.split('/')[0]!)),
    );
    expect(await ids('providers=Groq')).toEqual(
      published((m) => m.architecture.output_modalities.includes('text') && (m.endpoints ?? []).some((e) => e.provider === 'groq')),
    );
    expect(await ids('providers=amazon-bedrock')).toEqual(published((m) => m.id.startsWith('anthropic/')));
    expect(await ids('min_age_days=0')).toEqual(published((m) => m.architecture.output_modalities.includes('text')));
    expect(await ids('max_age_days=0')).toEqual([]);
  });

  it('sorts newest, by price and by context; unknown sorts keep id order', async () => {
    const sorted = async (sort: string) => ListModelsOutputSchema.parse((await get(`/models?sort=${sort}`)).body).data;
    const newest = await sorted('newest');
    expect(newest.map((m) => m.created)).toEqual([...newest.map((m) => m.created)].sort((a, b) => b - a));
    const cheap = await sorted('pricing-low-to-high');
    const price = (m: (typeof cheap)[number]) => Number(m.pricing.prompt) + Number(m.pricing.completion);
    expect(cheap.map(price)).toEqual([...cheap.map(price)].sort((a, b) => a - b));
    expect((await sorted('pricing-high-to-low')).map(price)).toEqual([...cheap.map(price)].sort((a, b) => b - a));
    const context = await sorted('context-high-to-low');
    expect(context.map((m) => m.context_length)).toEqual([...context.map((m) => m.context_length)].sort((a, b) => b - a));
    expect((await get('/models?sort=most-popular')).body).toEqual((await get('/models')).body);
  });

  it('400 for bad paging and for filters on data this catalog does not keep', async () => {
    for (const query of [
      'limit=0',
      'limit=1001',
      'offset=-1',
      'context=abc',
      'category=programming',
      'zdr=false',
      'zdr=1',
      'region=eu',
      'min_intelligence_index=50',
      'distillable=true',
    ]) {
      expectError(await get(`/models?${query}`), 400);
    }
  });

  it('answers the same to any key', async () => {
    const anonymous = (await get('/models?limit=5&offset=0')).body;
    for (const key of [regular, server.managementKey, server.platformKey]) expect((await get('/models?limit=5&offset=0', key)).body).toEqual(anonymous);
  });
});

describe('models.import with providers and endpoints', () => {
  const model = demoCatalog.models.find((m) => m.id === 'openai/gpt-4o')!;

  it('replaces the endpoints of a model that lists them; defaults come from the model and provider', async () => {
    const imported = await importCatalog({
      providers: [{ slug: 'test-cloud', name: 'Test Cloud', headquarters: 'DE', datacenters: ['DE'] }],
      models: [
        {
          ...model,
          endpoints: [
            { provider: 'test-cloud', quantization: 'fp8' },
            { provider: 'openai', pricing: { prompt: '0.000002', completion: '0.000008', discount: 0.2 } },
          ],
        },
      ],
    });
    expect(imported.status, JSON.stringify(imported.error)).toBe(200);
    expect(imported.data).toMatchObject({ models: 1, providers: 1, endpoints: 2 });
    const { data } = GetModelEndpointsOutputSchema.parse((await get('/models/openai/gpt-4o/endpoints')).body);
    expect(data.endpoints.map((e: { tag: string }) => e.tag)).toEqual(['test-cloud/fp8', 'openai']);
    expect(data.endpoints[0]).toMatchObject({
      name: 'Test Cloud | openai/gpt-4o',
      provider_name: 'Test Cloud',
      quantization: 'fp8',
      context_length: model.context_length,
      pricing: { prompt: model.pricing.prompt, completion: model.pricing.completion },
    });
    expect(data.endpoints[1]!.pricing).toEqual({ prompt: '0.000002', completion: '0.000008', discount: 0.2 });
    expect(ListProvidersOutputSchema.parse((await get('/providers')).body).data.some((p) => p.slug === 'test-cloud')).toBe(true);
    // Listing no endpoints leaves them; an empty list removes them.
    expect((await importCatalog({ models: [{ ...model, endpoints: undefined }] })).status).toBe(200);
    expect(GetModelEndpointsOutputSchema.parse((await get('/models/openai/gpt-4o/endpoints')).body).data.endpoints).toHaveLength(2);
    expect((await importCatalog({ models: [{ ...model, endpoints: [] }] })).status).toBe(200);
    expect(GetModelEndpointsOutputSchema.parse((await get('/models/openai/gpt-4o/endpoints')).body).data.endpoints).toEqual([]);
    await importDemoCatalog(server);
    expect(GetModelEndpointsOutputSchema.parse((await get('/models/openai/gpt-4o/endpoints')).body).data.endpoints).toHaveLength(model.endpoints!.length);
  });

  it('refuses an unknown provider, a repeated tag or provider, or a bad provider record, writing nothing', async () => {
    const before = await server.db.modelEndpoint.count();
    for (const catalog of [
      { models: [{ ...model, endpoints: [{ provider: 'nowhere' }] }] },
      { models: [{ ...model, endpoints: [{ provider: 'openai' }, { provider: 'openai' }] }] },
      {
        providers: [
          { slug: 'dup', name: 'A' },
          { slug: 'dup', name: 'B' },
        ],
        models: [model],
      },
      { providers: [{ slug: 'Bad Slug', name: 'A' }], models: [model] },
      { providers: [{ slug: 'bad-hq', name: 'A', headquarters: 'deu' }], models: [model] },
    ]) {
      const res = await importCatalog(catalog);
      expect(res.status, JSON.stringify(catalog)).toBe(400);
    }
    expect(await server.db.modelEndpoint.count()).toBe(before);
    expect(await server.db.provider.count({ where: { slug: { in: ['dup', 'bad-hq'] } } })).toBe(0);
  });
});

describe('the OpenAPI document', () => {
  it('covers the 13 catalog operations, the byte download with its binary answer', async () => {
    const doc = (await (await server.request('/api/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    const operations = [
      ['get', '/models'],
      ['get', '/models/count'],
      ['get', '/models/{author}/{slug}/endpoints'],
      ['get', '/providers'],
      ['get', '/credits'],
      ['get', '/files'],
      ['get', '/files/{file_id}'],
      ['get', '/files/{file_id}/content'],
      ['delete', '/files/{file_id}'],
      ['get', '/containers/{container_id}/files'],
      ['get', '/containers/{container_id}/files/{file_id}'],
      ['get', '/videos/{jobId}'],
    ] as const;
    for (const [method, path] of operations) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    expect(Object.keys(doc.paths['/files/{file_id}/content']!.get!.responses['200']!.content!)).toEqual(['application/octet-stream']);
    expect(doc.paths['/containers/{container_id}/files/{file_id}/content']?.get).toBeDefined();
    // Catalog reads are public; the others need a key.
    expect(doc.paths['/providers']!.get!.security ?? []).toEqual([]);
    expect(doc.paths['/credits']!.get!.security).toEqual([{ bearerAuth: [] }]);
  });
});
