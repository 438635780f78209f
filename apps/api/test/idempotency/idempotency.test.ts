// Safe retries (docs/idempotency.md): creating operations take an Idempotency-Key
// header (REST) or an idempotency_key input field (tRPC). The first answer is kept 24 hours and
// replayed for the same key and request; another request with that key is 400; concurrent retries
// create one thing; keys belong to the caller's key, so no other key, and no other organization,
// ever gets its answer.
import { CreateKeyOutputSchema, ErrorEnvelopeSchema } from '@switchyard/schema';
import { beforeEach, describe, expect, it } from 'vitest';
import { ANSWER_KEPT_MS, CLAIM_LEASE_MS, expireIdempotencyKeys } from '../../src/modules/idempotency/idempotency.js';
import { createRegularKey, expectEnvelope } from '../fixtures-admin.js';
import { useServer } from '../fixtures.js';
import { ok, trpc } from '../fixtures-trpc.js';

const env = useServer();

/** A REST call with a JSON body and, when given, an Idempotency-Key header. */
async function post(path: string, json: unknown, idempotencyKey?: string | string[], key?: string | null) {
  const headers = new Headers({ 'content-type': 'application/json' });
  for (const value of [idempotencyKey ?? []].flat()) headers.append('idempotency-key', value);
  const res = await env.server.request(`/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(json), key });
  return { status: res.status, body: (await res.json()) as unknown };
}

const keysNamed = (name: string) => env.server.db.apiKey.count({ where: { name } });
const claims = () => env.server.db.idempotencyKey.count();

let n = 0;
/** A name (and an idempotency key) no other test uses. */
const fresh = (what: string) => `${what}-${++n}-${Math.random().toString(36).slice(2, 8)}`;

beforeEach(() => env.server.setNow(null));

describe('POST /keys with Idempotency-Key', () => {
  it('a retry with the same key and body answers the same 201, secret included, and creates one key', async () => {
    const name = fresh('retried');
    const first = await post('/keys', { name, limit: 5 }, name);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const second = await post('/keys', { limit: 5, name }, name); // key order is not a different request
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(CreateKeyOutputSchema.parse(second.body).key).toMatch(/^sk-sy-v1-/);
    expect(await keysNamed(name)).toBe(1);
  });

  it('without a key, every request creates (as before)', async () => {
    const name = fresh('plain');
    expect((await post('/keys', { name })).status).toBe(201);
    expect((await post('/keys', { name })).status).toBe(201);
    expect(await keysNamed(name)).toBe(2);
  });

  it('the same key with another body, or on another operation, is 400 and creates nothing', async () => {
    const name = fresh('reused');
    expect((await post('/keys', { name }, name)).status).toBe(201);
    const other = await post('/keys', { name: `${name}-b` }, name);
    expectEnvelope(other, 400);
    expect(JSON.stringify(other.body)).toContain('Idempotency-Key');
    expectEnvelope(await post('/workspaces', { name, slug: name }, name), 400);
    expect(await keysNamed(`${name}-b`)).toBe(0);
    expect(await env.server.db.workspace.count({ where: { slug: name } })).toBe(0);
  });

  it('20 concurrent retries create one key and all answer it', async () => {
    const name = fresh('raced');
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('/keys', { name }, name)));
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      expect(answer.body).toEqual(answers[0]!.body);
    }
    expect(await keysNamed(name)).toBe(1);
  });

  it("never replays another organization's (or another key's) answer: keys belong to the caller's key", async () => {
    const name = fresh('shared-key');
    const mine = await post('/keys', { name }, name);
    const theirs = await post('/keys', { name }, name, env.other.managementKey);
    expect(theirs.status).toBe(201);
    const [a, b] = [CreateKeyOutputSchema.parse(mine.body), CreateKeyOutputSchema.parse(theirs.body)];
    expect(b.key).not.toBe(a.key);
    expect(b.data.hash).not.toBe(a.data.hash);
    expect(await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: b.data.hash } })).toMatchObject({ organization_id: env.other.organizationId });
    // A second management key of the same organization is another caller too.
    const second = await ok(env.server, 'keys.create', { name: fresh('second-mgmt'), is_management_key: true } as never);
    const again = await post('/keys', { name }, name, second.key);
    expect(again.status).toBe(201);
    expect(CreateKeyOutputSchema.parse(again.body).key).not.toBe(a.key);
  });

  it('a failed first request gives its key back: the retry runs again', async () => {
    const key = fresh('failing');
    expectEnvelope(await post('/keys', { name: '' }, key), 400);
    expect(await env.server.db.idempotencyKey.count({ where: { key } })).toBe(0);
    // Now the key is free for any request.
    expect((await post('/keys', { name: key }, key)).status).toBe(201);
  });

  it('the answer is kept sealed: the row never holds the secret', async () => {
    const name = fresh('sealed');
    const created = CreateKeyOutputSchema.parse((await post('/keys', { name }, name)).body);
    const row = await env.server.db.idempotencyKey.findFirstOrThrow({ where: { key: name } });
    expect(row.response).not.toContain(created.key);
    expect(row.response).not.toContain(created.data.hash);
    expect(row.organization_id).toBe(env.server.organizationId);
  });

  it('400 for a malformed key (too long, not visible ASCII, sent twice), or header and field that differ', async () => {
    const name = fresh('malformed');
    expectEnvelope(await post('/keys', { name }, 'k'.repeat(256)), 400);
    expectEnvelope(await post('/keys', { name }, 'with space'), 400);
    expectEnvelope(await post('/keys', { name }, ['a', 'b']), 400);
    expectEnvelope(await post('/keys', { name, idempotency_key: 'field' }, 'header'), 400);
    expect(await keysNamed(name)).toBe(0);
    // The field alone works over REST too, and agrees with the same header.
    expect((await post('/keys', { name, idempotency_key: name }, name)).status).toBe(201);
    expect((await post('/keys', { name, idempotency_key: name })).status).toBe(201);
    expect(await keysNamed(name)).toBe(1);
  });

  it('401 without a key and 403 for a regular key: nothing is claimed', async () => {
    const before = await claims();
    expectEnvelope(await post('/keys', { name: 'x' }, fresh('anon'), null), 401);
    const { key: regular } = await createRegularKey(env.server);
    expectEnvelope(await post('/keys', { name: 'x' }, fresh('regular'), regular), 403);
    expectEnvelope(await post('/keys', { name: 'x' }, fresh('platform'), env.server.platformKey), 403);
    expect(await claims()).toBe(before);
  });

  it('after 24 hours the key is free again, and the expiry job forgets the answer', async () => {
    const name = fresh('expiring');
    expect((await post('/keys', { name }, name)).status).toBe(201);
    const later = new Date(Date.now() + ANSWER_KEPT_MS + 1000);
    env.server.setNow(later);
    expect((await post('/keys', { name: `${name}-b` }, name)).status).toBe(201);
    expect(await keysNamed(`${name}-b`)).toBe(1);
    const old = fresh('old');
    expect((await post('/keys', { name: old }, old)).status).toBe(201);
    expect(await expireIdempotencyKeys(env.server.db, new Date(later.getTime() + ANSWER_KEPT_MS + 1000))).toBeGreaterThanOrEqual(2);
    expect(await env.server.db.idempotencyKey.count({ where: { key: { in: [name, old] } } })).toBe(0);
  });

  it('a first request whose process died holds the key until its lease ends; then a retry runs', async () => {
    const name = fresh('orphan');
    expect((await post('/keys', { name }, name)).status).toBe(201);
    // As if the first request had claimed the key and died before keeping its answer.
    const start = new Date();
    env.server.setNow(start);
    await env.server.db.idempotencyKey.updateMany({
      where: { key: name },
      data: { response: null, locked_until: new Date(start.getTime() + CLAIM_LEASE_MS), created_at: start },
    });
    // A retry waits for the answer; the lease ends (the clock moves on) and it runs.
    let answered = false;
    const retry = post('/keys', { name }, name).finally(() => {
      answered = true;
    });
    // Round trips after it (each a claim of its own key) all answer while it still waits.
    for (let i = 0; i < 5; i++) expect((await post('/keys', { name: fresh('beside') }, fresh('beside'))).status).toBe(201);
    expect(answered).toBe(false);
    expect(await keysNamed(name)).toBe(1);
    env.server.setNow(new Date(start.getTime() + CLAIM_LEASE_MS + 1));
    expect((await retry).status).toBe(201);
    expect(await keysNamed(name)).toBe(2);
  });
});

describe('over tRPC: the idempotency_key input field', () => {
  it('generations.addCredits credits once for a retried call (platform key)', async () => {
    const key = fresh('credit');
    const input = { organization_id: env.other.organizationId, amount: 7, idempotency_key: key };
    const credits = async () => Number((await env.server.db.organization.findUniqueOrThrow({ where: { id: env.other.organizationId } })).total_credits);
    const before = await credits();
    const first = await ok(env.server, 'generations.addCredits', input);
    const again = await ok(env.server, 'generations.addCredits', input);
    expect(again).toEqual(first);
    const other = await trpc(env.server, 'generations.addCredits', { ...input, amount: 8 });
    expect(other.status).toBe(400);
    // One more call without the key moves the balance by 7 from the first answer, not 14.
    const next = await ok(env.server, 'generations.addCredits', { organization_id: env.other.organizationId, amount: 1 });
    expect(next.credit_balance).toBeCloseTo(first.credit_balance + 1, 6);
    expect(await credits()).toBeCloseTo(before + 8, 6);
  });

  it('every creating operation replays its answer', async () => {
    const ws = fresh('ws');
    const calls = [
      ['workspaces.create', { name: ws, slug: ws }],
      ['guardrails.create', { name: fresh('guardrail') }],
      ['presets.create', { slug: fresh('preset'), name: 'P', config: { model: 'openai/gpt-4o' } }],
      ['organization.createMember', { email: `${fresh('member')}@example.com` }],
      ['byok.create', { provider: 'openai', name: fresh('byok'), key: 'sk-provider-secret-123456' }],
      ['destinations.create', { type: 'webhook', name: fresh('dest'), config: { url: 'https://hooks.example.com/in' } }],
      ['scim.createToken', {}],
    ] as const;
    for (const [path, input] of calls) {
      const key = fresh(path);
      const first = await trpc(env.server, path as never, { ...input, idempotency_key: key } as never);
      expect(first.error, `${path}: ${JSON.stringify(first.error)}`).toBeUndefined();
      const again = await trpc(env.server, path as never, { ...input, idempotency_key: key } as never);
      expect(again.data, path).toEqual(first.data);
    }
  });
});

describe('the error envelope', () => {
  it('is the spec envelope over REST', async () => {
    const answer = await post('/keys', { name: 'x' }, ' ');
    expect(ErrorEnvelopeSchema.parse(answer.body).error.code).toBe(400);
  });
});
