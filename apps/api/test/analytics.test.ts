import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalyticsMetaOutputSchema } from '@switchyard/schema';
import type { TestServer } from '../src/testing.js';
import { testServer } from './fixtures.js';
import { createRegularKey, expectEnvelope, rest } from './fixtures-admin.js';

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});
afterAll(async () => {
  await server?.close();
});

describe('GET /analytics/meta', () => {
  it("returns compat.md's catalogs with display labels", async () => {
    const { status, body } = await rest(server, '/analytics/meta');
    expect(status).toBe(200);
    const { data } = AnalyticsMetaOutputSchema.strict().parse(body);
    expect(data.granularities.map((g) => g.name)).toEqual(['minute', 'hour', 'day', 'week', 'month']);
    expect(data.operators).toEqual([
      ...['eq', 'neq', 'gt', 'gte', 'lt', 'lte'].map((name) => ({ name, value_type: 'scalar' })),
      { name: 'in', value_type: 'array' },
      { name: 'not_in', value_type: 'array' },
    ]);
    expect(data.metrics.map((m) => m.name)).toEqual([
      'request_count', 'tokens_total', 'tokens_prompt', 'tokens_completion', 'reasoning_tokens', 'cached_tokens',
      'total_usage', 'byok_usage', 'avg_latency', 'p50_latency', 'p90_latency', 'p99_latency', 'avg_throughput',
      'p50_throughput', 'p90_throughput', 'p99_throughput', 'cache_hit_rate',
    ]);
    expect(data.dimensions.map((d) => d.name)).toEqual([
      'model', 'provider', 'api_key_id', 'user', 'origin', 'finish_reason', 'workspace', 'app', 'external_user', 'generation_id',
    ]);
    for (const item of [...data.metrics, ...data.dimensions, ...data.granularities]) expect(item.display_label).not.toBe('');
    expect(data.metrics.find((m) => m.name === 'total_usage')).toMatchObject({ display_format: 'currency', is_rate: false });
    expect(data.metrics.find((m) => m.name === 'cache_hit_rate')).toMatchObject({ display_format: 'percent', is_rate: true });
  });

  it('401 without a key; 403 for a regular key', async () => {
    expectEnvelope(await rest(server, '/analytics/meta', { key: null }), 401);
    const { key } = await createRegularKey(server);
    expectEnvelope(await rest(server, '/analytics/meta', { key }), 403);
  });
});

describe('OpenAPI document', () => {
  it('documents the administration operations at their paths', async () => {
    const res = await server.request('/api/v1/openapi.json');
    const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
    const expected: [string, string][] = [
      ['/organization/members', 'get'],
      ['/workspaces/{id}/members', 'get'],
      ['/workspaces/{id}/members/add', 'post'],
      ['/workspaces/{id}/budgets', 'get'],
      ['/workspaces/{id}/budgets/{interval}', 'get'],
      ['/byok/{id}', 'get'],
      ['/guardrails', 'get'],
      ['/guardrails/{id}/assignments/keys', 'get'],
      ['/guardrails/{id}/assignments/members', 'get'],
      ['/presets/{slug}/versions', 'get'],
      ['/scim/group-mappings/{id}', 'patch'],
      ['/analytics/meta', 'get'],
      ['/analytics/query', 'post'],
    ];
    for (const [path, method] of expected) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
  });
});
