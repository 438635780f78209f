// GET /activity over real HTTP: generations recorded through generations.record show up summed by
// UTC day, model and provider, from the rollups recording keeps; filters, group_by, statuses, access.
import { ActivityOutputSchema, ErrorEnvelopeSchema } from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createKey, createMember, importDemoCatalog, record } from '../fixtures-catalog.js';
import { createOrganization, expectExactOutput, type OrgFixture, useServer } from '../fixtures.js';
import { trpc } from '../fixtures-trpc.js';

const DAY = 86_400_000;
const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
const day = (daysAgo: number) => new Date(today - daysAgo * DAY).toISOString().slice(0, 10);
const at = (daysAgo: number, hour = 12) => new Date(today - daysAgo * DAY + hour * 3_600_000).toISOString();

const env = useServer();
/** An activity answer's rows as sent (unparsed), for what a schema parse would strip. */
const Rows = z.object({ data: z.array(z.unknown()) });

let org: OrgFixture;
let keyA: { key: string; hash: string };
let keyB: { key: string; hash: string };
let workspaceB: string;
let member: { userId: string; key: string; hash: string };

beforeAll(async () => {
  await importDemoCatalog(env.server);
  // A fresh organization, so that its activity is exactly what these tests record.
  org = await createOrganization(env.server.db, 'Activity');
  keyA = await createKey(env.server, {}, org.managementKey);
  const ws = await trpc(env.server, 'workspaces.create', { slug: 'second', name: 'Second' }, { key: org.managementKey });
  workspaceB = ws.data.data.id;
  keyB = await createKey(env.server, { workspace_id: workspaceB }, org.managementKey);
  member = await createMember(env.server.db, org.organizationId);
  // Yesterday: two GPT-4o at OpenAI with key A, one Claude at Anthropic with key B, one BYOK with the member's key.
  await record(env.server, {
    api_key_hash: keyA.hash,
    model: 'openai/gpt-4o',
    provider_name: 'OpenAI',
    usage: 0.5,
    tokens_prompt: 100,
    tokens_completion: 20,
    native_tokens_reasoning: 5,
    created_at: at(1, 1),
  });
  await record(env.server, {
    api_key_hash: keyA.hash,
    model: 'openai/gpt-4o',
    provider_name: 'OpenAI',
    usage: 0.25,
    tokens_prompt: 50,
    tokens_completion: 10,
    created_at: at(1, 23),
  });
  await record(env.server, {
    api_key_hash: keyB.hash,
    model: 'anthropic/claude-sonnet-4',
    provider_name: 'Anthropic',
    usage: 1,
    tokens_prompt: 10,
    tokens_completion: 1,
    created_at: at(1),
  });
  await record(env.server, {
    api_key_hash: member.hash,
    model: 'openai/gpt-4o',
    provider_name: 'OpenAI',
    usage: 0,
    is_byok: true,
    upstream_inference_cost: 0.75,
    tokens_prompt: 7,
    tokens_completion: 3,
    created_at: at(1),
  });
  // Five days ago: one in key A's workspace; 31 days ago and today: outside the window.
  await record(env.server, {
    api_key_hash: keyA.hash,
    model: 'openai/gpt-4o',
    provider_name: 'Azure',
    usage: 0.125,
    tokens_prompt: 1,
    tokens_completion: 1,
    created_at: at(5),
  });
  await record(env.server, { api_key_hash: keyA.hash, model: 'openai/gpt-4o', provider_name: 'OpenAI', usage: 9, created_at: at(31) });
  await record(env.server, { api_key_hash: keyA.hash, model: 'openai/gpt-4o', provider_name: 'OpenAI', usage: 9, created_at: at(0, 0) });
});

async function activity(query = '', key: string | null = org.managementKey) {
  const res = await env.server.request(`/api/v1/activity${query ? `?${query}` : ''}`, { key });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, body: (await res.json()) as unknown };
}
function expectError(answer: { status: number; body: unknown }, status: number) {
  expect(answer.status).toBe(status);
  expect(ErrorEnvelopeSchema.parse(answer.body).error.code).toBe(status);
}

