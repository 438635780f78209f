// Generations through the typed client: record, read, read content, feedback, credits.
import { describe, expect, it } from 'vitest';
import { failure, useServer } from './support.js';

const env = useServer();
const { client } = env;

describe('generations through @switchyard/client', () => {
  it('records a generation once, shows it, its content and the spend, and takes feedback', async () => {
    const admin = client(env.server.managementKey);
    // The routing service and billing hold the platform key.
    const platform = client(env.server.platformKey);
    expect((await platform.generations.addCredits.mutate({ organization_id: env.server.organizationId, amount: 10 })).credit_balance).toBe(10);
    const created = await admin.keys.create.mutate({ name: 'router' });
    const input = {
      id: 'gen-client-1',
      api_key_hash: created.data.hash,
      model: 'openai/gpt-4o',
      tokens_prompt: 12,
      tokens_completion: 3,
      usage: 0.25,
      content: { input: { messages: [{ role: 'user', content: 'Hi' }] }, output: { completion: 'Hello' } },
    };
    expect(await platform.generations.record.mutate(input)).toMatchObject({ recorded: true, content_stored: true });
    expect(await platform.generations.record.mutate(input)).toMatchObject({ recorded: false });
    expect(await failure(admin.generations.record.mutate({ ...input, id: 'gen-client-x' }))).toMatchObject({ status: 403 });

    const own = client(created.key);
    const viaClient = await own.generations.get.query({ id: 'gen-client-1' });
    const viaRest = await (await env.server.request('/api/v1/generation?id=gen-client-1', { key: created.key })).json();
    expect(viaClient).toEqual(viaRest);
    expect(viaClient.data).toMatchObject({ id: 'gen-client-1', usage: 0.25, tokens_prompt: 12, session_id: null });
    expect((await own.keys.current.query()).data).toMatchObject({ usage: 0.25, usage_daily: 0.25 });

    expect((await own.generations.content.query({ id: 'gen-client-1' })).data).toEqual({
      input: { messages: [{ role: 'user', content: 'Hi' }] },
      output: { completion: 'Hello', reasoning: null },
      error: null,
    });
    expect(await admin.generations.feedback.mutate({ generation_id: 'gen-client-1', category: 'latency' })).toEqual({
      data: { success: true },
    });
  });

  it('rejects with the statuses of the contract', async () => {
    const admin = client(env.server.managementKey);
    expect(await failure(admin.generations.get.query({ id: 'gen-unknown' }))).toMatchObject({ status: 404, message: 'Resource not found' });
    // An id no generation can have: GET /generation lists no 400, so both faces answer 404 (docs/api.md).
    expect(await failure(admin.generations.get.query({ id: '' }))).toMatchObject({ status: 404, message: 'Resource not found' });
    const { key } = await admin.keys.create.mutate({ name: 'plain' });
    expect((await failure(client(key).generations.feedback.mutate({ generation_id: 'gen-client-1', category: 'other' }))).status).toBe(403);
    expect((await failure(client('sk-sy-v1-nope').generations.get.query({ id: 'gen-client-1' }))).status).toBe(401);

    // Spend beyond the balance: 402 with the link.
    const { data } = await admin.keys.create.mutate({ name: 'spender' });
    await client(env.server.platformKey).generations.record.mutate({ id: 'gen-client-2', api_key_hash: data.hash, model: 'openai/gpt-4o', usage: 100 });
    const broke = await failure(admin.generations.get.query({ id: 'gen-client-2' }));
    expect(broke.status).toBe(402);
    expect(broke.message).toMatch(/^Insufficient credits\. Add more using https:\/\//);
  });
});
