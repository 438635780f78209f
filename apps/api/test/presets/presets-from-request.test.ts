// D6–D8 (platform-api.md "Presets from inference bodies"): POST /presets/{slug}/chat/completions,
// /messages and /responses make a preset, or its next version, of an inference request body, over
// REST and tRPC (the typed client's own test is in packages/client/test/presets-from-request.test.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GetPresetOutputSchema, PRESET_REQUEST_KEPT, PresetVersionDetailSchema, PresetWithVersionSchema } from '@switchyard/schema';
import { until, useServer } from '../fixtures.js';
import { createRegularKey, createWorkspace, errorOf, expectEnvelope, rest } from '../fixtures-admin.js';
import { ok, trpc, trpcRaw } from '../fixtures-trpc.js';
import { scaled } from '@switchyard/db/testing';

/** The answer, strictly: no field more or less than the contract's. */
const AnswerSchema = GetPresetOutputSchema.extend({
  data: PresetWithVersionSchema.extend({ designated_version: PresetVersionDetailSchema.strict().nullable() }).strict(),
}).strict();

const env = useServer('Other');

type Kind = 'chat' | 'messages' | 'responses';
const PATH: Record<Kind, string> = { chat: 'chat/completions', messages: 'messages', responses: 'responses' };
const PROCEDURE = { chat: 'presets.fromChat', messages: 'presets.fromMessages', responses: 'presets.fromResponses' } as const;
/** The least body each kind takes. */
const MINIMAL: Record<Kind, Record<string, unknown>> = {
  chat: { messages: [] },
  messages: { model: 'anthropic/claude-sonnet-4', messages: null },
  responses: {},
};

let counter = 0;
const fresh = (prefix = 'p') => `${prefix}-${++counter}-${Date.now().toString(36)}`;

function post(kind: Kind, slug: string, body: unknown, key?: string | null) {
  return rest(env.server, `/presets/${encodeURIComponent(slug)}/${PATH[kind]}`, { method: 'POST', json: body, ...(key === undefined ? {} : { key }) });
}

async function created(kind: Kind, slug: string, body: unknown, key?: string | null) {
  const answer = await post(kind, slug, body, key);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return AnswerSchema.parse(answer.body).data;
}

/** Every version row of the organization's preset with this slug, by number. */
async function versionsOf(slug: string, organizationId = env.server.organizationId) {
  const preset = await env.server.db.preset.findUniqueOrThrow({ where: { organization_id_slug: { organization_id: organizationId, slug } } });
  const rows = await env.server.db.presetVersion.findMany({ where: { preset_id: preset.id }, orderBy: { version: 'asc' } });
  return { preset, rows };
}