describe('GET /activity', () => {
  it('sums the last 30 completed UTC days by day, model and provider, across workspaces', async () => {
    const { status, body } = await activity();
    expect(status).toBe(200);
    const { data } = expectExactOutput(ActivityOutputSchema, body);
    expect(Object.keys(z.looseObject({}).parse(body))).toEqual(['data']);
    expect(data).toEqual([
      {
        date: day(5),
        model: 'openai/gpt-4o',
        model_permaslug: 'openai/gpt-4o-2024-08-06',
        endpoint_id: expect.any(String),
        provider_name: 'Azure',
        requests: 1,
        prompt_tokens: 1,
        completion_tokens: 1,
        reasoning_tokens: 0,
        usage: 0.125,
        byok_usage_inference: 0,
      },
      {
        date: day(1),
        model: 'anthropic/claude-sonnet-4',
        model_permaslug: expect.any(String),
        endpoint_id: expect.any(String),
        provider_name: 'Anthropic',
        requests: 1,
        prompt_tokens: 10,
        completion_tokens: 1,
        reasoning_tokens: 0,
        usage: 1,
        byok_usage_inference: 0,
      },
      {
        date: day(1),
        model: 'openai/gpt-4o',
        model_permaslug: 'openai/gpt-4o-2024-08-06',
        endpoint_id: expect.any(String),
        provider_name: 'OpenAI',
        requests: 3,
        prompt_tokens: 157,
        completion_tokens: 33,
        reasoning_tokens: 5,
        usage: 0.75,
        byok_usage_inference: 0.75,
      },
    ]);
    // endpoint_id: the catalog's endpoint of the model at that provider.
    const openai = await env.server.db.modelEndpoint.findFirstOrThrow({ where: { model_id: 'openai/gpt-4o', provider_slug: 'openai' } });
    const azure = await env.server.db.modelEndpoint.findFirstOrThrow({ where: { model_id: 'openai/gpt-4o', provider_slug: 'azure' } });
    expect(data.map((r) => r.endpoint_id)).toEqual([azure.id, expect.any(String), openai.id]);
    expect(data[1]!.endpoint_id).not.toBe('');
  });

  it('keeps the rows it reads independent of the number of generations: one rollup row per key, day, model and provider', async () => {
    const rows = await env.server.db.activityDaily.count({ where: { organization_id: org.organizationId } });
    const generations = await env.server.db.generation.count({ where: { organization_id: org.organizationId } });
    expect(generations).toBe(7);
    expect(rows).toBe(6);
    for (let i = 0; i < 20; i++)
      await record(env.server, { api_key_hash: keyA.hash, model: 'openai/gpt-4o', provider_name: 'OpenAI', usage: 0, created_at: at(10) });
    expect(await env.server.db.activityDaily.count({ where: { organization_id: org.organizationId } })).toBe(7);
    const tenth = expectExactOutput(ActivityOutputSchema, (await activity(`date=${day(10)}`)).body).data;
    expect(tenth).toEqual([expect.objectContaining({ date: day(10), requests: 20, usage: 0 })]);
  });

  it('filters by day, key, member and workspace; group_by=workspace splits rows per workspace', async () => {
    expect(expectExactOutput(ActivityOutputSchema, (await activity(`date=${day(5)}`)).body).data.map((r) => r.provider_name)).toEqual(['Azure']);
    const byKeyB = expectExactOutput(ActivityOutputSchema, (await activity(`api_key_hash=${keyB.hash}`)).body).data;
    expect(byKeyB.map((r) => r.model)).toEqual(['anthropic/claude-sonnet-4']);
    const byMember = expectExactOutput(ActivityOutputSchema, (await activity(`user_id=${member.userId}`)).body).data;
    expect(byMember).toEqual([expect.objectContaining({ requests: 1, byok_usage_inference: 0.75, usage: 0 })]);
    const inB = (await activity(`workspace_id=${workspaceB}`)).body;
    expect(expectExactOutput(ActivityOutputSchema, inB).data.map((r) => r.model)).toEqual(['anthropic/claude-sonnet-4']);
    expect((await activity('workspace_id=second')).body).toHaveProperty('data', Rows.parse(inB).data);
    const grouped = expectExactOutput(ActivityOutputSchema, (await activity(`group_by=workspace&date=${day(1)}`)).body).data;
    expect(grouped.map((r) => [r.model, r.workspace_id])).toEqual(
      expect.arrayContaining([
        ['anthropic/claude-sonnet-4', workspaceB],
        ['openai/gpt-4o', org.workspaceId],
      ]),
    );
    expect(grouped).toHaveLength(2);
    for (const r of Rows.parse((await activity()).body).data) expect(r).not.toHaveProperty('workspace_id');
  });

  it("400 for a day outside the window or malformed, a bad hash or group_by; 404 for what is not the organization's", async () => {
    for (const query of [`date=${day(0)}`, `date=${day(31)}`, 'date=2026-02-30', 'date=yesterday', 'api_key_hash=abc', 'group_by=model']) {
      expectError(await activity(query), 400);
    }
    expect((await activity(`date=${day(30)}`)).status).toBe(200);
    expectError(await activity(`workspace_id=${env.other.workspaceId}`), 404);
    expectError(await activity('workspace_id=nope'), 404);
    expectError(await activity(`api_key_hash=${'0'.repeat(64)}`), 404);
    expectError(await activity(`user_id=${env.other.userId}`), 404);
  });

  it('401 without a key; 403 for a regular key and the platform key; another organization sees only its own', async () => {
    expectError(await activity('', null), 401);
    expectError(await activity('', keyA.key), 403);
    expectError(await activity('', env.server.platformKey), 403);
    expect((await activity('', env.other.managementKey)).body).toEqual({ data: [] });
  });
});
