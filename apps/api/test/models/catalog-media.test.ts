// The catalog operations of platform-api.md part 1 over real HTTP, on the demo catalog: GET
// /images/models (D1), GET /images/models/{author}/{slug}/endpoints (D2), GET /videos/models (D3),
// GET /models/user (D4: the catalog as the key's guardrails see it), GET /endpoints/zdr (D5) and
// GET /models?zdr=true; the typed per_request_limits; and every demo model checked against the
// Model record's required fields and types as admin-api.md states them (not through our schema).
import {
  EndpointSchema,
  ErrorEnvelopeSchema,
  ImageModelEndpointsSchema,
  ListImageModelsOutputSchema,
  ListModelsOutputSchema,
  ListUserModelsOutputSchema,
  ListVideoModelsOutputSchema,
  ListZdrEndpointsOutputSchema,
} from '@switchyard/schema';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, demoCatalog, importDemoCatalog } from '../fixtures-catalog.js';
import { expectExactOutput, useServer } from '../fixtures.js';
import { ok, trpc } from '../fixtures-trpc.js';

const env = useServer();
beforeAll(async () => {
  await importDemoCatalog(env.server);
});

async function get(path: string, key: string | null = null) {
  const res = await env.server.request(`/api/v1${path}`, { key });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, body: (await res.json()) as unknown };
}

function expectError(answer: { status: number; body: unknown }, status: number) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(ErrorEnvelopeSchema.parse(answer.body).error.code).toBe(status);
}

const outputs = (id: string) => demoCatalog.models.find((m) => m.id === id)!.architecture.output_modalities;
const demoIds = (keep: (m: (typeof demoCatalog.models)[number]) => boolean) =>
  demoCatalog.models
    .filter(keep)
    .map((m) => m.id)
    .sort();
const hasZdrEndpoint = (m: (typeof demoCatalog.models)[number]) => (m.endpoints ?? []).some((e) => e.zdr === true);

describe('the demo catalog against the Model record of admin-api.md', () => {
  const isString = (v: unknown) => typeof v === 'string';
  const isStringList = (v: unknown) => Array.isArray(v) && v.every(isString);
  const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  /** What existing clients require of each record; they reject the whole page on one miss. */
  const required: Record<string, (m: Record<string, unknown>) => boolean> = {
    id: (m) => isString(m.id),
    canonical_slug: (m) => isString(m.canonical_slug),
    name: (m) => isString(m.name),
    created: (m) => Number.isInteger(m.created),
    context_length: (m) => m.context_length === null || Number.isInteger(m.context_length),
    architecture: (m) => {
      const a = m.architecture as Record<string, unknown>;
      return isObject(a) && isStringList(a.input_modalities) && isStringList(a.output_modalities) && (a.modality === null || isString(a.modality));
    },
    pricing: (m) => {
      const p = m.pricing as Record<string, unknown>;
      return isObject(p) && isString(p.prompt) && isString(p.completion);
    },
    top_provider: (m) => isObject(m.top_provider) && typeof (m.top_provider as Record<string, unknown>).is_moderated === 'boolean',
    supported_parameters: (m) => isStringList(m.supported_parameters),
    supported_voices: (m) => m.supported_voices === null || isStringList(m.supported_voices),
    default_parameters: (m) => m.default_parameters === null || isObject(m.default_parameters),
    per_request_limits: (m) => {
      const l = m.per_request_limits as Record<string, unknown> | null;
      return l === null || (isObject(l) && typeof l.prompt_tokens === 'number' && typeof l.completion_tokens === 'number');
    },
    links: (m) => isObject(m.links) && isString((m.links as Record<string, unknown>).details),
    reasoning: (m) => m.reasoning === undefined || (isObject(m.reasoning) && typeof (m.reasoning as Record<string, unknown>).mandatory === 'boolean'),
  };

  it('every record of GET /models?output_modalities=all has every required field with its type', async () => {
    const { status, body } = await get('/models?output_modalities=all');
    expect(status).toBe(200);
    const records = (body as { data: Record<string, unknown>[] }).data;
    expect(records.map((m) => m.id).sort()).toEqual(demoIds(() => true));
    for (const record of records) {
      for (const [field, holds] of Object.entries(required)) expect(holds(record), `${record.id}: ${field} = ${JSON.stringify(record[field])}`).toBe(true);
    }
    const cohere = records.find((m) => m.id === 'cohere/command-r-plus-08-2024')!;
    expect(cohere.per_request_limits).toEqual({ prompt_tokens: 4_000_000, completion_tokens: 1_000_000 });
  });
});