describe('D6–D8: the answer', () => {
  it.each(['chat', 'messages', 'responses'] as const)(
    '%s: a new slug creates the preset (active, name = slug, the key workspace) with version 1 in force',
    async (kind) => {
      const slug = fresh(kind);
      const before = new Date(Date.now() - 1000);
      const data = await created(kind, slug, { ...MINIMAL[kind], model: 'openai/gpt-4o', temperature: 0.3 });
      const owner = await env.server.db.apiKey.findFirstOrThrow({ where: { organization_id: env.server.organizationId, is_management_key: true } });
      expect(data).toEqual({
        id: expect.any(String),
        slug,
        name: slug,
        description: null,
        status: 'active',
        status_updated_at: null,
        designated_version_id: data.designated_version!.id,
        creator_user_id: owner.creator_user_id,
        workspace_id: env.server.workspaceId,
        created_at: expect.any(String),
        updated_at: data.designated_version!.created_at,
        designated_version: {
          id: expect.any(String),
          preset_id: data.id,
          version: 1,
          config: { model: 'openai/gpt-4o', temperature: 0.3 },
          system_prompt: null,
          creator_id: owner.creator_user_id,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      });
      expect(new Date(data.created_at).getTime()).toBeGreaterThan(before.getTime());
      // A33 answers the same record.
      const read = await rest(env.server, `/presets/${slug}`);
      expect(AnswerSchema.parse(read.body)).toEqual({ data });
    },
  );

  it.each(['chat', 'messages', 'responses'] as const)('%s over tRPC: the same answer', async (kind) => {
    const slug = fresh(`trpc-${kind}`);
    const answer = await ok(env.server, PROCEDURE[kind], { slug, ...MINIMAL[kind], top_p: 0.9 } as never);
    const data = AnswerSchema.parse(answer).data;
    expect(data).toMatchObject({ slug, name: slug, status: 'active', designated_version: { version: 1, config: { top_p: 0.9 } } });
  });

  it('an existing slug gets a new version, numbered above the highest (deleted ones too), and designated', async () => {
    const slug = fresh('existing');
    const first = await ok(env.server, 'presets.create', { slug, name: 'Kept name', config: { model: 'a/b' }, system_prompt: 'One.' });
    const second = await created('chat', slug, { messages: [{ role: 'user', content: 'hi' }], model: 'a/c' });
    expect(second).toMatchObject({ id: first.data.id, name: 'Kept name', designated_version: { version: 2, config: { model: 'a/c' }, system_prompt: null } });
    await ok(env.server, 'presets.deleteVersion', { slug, version: 2 });
    const third = await created('messages', slug, { model: 'a/d', messages: [], system: 'Three.' });
    expect(third.designated_version).toMatchObject({ version: 3, config: { model: 'a/d' }, system_prompt: 'Three.' });
    const fourth = await created('responses', slug, { instructions: 'Four.' });
    expect(fourth.designated_version).toMatchObject({ version: 4, config: {}, system_prompt: 'Four.' });
    expect(fourth.designated_version_id).toBe(fourth.designated_version!.id);
    const { rows } = await versionsOf(slug);
    expect(rows.map((r) => [r.version, r.deleted_at === null])).toEqual([
      [1, true],
      [2, false],
      [3, true],
      [4, true],
    ]);
    // The listing shows them as A34 and the versions list do.
    expect((await rest(env.server, `/presets/${slug}/versions`)).body).toMatchObject({
      total_count: 4,
      data: [{ version: 1 }, null, { version: 3 }, { version: 4 }],
    });
  });
});

describe('D6–D8: what a version keeps', () => {
  const extras = { unknown_field: 1, another: { nested: true }, slug_in_body: 'x' };

  it('chat completions: the config fields under their wire names; messages, stream, metadata and the rest dropped; system_prompt null', async () => {
    const kept = {
      model: 'openai/gpt-4o',
      models: ['openai/gpt-4o', 'anthropic/claude-sonnet-4'],
      provider: { order: ['openai'], allow_fallbacks: false },
      temperature: 0.7,
      top_p: 0.9,
      top_k: 40,
      top_a: 0.1,
      min_p: 0.05,
      frequency_penalty: 0.2,
      presence_penalty: -0.2,
      repetition_penalty: 1.1,
      seed: 42,
      max_tokens: 512,
      max_completion_tokens: 1024,
      stop: ['\n\n', 'END'],
      reasoning: { effort: 'high', exclude: false },
      reasoning_effort: 'high',
      response_format: { type: 'json_object' },
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      plugins: [{ id: 'web' }],
    };
    const dropped = {
      messages: [{ role: 'system', content: 'not a system prompt here' }],
      stream: false,
      top_logprobs: 3,
      logprobs: true,
      logit_bias: { '50256': -100 },
      modalities: ['text'],
      image_config: { aspect_ratio: '1:1' },
      metadata: { team: 'a' },
      user: 'u-1',
      session_id: 's-1',
      service_tier: 'auto',
      prediction: { type: 'content', content: 'x' },
      stream_options: { include_usage: true },
      prompt_cache_key: 'k',
      prompt_cache_options: {},
      cache_control: { type: 'ephemeral' },
      debug: { echo_upstream_body: true },
      trace: { id: 't' },
      stop_server_tools_when: 'x',
      system: 'ignored for chat completions',
      instructions: 'ignored too',
    };
    const data = await created('chat', fresh('chat-all'), { ...kept, ...dropped, ...extras });
    expect(data.designated_version).toMatchObject({ config: kept, system_prompt: null });
    expect(Object.keys(data.designated_version!.config).sort()).toEqual([...PRESET_REQUEST_KEPT.chat].sort());
    // A single stop string is kept as sent; a kept field sent as null sets nothing.
    const single = await created('chat', fresh('chat-null'), {
      messages: [],
      stop: 'END',
      temperature: null,
      provider: null,
      seed: null,
      reasoning_effort: null,
    });
    expect(single.designated_version!.config).toEqual({ stop: 'END' });
  });

  it('messages: model, sampling, max_tokens, stop_sequences, thinking, tools; system becomes system_prompt', async () => {
    const kept = {
      model: 'anthropic/claude-sonnet-4',
      models: ['anthropic/claude-sonnet-4', 'openai/gpt-4o'],
      provider: { only: ['anthropic'] },
      temperature: 0.5,
      top_p: 0.8,
      top_k: 20,
      max_tokens: 2048,
      stop_sequences: ['STOP'],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
      tool_choice: { type: 'auto' },
      plugins: [{ id: 'web' }],
    };
    const dropped = {
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      metadata: { user_id: 'u' },
      fallbacks: null,
      service_tier: 'standard_only',
      speed: 'fast',
      output_config: { effort: 'low' },
      context_management: null,
      safeguards: {},
      cache_control: { type: 'ephemeral' },
      session_id: 's',
      user: 'u',
      trace: {},
      stop_server_tools_when: 'x',
      instructions: 'not the messages field',
    };
    const data = await created('messages', fresh('msg-all'), { ...kept, ...dropped, ...extras, system: 'You are terse.' });
    expect(data.designated_version).toMatchObject({ config: kept, system_prompt: 'You are terse.' });
    expect(Object.keys(data.designated_version!.config).sort()).toEqual([...PRESET_REQUEST_KEPT.messages].sort());
  });

  it('messages: system as text blocks is joined by a blank line; no system is null; an empty string stays empty', async () => {
    const blocks = [
      { type: 'text', text: 'First.' },
      { type: 'text', text: 'Second.', cache_control: { type: 'ephemeral' } },
    ];
    expect((await created('messages', fresh('blocks'), { ...MINIMAL.messages, system: blocks })).designated_version!.system_prompt).toBe('First.\n\nSecond.');
    expect((await created('messages', fresh('blocks'), { ...MINIMAL.messages, system: [] })).designated_version!.system_prompt).toBe('');
    expect((await created('messages', fresh('nosys'), MINIMAL.messages)).designated_version!.system_prompt).toBeNull();
    expect((await created('messages', fresh('empty'), { ...MINIMAL.messages, system: '' })).designated_version!.system_prompt).toBe('');
  });

  it('responses: the config fields and text; instructions becomes system_prompt; input, store, service_tier dropped', async () => {
    const kept = {
      model: 'openai/gpt-4o',
      models: ['openai/gpt-4o'],
      provider: { sort: 'price' },
      temperature: 1,
      top_p: 0.95,
      top_k: 10,
      frequency_penalty: 0.1,
      presence_penalty: 0.1,
      max_output_tokens: 4096,
      reasoning: { effort: 'medium' },
      text: { format: { type: 'text' }, verbosity: 'low' },
      tools: [{ type: 'function', name: 'f' }],
      tool_choice: 'required',
      parallel_tool_calls: true,
      plugins: [],
    };
    const dropped = {
      store: false,
      stream: false,
      service_tier: 'auto',
      input: [{ role: 'user', content: 'hi' }],
      max_tool_calls: 3,
      top_logprobs: 2,
      metadata: { a: 'b' },
      include: ['reasoning.encrypted_content'],
      truncation: 'auto',
      background: false,
      previous_response_id: 'resp_1',
      prompt: { id: 'pmpt_1' },
      prompt_cache_key: 'k',
      prompt_cache_options: {},
      safety_identifier: 'x',
      image_config: {},
      modalities: ['text'],
      session_id: 's',
      user: 'u',
      trace: {},
      debug: {},
      cache_control: {},
      stop_server_tools_when: 'x',
      system: 'not the responses field',
    };
    const data = await created('responses', fresh('resp-all'), { ...kept, ...dropped, ...extras, instructions: 'Answer in French.' });
    expect(data.designated_version).toMatchObject({ config: kept, system_prompt: 'Answer in French.' });
    expect(Object.keys(data.designated_version!.config).sort()).toEqual([...PRESET_REQUEST_KEPT.responses].sort());
    expect((await created('responses', fresh('resp-input'), { input: 'just text', service_tier: null, reasoning: null })).designated_version).toMatchObject({
      config: {},
      system_prompt: null,
    });
  });
});

describe('D6–D8: errors', () => {
  it('400 for a malformed slug, in the envelope, and nothing is written', async () => {
    const count = () => env.server.db.preset.count();
    const before = await count();
    // Percent-encoded in the path, then decoded: a space, a slash, a non-ASCII letter; or too long.
    for (const slug of ['has space', 'x'.repeat(101), 'a/b', 'é']) {
      for (const kind of ['chat', 'messages', 'responses'] as const) {
        const answer = await post(kind, slug, MINIMAL[kind]);
        expectEnvelope(answer, 400);
      }
    }
    expect((await trpc(env.server, 'presets.fromChat', { slug: 'has space', messages: [] })).status).toBe(400);
    expect(await count()).toBe(before);
  });

  it('400 for a body without its required fields, naming the field', async () => {
    const issuePaths = (answer: { body: unknown }) => ((errorOf(answer).metadata?.issues ?? []) as { path: string }[]).map((i) => i.path);
    const slug = fresh('bad');
    const bad: [Kind, unknown, string][] = [
      ['chat', {}, 'messages'],
      ['chat', { messages: 'hi' }, 'messages'],
      ['chat', { messages: null }, 'messages'],
      ['messages', { messages: [] }, 'model'],
      ['messages', { model: 7, messages: [] }, 'model'],
      ['messages', { model: 'a/b' }, 'messages'],
      ['messages', { model: 'a/b', messages: 'hi' }, 'messages'],
    ];
    for (const [kind, body, field] of bad) {
      const answer = await post(kind, slug, body);
      expectEnvelope(answer, 400);
      expect(issuePaths(answer), `${kind} ${JSON.stringify(body)}`).toContain(field);
    }
    expect(await env.server.db.preset.count({ where: { slug } })).toBe(0);
  });

  it('400 for a typed field of the wrong type, naming it; unknown fields are accepted and dropped', async () => {
    const issuePaths = (answer: { body: unknown }) => ((errorOf(answer).metadata?.issues ?? []) as { path: string }[]).map((i) => i.path);
    const slug = fresh('typed');
    const bad: [Kind, Record<string, unknown>, string][] = [
      ['chat', { temperature: 'hot' }, 'temperature'],
      ['chat', { top_k: 1.5 }, 'top_k'],
      ['chat', { max_tokens: true }, 'max_tokens'],
      ['chat', { stop: 5 }, 'stop'],
      ['chat', { models: 'a/b' }, 'models'],
      ['chat', { provider: [] }, 'provider'],
      ['chat', { tools: {} }, 'tools'],
      ['chat', { stream: 1 }, 'stream'],
      ['chat', { metadata: { a: 1 } }, 'metadata.a'],
      ['chat', { model: 1 }, 'model'],
      ['messages', { system: 3 }, 'system'],
      ['messages', { system: [{ type: 'image', source: {} }] }, 'system'],
      ['messages', { stop_sequences: 'STOP' }, 'stop_sequences'],
      ['messages', { tool_choice: 'auto' }, 'tool_choice'],
      ['messages', { thinking: true }, 'thinking'],
      ['responses', { instructions: ['a'] }, 'instructions'],
      ['responses', { input: 5 }, 'input'],
      ['responses', { store: 0 }, 'store'],
      ['responses', { max_output_tokens: -1.5 }, 'max_output_tokens'],
      ['responses', { text: 'plain' }, 'text'],
      ['responses', { instructions: 'x'.repeat(100_001) }, 'instructions'],
    ];
    for (const [kind, body, field] of bad) {
      const answer = await post(kind, slug, { ...MINIMAL[kind], ...body });
      expectEnvelope(answer, 400);
      expect(issuePaths(answer), `${kind} ${JSON.stringify(body).slice(0, 80)}`).toContain(field);
    }
    // A JSON body keeps its types (http/rest.ts converts only query strings and path parameters).
    const coerced = await post('chat', fresh('coerced'), { messages: [], max_tokens: '100' });
    expectEnvelope(coerced, 400);
    expect(issuePaths(coerced)).toContain('max_tokens');
    // Text blocks joined past the system prompt's bound: 400 too.
    const long = await post('messages', slug, {
      ...MINIMAL.messages,
      system: [
        { type: 'text', text: 'x'.repeat(60_000) },
        { type: 'text', text: 'y'.repeat(60_000) },
      ],
    });
    expectEnvelope(long, 400);
    expect(errorOf(long).metadata).toMatchObject({ field: 'system' });
    // Not JSON, or not an object: 400.
    const raw = (body: string) =>
      env.server.request(`/api/v1/presets/${slug}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const body of ['{', '[]', '"text"']) {
      const res = await raw(body);
      expectEnvelope({ status: res.status, body: await res.json() }, 400);
    }
    expect(await env.server.db.preset.count({ where: { slug } })).toBe(0);
    // Unknown fields never fail a call.
    const accepted = await created('responses', slug, { totally_new_option: { a: [1, 2] }, x_vendor: 'y' });
    expect(accepted.designated_version!.config).toEqual({});
  });

  it('401 without a key or with an unknown one; 403 for a platform key; nothing written', async () => {
    const slug = fresh('auth');
    for (const kind of ['chat', 'messages', 'responses'] as const) {
      expectEnvelope(await post(kind, slug, MINIMAL[kind], null), 401);
      expectEnvelope(await post(kind, slug, MINIMAL[kind], 'sk-sy-v1-not-a-real-key'), 401);
      expectEnvelope(await post(kind, slug, MINIMAL[kind], env.server.platformKey), 403);
      expect((await trpcRaw(env.server, PROCEDURE[kind], { slug, ...MINIMAL[kind] }, { key: null })).status).toBe(401);
      expect((await trpcRaw(env.server, PROCEDURE[kind], { slug, ...MINIMAL[kind] }, { key: env.server.platformKey })).status).toBe(403);
    }
    expect(await env.server.db.preset.count({ where: { slug } })).toBe(0);
  });

  it("404 for a slug held by a preset the key cannot write: another workspace's (regular key), or one whose workspace was deleted", async () => {
    const ws = await createWorkspace(env.server, fresh('team').toLowerCase());
    const slug = fresh('team-preset');
    await ok(env.server, 'presets.create', { slug, name: 'Team', config: { model: 'a/b' }, workspace_id: ws.id });
    const { key } = await createRegularKey(env.server);
    for (const kind of ['chat', 'messages', 'responses'] as const) expectEnvelope(await post(kind, slug, MINIMAL[kind], key), 404);
    expect((await versionsOf(slug)).rows).toHaveLength(1);
    // The management key sees every workspace: it adds the next version there (the preset stays in its workspace).
    const managed = await created('chat', slug, { messages: [], model: 'a/c' });
    expect(managed).toMatchObject({ workspace_id: ws.id, designated_version: { version: 2 } });

    // A preset whose workspace was deleted: presets cannot be deleted on their own, but a deleted
    // workspace takes its presets with it: at once for every answer, their rows with the
    // workspace's deletion job. The job runner is held while the rows are still there (the job
    // would otherwise free the slug at any moment), then let go.
    const doomed = await createWorkspace(env.server, fresh('doomed').toLowerCase());
    const gone = fresh('gone');
    await ok(env.server, 'presets.create', { slug: gone, name: 'Gone', config: {}, workspace_id: doomed.id });
    await env.server.jobs.stop();
    try {
      await ok(env.server, 'workspaces.delete', { id: doomed.id });
      for (const kind of ['chat', 'messages', 'responses'] as const) expectEnvelope(await post(kind, gone, MINIMAL[kind]), 404);
      expect((await trpc(env.server, 'presets.fromResponses', { slug: gone })).status).toBe(404);
      expect(await env.server.db.preset.count({ where: { slug: gone } })).toBe(1);
    } finally {
      env.server.jobs.start();
    }
    await until(async () => (await env.server.db.preset.count({ where: { workspace_id: doomed.id } })) === 0, {
      what: "the deleted workspace's presets removed by its job",
    });
    expect(await env.server.db.presetVersion.count({ where: { preset: { slug: gone } } })).toBe(0);
    // Once the rows are gone the slug is free: the same call makes a new preset in the caller's workspace.
    expect(await created('chat', gone, { messages: [], model: 'a/b' })).toMatchObject({ slug: gone, workspace_id: env.server.workspaceId });
  });

  it('409 when a concurrent call creates the same new preset first; nothing written by the loser; retrying adds the next version', async () => {
    const slug = fresh('raced');
    const owner = (await env.server.db.apiKey.findFirstOrThrow({ where: { organization_id: env.server.organizationId, is_management_key: true } }))
      .creator_user_id;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let inserted: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => (inserted = resolve));
    // The first creation, held uncommitted: the preset row with its version 1, in force.
    const first = env.server.db.$transaction(
      async (tx) => {
        const preset = await tx.preset.create({
          data: { organization_id: env.server.organizationId, workspace_id: env.server.workspaceId, slug, name: slug, creator_user_id: owner },
        });
        const version = await tx.presetVersion.create({
          data: { organization_id: env.server.organizationId, preset_id: preset.id, version: 1, config: { model: 'first/one' }, creator_id: owner },
        });
        await tx.preset.update({ where: { id: preset.id }, data: { designated_version_id: version.id } });
        inserted();
        await released;
      },
      { timeout: scaled(60_000), maxWait: scaled(30_000) },
    );
    try {
      await holding;
      let answered = false;
      const racing = post('chat', slug, { messages: [], model: 'second/one' }).then((answer) => {
        answered = true;
        return answer;
      });
      // The call's insert of the same slug waits on the held row's unique index entry.
      await until(
        async () => {
          const [{ n }] = await env.server.db.$queryRaw<[{ n: bigint }]>`
            SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO%presets%'`;
          return n === 1n;
        },
        { what: "the call's insert to wait on the first creation's row" },
      );
      expect(answered).toBe(false);
      release();
      await first;
      const answer = await racing;
      expectEnvelope(answer, 409);
      expect(errorOf(answer).metadata).toMatchObject({ slug });
    } finally {
      release();
      await first.catch(() => undefined);
    }
    // The loser wrote nothing; the same call again adds version 2.
    expect((await versionsOf(slug)).rows.map((r) => r.version)).toEqual([1]);
    const retried = await created('chat', slug, { messages: [], model: 'second/one' });
    expect(retried.designated_version).toMatchObject({ version: 2, config: { model: 'second/one' } });
  });

  it('concurrent calls on one slug: distinct versions or 409, never a duplicate or a 500; the newest is in force', async () => {
    const kinds = ['chat', 'messages', 'responses'] as const;
    const burst = (slug: string) =>
      Promise.all(Array.from({ length: 9 }, (_, i) => post(kinds[i % 3]!, slug, { ...MINIMAL[kinds[i % 3]!], seed: i, max_tokens: i + 1 })));
    for (const slug of [fresh('burst-new'), fresh('burst-new')]) {
      const answers = await burst(slug);
      for (const answer of answers) expect([200, 409], JSON.stringify(answer.body)).toContain(answer.status);
      const won = answers.filter((a) => a.status === 200).map((a) => AnswerSchema.parse(a.body).data.designated_version!.version);
      expect(won.length).toBeGreaterThanOrEqual(1);
      expect(new Set(won).size).toBe(won.length);
      const { preset, rows } = await versionsOf(slug);
      expect(rows.map((r) => r.version)).toEqual(Array.from({ length: won.length }, (_, i) => i + 1));
      expect(preset.designated_version_id).toBe(rows.at(-1)!.id);
      for (const answer of answers.filter((a) => a.status === 409)) expect(errorOf(answer).metadata).toMatchObject({ slug });
    }
    // An existing preset: the calls number in turn under its row lock, every one succeeds.
    const slug = fresh('burst-existing');
    await created('responses', slug, {});
    const answers = await burst(slug);
    expect(answers.map((a) => a.status)).toEqual(Array(9).fill(200));
    const versions = answers.map((a) => AnswerSchema.parse(a.body).data.designated_version!.version).sort((a, b) => a - b);
    expect(versions).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const { preset, rows } = await versionsOf(slug);
    expect(rows.map((r) => r.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(preset.designated_version_id).toBe(rows.at(-1)!.id);
  });
});

describe('D6–D8: callers', () => {
  it('a regular key creates in its own workspace and versions only presets there; a management key in its own (the default)', async () => {
    const ws = await createWorkspace(env.server, fresh('own').toLowerCase());
    const { key } = await createRegularKey(env.server, ws.id);
    const slug = fresh('regular');
    const made = await created('messages', slug, { ...MINIMAL.messages, system: 'Mine.' }, key);
    expect(made).toMatchObject({ workspace_id: ws.id, designated_version: { version: 1, system_prompt: 'Mine.' } });
    expect((await created('chat', slug, MINIMAL.chat, key)).designated_version!.version).toBe(2);
    // The default workspace's regular key cannot reach it (404); the management key can.
    const { key: defaultKey } = await createRegularKey(env.server);
    expectEnvelope(await post('responses', slug, {}, defaultKey), 404);
    expect((await created('responses', slug, {})).designated_version!.version).toBe(3);
    expect((await created('responses', fresh('mgmt'), {})).workspace_id).toBe(env.server.workspaceId);
  });

  it("another organization's preset with the same slug is invisible: the call creates the caller's own", async () => {
    const slug = fresh('shared-name');
    const theirs = await created('chat', slug, { messages: [], model: 'their/model' }, env.other.managementKey);
    expect(theirs).toMatchObject({ workspace_id: env.other.workspaceId, designated_version: { version: 1 } });
    const mine = await created('chat', slug, { messages: [], model: 'my/model' });
    expect(mine).toMatchObject({ workspace_id: env.server.workspaceId, designated_version: { version: 1, config: { model: 'my/model' } } });
    expect(mine.id).not.toBe(theirs.id);
    // Theirs is untouched, and a regular key of theirs versions their own.
    expect((await versionsOf(slug, env.other.organizationId)).rows.map((r) => r.config)).toEqual([{ model: 'their/model' }]);
    const { key: theirRegular } = await createRegularKey(env.server, undefined, env.other.managementKey);
    expect(await created('responses', slug, {}, theirRegular)).toMatchObject({ id: theirs.id, designated_version: { version: 2 } });
    expect((await versionsOf(slug)).rows).toHaveLength(1);
  });

  it('nothing is run: no generation is recorded, whatever the body asks', async () => {
    const before = await env.server.db.generation.count();
    const slug = fresh('no-gen');
    await created('chat', slug, { messages: [{ role: 'user', content: 'hi' }], model: 'openai/gpt-4o', stream: true });
    await created('messages', slug, { model: 'anthropic/claude-sonnet-4', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
    await created('responses', slug, { input: 'hi', model: 'openai/gpt-4o', background: true });
    expect(await env.server.db.generation.count()).toBe(before);
    expect(await env.server.db.generation.count({ where: { organization_id: env.server.organizationId } })).toBe(0);
  });
});

describe('D6–D8: the docs', () => {
  it('docs/api.md lists exactly the fields each kind keeps', () => {
    const doc = readFileSync(new URL('../../../../docs/api.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('**What a version keeps**'), doc.indexOf('**What is dropped**'));
    const listed = (label: string) => {
      const start = section.indexOf(`  - ${label}: `);
      expect(start, label).toBeGreaterThan(-1);
      const end = section.indexOf('\n  - ', start + 1);
      return [...section.slice(start, end === -1 ? undefined : end).matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    };
    expect(listed('D6')).toEqual([...PRESET_REQUEST_KEPT.chat]);
    expect(listed('D7')).toEqual([...PRESET_REQUEST_KEPT.messages]);
    expect(listed('D8')).toEqual([...PRESET_REQUEST_KEPT.responses]);
  });
});
