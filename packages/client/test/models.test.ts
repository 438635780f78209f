// The catalog through the typed client: import the demo catalog, read a model, list embeddings.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RouterInputs } from '../src/index.js';
import { failure, useServer } from './support.js';

const catalog = JSON.parse(readFileSync(fileURLToPath(new URL('../../../demo/catalog.json', import.meta.url)), 'utf8')) as RouterInputs['models']['import'];

const env = useServer();
const { client } = env;

describe('catalog through @switchyard/client', () => {
  it('imports the demo catalog, then reads models, variants and aliases as REST does', async () => {
    const admin = client(env.server.managementKey);
    const imported = await client(env.server.platformKey).models.import.mutate(catalog);
    expect(imported.models).toBe(catalog.models.length);

    const viaClient = await admin.models.get.query({ author: 'openai', slug: 'gpt-oss-20b:free' });
    const viaRest = await (await env.server.request('/api/v1/model/openai/gpt-oss-20b%3Afree')).json();
    expect(viaClient).toEqual(viaRest);
    expect(viaClient.data).toMatchObject({ id: 'openai/gpt-oss-20b:free', pricing: { prompt: '0', completion: '0' } });
    expect((await admin.models.get.query({ author: 'Anthropic', slug: 'claude-4-sonnet' })).data.id).toBe('anthropic/claude-sonnet-4');

    const missing = await failure(admin.models.get.query({ author: 'openai', slug: 'nope' }));
    expect(missing).toMatchObject({ status: 404, message: 'Resource not found' });
  });

  it('lists embeddings models, whole or paged', async () => {
    const admin = client(env.server.managementKey);
    const all = await admin.models.embeddings.query({});
    expect(all.total_count).toBeGreaterThanOrEqual(5);
    expect(all.data).toHaveLength(all.total_count);
    expect(all.links.next).toBeNull();
    const page = await admin.models.embeddings.query({ offset: 1, limit: 2 });
    expect(page.data.map((m) => m.id)).toEqual(all.data.slice(1, 3).map((m) => m.id));
    expect(page.links.next).toBe(`${env.server.url}/api/v1/embeddings/models?offset=3&limit=2`);
    const bad = await failure(admin.models.embeddings.query({ limit: 1001 }));
    expect(bad.status).toBe(400);
  });

  it("refuses catalog writes from tenants' keys (403) and calls without a valid key (401)", async () => {
    const { key } = await client(env.server.managementKey).keys.create.mutate({ name: 'reader' });
    expect((await failure(client(key).models.import.mutate(catalog))).status).toBe(403);
    expect(await failure(client(env.server.managementKey).models.import.mutate(catalog))).toMatchObject({
      status: 403,
      message: 'Only platform keys can perform this operation',
    });
    expect((await failure(client('sk-sy-v1-nope').models.get.query({ author: 'openai', slug: 'gpt-4o' }))).status).toBe(401);
  });
});