describe('per_request_limits in models.import', () => {
  const base = demoCatalog.models.find((m) => m.id === 'openai/gpt-4o-mini')!;

  it('400 naming the field for anything but { prompt_tokens, completion_tokens } numbers; nothing is written', async () => {
    const id = `test/limits-${randomUUID().slice(0, 8)}`;
    for (const limits of [
      { prompt_tokens: '4000', completion_tokens: '1000' },
      { prompt_tokens: 1 },
      { prompt_tokens: 1, completion_tokens: 2, images: 3 },
      'none',
    ]) {
      const result = await trpc(
        env.server,
        'models.import',
        // The refused values are what a catalog file might hold: not what the input type admits.
        { models: [{ ...base, id, aliases: [], per_request_limits: limits as never }] },
        { key: env.server.platformKey },
      );
      expect(result.status, JSON.stringify(limits)).toBe(400);
      expect(JSON.stringify(result.error)).toContain('per_request_limits');
    }
    expectError(await get(`/model/${id}`, env.server.managementKey), 404);
    await ok(
      env.server,
      'models.import',
      { models: [{ ...base, id, aliases: [], per_request_limits: { prompt_tokens: 10, completion_tokens: 5 } }] },
      { key: env.server.platformKey },
    );
    const { body } = await get(`/model/${id}`, env.server.managementKey);
    expect((body as { data: { per_request_limits: unknown } }).data.per_request_limits).toEqual({ prompt_tokens: 10, completion_tokens: 5 });
  });
});

describe('GET /models?zdr=true', () => {
  it('keeps the models with at least one ZDR endpoint, without a key', async () => {
    const { status, body } = await get('/models?zdr=true&output_modalities=all');
    expect(status).toBe(200);
    const page = ListModelsOutputSchema.parse(body);
    const expected = demoIds(hasZdrEndpoint);
    expect(expected.length).toBeGreaterThan(5);
    expect(page.data.map((m) => m.id).sort()).toEqual(expected);
    expect(page.total_count).toBe(expected.length);
    expect(page.data.some((m) => m.id.startsWith('anthropic/'))).toBe(false);
  });
});

describe('GET /endpoints/zdr', () => {
  it('lists every ZDR endpoint of the catalog as Endpoint records, bare of total_count, to any caller', async () => {
    const { status, body } = await get('/endpoints/zdr');
    expect(status).toBe(200);
    const answer = expectExactOutput(ListZdrEndpointsOutputSchema, body);
    const expected = demoCatalog.models.flatMap((m) => (m.endpoints ?? []).filter((e) => e.zdr === true)).length;
    expect(answer.data).toHaveLength(expected);
    for (const e of answer.data) EndpointSchema.parse(e);
    expect(new Set(answer.data.map((e) => e.provider_name))).toContain('Google Vertex');
    expect(Object.keys(body as object)).toEqual(['data']);
    for (const key of [env.server.managementKey, env.other.managementKey, env.server.platformKey])
      expect((await get('/endpoints/zdr', key)).body).toEqual(body);
  });
});

