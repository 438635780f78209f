import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalyticsMetaOutputSchema } from '@switchyard/schema';
import type { TestServer } from '../../src/testing/test-server.js';
import { testServer } from '../fixtures.js';
import { createRegularKey, expectEnvelope, rest } from '../fixtures-admin.js';

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
      'request_count',
      'tokens_total',
      'tokens_prompt',
      'tokens_completion',
      'reasoning_tokens',
      'cached_tokens',
      'total_usage',
      'byok_usage',
      'avg_latency',
      'p50_latency',
      'p90_latency',
      'p99_latency',
      'avg_throughput',
      'p50_throughput',
      'p90_throughput',
      'p99_throughput',
      'cache_hit_rate',
    ]);
    expect(data.dimensions.map((d) => d.name)).toEqual([
      'model',
      'provider',
      'api_key_id',
      'user',
      'origin',
      'finish_reason',
      'workspace',
      'app',
      'external_user',
      'generation_id',
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
      ['/guardrails', 'post'],
      ['/guardrails/{id}', 'get'],
      ['/guardrails/{id}', 'patch'],
      ['/guardrails/{id}', 'delete'],
      ['/guardrails/assignments/keys', 'get'],
      ['/guardrails/assignments/members', 'get'],
      ['/guardrails/{id}/assignments/keys', 'post'],
      ['/guardrails/{id}/assignments/keys/remove', 'post'],
      ['/guardrails/{id}/assignments/members', 'post'],
      ['/guardrails/{id}/assignments/members/remove', 'post'],
      ['/scim/group-mappings', 'post'],
      ['/scim/group-mappings', 'get'],
      ['/scim/group-mappings/{id}', 'get'],
      ['/scim/group-mappings/{id}', 'delete'],
      ['/presets', 'get'],
      ['/presets/{slug}', 'get'],
      ['/presets/{slug}/versions/{version}', 'get'],
      ['/analytics/query', 'post'],
    ];
    for (const [path, method] of expected) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
  });

  it('documents the one success status of each operation: 201 for the creates, 200 otherwise', async () => {
    const doc = (await (await server.request('/api/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const successes = (path: string, method: string) => Object.keys(doc.paths[path]![method]!.responses).filter((s) => s.startsWith('2'));
    expect(successes('/guardrails', 'post')).toEqual(['201']);
    expect(successes('/scim/group-mappings', 'post')).toEqual(['201']);
    expect(successes('/guardrails/{id}/assignments/keys', 'post')).toEqual(['200']);
    expect(successes('/guardrails/{id}', 'delete')).toEqual(['200']);
    expect(successes('/presets/{slug}', 'get')).toEqual(['200']);
    expect(Object.keys(doc.paths['/scim/group-mappings']!.post!.responses)).toContain('409');
  });
});
