// The generation recorder against the real server: concurrent record() calls become few
// generations.recordBatch requests, and each caller gets its own generation's answer.
import { MAX_RECORD_BATCH } from '@switchyard/schema';
import { describe, expect, it } from 'vitest';
import { createGenerationRecorder, MAX_RECORD_BATCH_SIZE, SwitchyardError, type GenerationRecorderOptions, type RecordGenerationInput } from '../src/index.js';
import { failure, useServer } from './support.js';

const env = useServer();

/** A recorder holding the platform key, and the sizes of the requests it sent (generations in each). */
function recorder(options: Partial<GenerationRecorderOptions> = {}) {
  const requests: number[] = [];
  const instance = createGenerationRecorder({
    url: env.server.url,
    apiKey: env.server.platformKey,
    fetch: (url, init) => {
      requests.push((JSON.parse(String(init?.body)) as { generations: unknown[] }).generations.length);
      return fetch(url, init);
    },
    ...options,
  });
  return { recorder: instance, requests };
}

let sequence = 0;
async function routerKey() {
  const created = await env.client(env.server.managementKey).keys.create.mutate({ name: `router ${++sequence}` });
  return { key: created.key, hash: created.data.hash };
}
const generation = (hash: string, extra: Partial<RecordGenerationInput> = {}): RecordGenerationInput => ({
  id: `gen-rec-${Date.now().toString(36)}-${++sequence}`,
  api_key_hash: hash,
  model: 'openai/gpt-4o',
  usage: 0.001,
  ...extra,
});
const usageOf = async (key: string) => (await env.client(key).keys.current.query()).data.usage;

describe('createGenerationRecorder', () => {
  it('sends many concurrent recordings as few requests; each caller gets its own answer, and GET /key shows the spend', async () => {
    const { key, hash } = await routerKey();
    const { recorder: r, requests } = recorder();
    const inputs = Array.from({ length: 2500 }, () => generation(hash));
    const answers = await Promise.all(inputs.map((input) => r.record(input)));
    expect(answers).toEqual(inputs.map((input) => ({ id: input.id, recorded: true, is_free: false, content_stored: false })));
    expect(requests).toEqual([1000, 1000, 500]);
    expect(await usageOf(key)).toBeCloseTo(2.5, 9);

    // Recordings made a few awaits apart, within the linger, still share one request.
    requests.length = 0;
    const spread: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) {
      spread.push(r.record(generation(hash)));
      await Promise.resolve();
    }
    await Promise.all(spread);
    expect(requests).toEqual([10]);
  });

  it('a bad generation rejects its own caller only, with the status generations.record would answer', async () => {
    const { key, hash } = await routerKey();
    const { recorder: r, requests } = recorder();
    const good = [generation(hash), generation(hash), generation(hash)];
    const [a, invalid, unknownKey, b, nul, c] = await Promise.allSettled([
      r.record(good[0]!),
      r.record(generation(hash, { usage: -1 })),
      r.record(generation('f'.repeat(64))),
      r.record(good[1]!),
      r.record(generation(hash, { content: { input: { messages: [{ role: 'user', content: 'a \u0000 b' }] } } })),
      r.record(good[2]!),
    ]);
    expect(requests).toEqual([6]);
    expect([a, b, c].map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect((a as PromiseFulfilledResult<unknown>).value).toMatchObject({ id: good[0]!.id, recorded: true });
    const refused = [invalid, unknownKey, nul].map((s) => (s as PromiseRejectedResult).reason as SwitchyardError);
    for (const error of refused) expect(error).toBeInstanceOf(SwitchyardError);
    expect(refused.map((e) => [e.status, e.message])).toEqual([
      [400, 'Invalid request parameters'],
      [404, 'Resource not found'],
      [400, 'Invalid request parameters'],
    ]);
    expect(refused[0]!.metadata).toEqual({ issues: [expect.objectContaining({ path: 'usage' })] });
    expect(await usageOf(key)).toBeCloseTo(0.003, 9);
  });

  it('counts a repeated id once, in one request or across requests', async () => {
    const { key, hash } = await routerKey();
    const { recorder: r } = recorder();
    const input = generation(hash, { usage: 0.5 });
    const first = await Promise.all([r.record(input), r.record(input), r.record({ ...input })]);
    expect(first.map((answer) => answer.recorded).sort()).toEqual([false, false, true]);
    expect(await r.record(input)).toEqual({ id: input.id, recorded: false, is_free: false, content_stored: false });
    expect(await usageOf(key)).toBe(0.5);
  });

  it('bounds each request by bytes as well as by count; flush sends at once; a closed recorder refuses', async () => {
    const { key, hash } = await routerKey();
    const { recorder: r, requests } = recorder({ maxBatch: 3, maxBytes: 1000, lingerMs: 60_000 });
    const big = { input: { messages: [{ role: 'user', content: 'x'.repeat(400) }] } };
    const pending = [
      r.record(generation(hash, { content: big })), // ~550 bytes of JSON
      r.record(generation(hash, { content: big })), // with it over 1,000 bytes: the first goes alone
      r.record(generation(hash)), // ~100 bytes each
      r.record(generation(hash)), // the second big one and two small ones are a full batch (3)
      r.record(generation(hash)),
      r.record(generation(hash)), // these two would wait for the linger (a minute)...
    ];
    await r.flush(); // ...but flush sends them now
    expect((await Promise.all(pending)).every((answer) => answer.recorded)).toBe(true);
    expect(requests).toEqual([1, 3, 2]);
    expect(await usageOf(key)).toBeCloseTo(0.006, 9);
    await r.close();
    await expect(r.record(generation(hash))).rejects.toThrow('the generation recorder is closed');
  });

  it('rejects every caller of a request the server refuses whole (a tenant key: 403), or that got no answer (0)', async () => {
    const { key, hash } = await routerKey();
    const tenant = createGenerationRecorder({ url: env.server.url, apiKey: env.server.managementKey });
    const calls = [tenant.record(generation(hash)), tenant.record(generation(hash))];
    for (const call of calls) {
      expect(await failure(call)).toMatchObject({ status: 403, message: 'Only platform keys can perform this operation' });
    }
    expect(await usageOf(key)).toBe(0);
    const unreachable = createGenerationRecorder({ url: 'http://127.0.0.1:1', apiKey: env.server.platformKey });
    expect(await failure(unreachable.record(generation(hash)))).toMatchObject({ status: 0 });
    expect(() => createGenerationRecorder({ url: env.server.url, apiKey: env.server.platformKey, maxBatch: 1001 })).toThrow(RangeError);
  });

  it('knows the server’s batch limit', () => {
    expect(MAX_RECORD_BATCH_SIZE).toBe(MAX_RECORD_BATCH);
  });
});