describe('GET /images/models and their endpoints', () => {
  it('lists the models that output images, with the union of their endpoints\u2019 parameters', async () => {
    const { status, body } = await get('/images/models');
    expect(status).toBe(200);
    const answer = expectExactOutput(ListImageModelsOutputSchema, body);
    expect(Object.keys(body as object)).toEqual(['data']);
    expect(answer.data.map((m) => m.id).sort()).toEqual(demoIds((m) => m.architecture.output_modalities.includes('image')));
    const gptImage = answer.data.find((m) => m.id === 'openai/gpt-image-1')!;
    expect(gptImage.endpoints).toBe('/api/v1/images/models/openai/gpt-image-1/endpoints');
    expect(gptImage.supports_streaming).toBe(true);
    // background is offered by one endpoint only; the union carries it.
    expect(gptImage.supported_parameters.background).toEqual({ type: 'enum', values: ['auto', 'opaque', 'transparent'] });
    expect(gptImage.supported_parameters.n).toEqual({ type: 'range', min: 1, max: 10 });
    const gemini = answer.data.find((m) => m.id === 'google/gemini-2.5-flash-image')!;
    expect(gemini.architecture.output_modalities).toEqual(outputs('google/gemini-2.5-flash-image'));
    expect(gemini.supported_parameters.seed).toEqual({ type: 'boolean' });
  });

  it("answers each endpoint's own parameters and prices, bare; case and the path's id as given", async () => {
    const { status, body } = await get('/images/models/OpenAI/GPT-Image-1/endpoints');
    expect(status).toBe(200);
    const answer = expectExactOutput(ImageModelEndpointsSchema, body);
    expect(answer.id).toBe('OpenAI/GPT-Image-1');
    expect(answer.endpoints.map((e) => [e.provider_slug, e.provider_name, e.provider_tag])).toEqual([
      ['openai', 'OpenAI', 'openai'],
      ['azure', 'Azure', 'azure'],
    ]);
    const [openai, azure] = answer.endpoints;
    expect(openai!.supports_streaming).toBe(true);
    expect(azure!.supported_parameters.background).toBeUndefined();
    expect(openai!.pricing).toContainEqual({ billable: 'output_image', cost_usd: 0.042, unit: 'image', variant: 'medium' });
    expect(openai!.allowed_passthrough_parameters).toEqual(['moderation', 'user']);
  });

  it('404 for a model that outputs no image, an unknown one and a variant', async () => {
    expectError(await get('/images/models/openai/gpt-4o/endpoints'), 404);
    expectError(await get('/images/models/nobody/nothing/endpoints'), 404);
    expectError(await get('/images/models/openai/gpt-image-1:free/endpoints'), 404);
  });
});

describe('GET /videos/models', () => {
  it('lists the models that output video with their stated parameters; null where the catalog states none', async () => {
    const { status, body } = await get('/videos/models');
    expect(status).toBe(200);
    const answer = expectExactOutput(ListVideoModelsOutputSchema, body);
    expect(answer.data.map((m) => m.id).sort()).toEqual(demoIds((m) => m.architecture.output_modalities.includes('video')));
    const veo = answer.data.find((m) => m.id === 'google/veo-3')!;
    expect(veo).toMatchObject({
      supported_durations: [4, 6, 8],
      supported_resolutions: ['720p', '1080p'],
      generate_audio: true,
      supported_sizes: null,
      pricing_skus: { video_second: '0.2', video_second_with_audio: '0.4' },
    });

    // A video model imported without its parameters: every nullable field null, no passthrough.
    const id = `test/video-${randomUUID().slice(0, 8)}`;
    const sora = demoCatalog.models.find((m) => m.id === 'openai/sora-2')!;
    await ok(env.server, 'models.import', { models: [{ ...sora, id, canonical_slug: id, aliases: [], video: null }] }, { key: env.server.platformKey });
    const bare = ListVideoModelsOutputSchema.parse((await get('/videos/models')).body).data.find((m) => m.id === id)!;
    expect(bare).toMatchObject({ allowed_passthrough_parameters: [], supported_durations: null, seed: null, upscale_factor: null, pricing_skus: null });
  });

  it('models.import refuses a malformed video or image block with 400 naming it', async () => {
    const sora = demoCatalog.models.find((m) => m.id === 'openai/sora-2')!;
    const bad = await trpc(
      env.server,
      'models.import',
      { models: [{ ...sora, aliases: [], video: { ...sora.video!, supported_sizes: ['wide'] } }] },
      { key: env.server.platformKey },
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.error)).toContain('supported_sizes');
    const image = demoCatalog.models.find((m) => m.id === 'openai/gpt-image-1')!;
    const endpoint = image.endpoints![0]!;
    const badRange = await trpc(
      env.server,
      'models.import',
      {
        models: [
          {
            ...image,
            aliases: [],
            endpoints: [{ ...endpoint, image: { ...endpoint.image!, supported_parameters: { n: { type: 'range', min: 5, max: 1 } } } }],
          },
        ],
      },
      { key: env.server.platformKey },
    );
    expect(badRange.status).toBe(400);
    // Nothing of either was written.
    expect(ImageModelEndpointsSchema.parse((await get('/images/models/openai/gpt-image-1/endpoints')).body).endpoints).toHaveLength(2);
  });
});

describe('GET /models/user', () => {
  const listed = async (key: string, query = '') => {
    const { status, body } = await get(`/models/user${query}`, key);
    expect(status, JSON.stringify(body)).toBe(200);
    return expectExactOutput(ListUserModelsOutputSchema, body);
  };
  /** The whole catalog's listing (other tests of this file import models beside the demo's). */
  const catalogIds = async (query = '') => ListModelsOutputSchema.parse((await get(`/models${query}`)).body).data.map((m) => m.id);

  it('401 without a key, 403 for a platform key', async () => {
    expectError(await get('/models/user'), 401);
    expectError(await get('/models/user', env.server.platformKey), 403);
  });

  it('without guardrails: the text models, in id order, paged with links.next and total_count', async () => {
    const { key } = await createKey(env.server);
    const textIds = await catalogIds();
    expect(textIds).toEqual(expect.arrayContaining(demoIds((m) => m.architecture.output_modalities.includes('text'))));
    const all = await listed(key);
    expect(all.data.map((m) => m.id)).toEqual(textIds);
    expect(all.total_count).toBe(textIds.length);
    expect(all.links.next).toBeNull();

    const first = await listed(key, '?offset=0&limit=3');
    expect(first.data.map((m) => m.id)).toEqual(textIds.slice(0, 3));
    expect(first.links.next).toMatch(/\/api\/v1\/models\/user\?offset=3&limit=3$/);
    const next = await listed(key, new URL(first.links.next!).search);
    expect(next.data.map((m) => m.id)).toEqual(textIds.slice(3, 6));
    expect((await listed(key, '?output_modalities=image')).data.map((m) => m.id)).toEqual(await catalogIds('?output_modalities=image'));
  });

  it('400 for paging out of range', async () => {
    for (const query of ['limit=0', 'limit=1001', 'offset=-1', 'limit=abc']) expectError(await get(`/models/user?${query}`, env.server.managementKey), 400);
  });

  it("drops what the key's guardrails keep out: models, providers, and models with no ZDR endpoint under ZDR enforcement", async () => {
    const { key, hash } = await createKey(env.server);
    const rules = await ok(env.server, 'guardrails.create', {
      name: `rules ${randomUUID().slice(0, 8)}`,
      ignored_models: ['openai/gpt-4o'],
      ignored_providers: ['mistral'],
    });
    await ok(env.server, 'guardrails.assignKeys', { id: rules.data.id, key_hashes: [hash] });
    const narrowed = (await listed(key, '?output_modalities=all')).data.map((m) => m.id);
    expect(narrowed).not.toContain('openai/gpt-4o');
    // mistralai/mistral-large-2411 is served by mistral only; the small model has another provider.
    expect(narrowed).not.toContain('mistralai/mistral-large-2411');
    expect(narrowed).toContain('mistralai/mistral-small-3.2-24b-instruct');
    expect(narrowed).toContain('openai/gpt-4o-mini');

    const zdr = await createKey(env.server);
    const enforce = await ok(env.server, 'guardrails.create', { name: `zdr ${randomUUID().slice(0, 8)}`, enforce_zdr: true });
    await ok(env.server, 'guardrails.assignKeys', { id: enforce.data.id, key_hashes: [zdr.hash] });
    const zdrIds = await catalogIds('?zdr=true&output_modalities=all');
    expect(zdrIds).toEqual(demoIds(hasZdrEndpoint));
    expect((await listed(zdr.key, '?output_modalities=all')).data.map((m) => m.id)).toEqual(zdrIds);
    // The management key has no guardrail: it sees every text model.
    expect((await listed(env.server.managementKey)).data.map((m) => m.id)).toEqual(await catalogIds());
  });

  it("another organization's guardrails are its own: a key of one never narrows the other's", async () => {
    const other = env.other;
    const guardrail = await ok(env.server, 'guardrails.create', { name: `no gpt ${randomUUID().slice(0, 8)}`, ignored_models: ['openai/gpt-4o-mini'] });
    const { key, hash } = await createKey(env.server);
    await ok(env.server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [hash] });
    expect((await listed(key)).data.map((m) => m.id)).not.toContain('openai/gpt-4o-mini');
    expect((await listed(other.managementKey)).data.map((m) => m.id)).toEqual(await catalogIds());
  });
});
