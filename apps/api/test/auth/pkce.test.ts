// Keys issued through the authorization-code flow with PKCE, over real HTTP: POST /auth/keys/code
// (D10) makes a code on behalf of the calling key's user, POST /auth/keys (D11) exchanges it, once,
// for the key it describes. RFC 7636's own example verifier and challenge (Appendix B) check S256.
import { createHash, randomUUID } from 'node:crypto';
import { CreateAuthorizationCodeOutputSchema, ErrorEnvelopeSchema, ExchangedKeySchema, GetKeyOutputSchema, ListKeysOutputSchema } from '@switchyard/schema';
import { describe, expect, it } from 'vitest';
import { createKey } from '../fixtures-catalog.js';
import { expectExactOutput, useServer } from '../fixtures.js';
import { ok, trpcRaw } from '../fixtures-trpc.js';

const env = useServer();

/** RFC 7636 Appendix B. */
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

const app = () => `https://app-${randomUUID().slice(0, 8)}.example`;

async function post(path: string, body: unknown, key: string | null) {
  const res = await env.server.request(`/api/v1${path}`, { method: 'POST', key, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: res.status, body: (await res.json()) as unknown };
}

function expectError(answer: { status: number; body: unknown }, status: number) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(ErrorEnvelopeSchema.parse(answer.body).error.code).toBe(status);
}

async function code(body: Record<string, unknown>, key = env.server.managementKey): Promise<{ id: string; app_id: number }> {
  const answer = await post('/auth/keys/code', body, key);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return expectExactOutput(CreateAuthorizationCodeOutputSchema, answer.body).data;
}

async function exchange(body: Record<string, unknown>, key: string | null = null) {
  return post('/auth/keys', body, key);
}

async function keyOf(secret: string) {
  const res = await env.server.request('/api/v1/key', { key: secret });
  expect(res.status).toBe(200);
  return GetKeyOutputSchema.parse(await res.json()).data;
}

describe('POST /auth/keys/code and POST /auth/keys', () => {
  it('S256: the code becomes the key it describes, once, owned by the user of the key that made it', async () => {
    const callback = `${app()}/callback`;
    const made = await code({
      callback_url: callback,
      code_challenge: RFC_CHALLENGE,
      code_challenge_method: 'S256',
      key_label: 'My app',
      limit: 12.5,
      usage_limit_type: 'weekly',
      expires_at: '2099-01-01T00:00:00.000Z',
    });
    expect(made.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The same application (origin) keeps its number; the code is stored only as a hash.
    expect((await code({ callback_url: `${new URL(callback).origin}/other` })).app_id).toBe(made.app_id);
    expect(await env.server.db.authorizationCode.count({ where: { code_hash: made.id } })).toBe(0);

    // An Authorization header is ignored: here, an unknown key.
    const answer = await exchange({ code: made.id, code_verifier: RFC_VERIFIER, code_challenge_method: 'S256' }, 'sk-sy-v1-unknown');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const exchanged = expectExactOutput(ExchangedKeySchema, answer.body);
    const owner = (await keyOf(env.server.managementKey)).creator_user_id;
    expect(exchanged.user_id).toBe(owner);
    const key = await keyOf(exchanged.key);
    expect(key).toMatchObject({
      label: expect.stringMatching(/^sk-sy-v1-/),
      limit: 12.5,
      limit_reset: 'weekly',
      is_management_key: false,
      creator_user_id: owner,
    });
    expect(key.expires_at).toBe('2099-01-01T00:00:00.000Z');
    // Like a key made by POST /keys: listed, named as asked.
    const listed = ListKeysOutputSchema.parse((await (await env.server.request('/api/v1/keys', { key: env.server.managementKey })).json()) as unknown);
    expect(listed.data.find((k) => k.hash === createHash('sha256').update(exchanged.key).digest('hex'))?.name).toBe('My app');

    // Once.
    expectError(await exchange({ code: made.id, code_verifier: RFC_VERIFIER }), 400);
  });

  it('plain challenges, and codes without one; the default name is the application host', async () => {
    const verifier = 'a'.repeat(20) + '-._~' + 'B'.repeat(20);
    const plain = await code({ callback_url: 'http://localhost:8123/cb', code_challenge: verifier });
    expectError(await exchange({ code: plain.id, code_verifier: `${verifier}x` }), 403);
    const ok1 = await exchange({ code: plain.id, code_verifier: verifier });
    expect(ok1.status).toBe(200);
    expect((await keyOf(ExchangedKeySchema.parse(ok1.body).key)).label).toMatch(/^sk-sy-v1-/);

    const bare = await code({ callback_url: 'http://127.0.0.1:9/cb', key_label: 'Local tool' });
    const ok2 = await exchange({ code: bare.id });
    expect(ok2.status).toBe(200);
    const host = await code({ callback_url: 'https://tool.example:8443/x' });
    const named = ExchangedKeySchema.parse((await exchange({ code: host.id })).body);
    const listed = ListKeysOutputSchema.parse((await (await env.server.request('/api/v1/keys', { key: env.server.managementKey })).json()) as unknown);
    expect(listed.data.find((k) => k.hash === createHash('sha256').update(named.key).digest('hex'))?.name).toBe('tool.example:8443');
  });

  it('D10: 400 for a bad callback URL, challenge, method or expiry; 409 while an unused code for the same app and challenge is pending', async () => {
    for (const body of [
      { callback_url: 'http://app.example/cb' },
      { callback_url: 'ftp://app.example/cb' },
      { callback_url: 'not a url' },
      { callback_url: 'https://user:pw@app.example/cb' },
      { callback_url: app(), code_challenge_method: 'S256' },
      { callback_url: app(), code_challenge: 'short' },
      { callback_url: app(), code_challenge: 'a'.repeat(50), code_challenge_method: 'S256' },
      { callback_url: app(), code_challenge: RFC_CHALLENGE, code_challenge_method: 'S512' },
      { callback_url: app(), expires_at: '2099-01-01T00:00Z' },
      { callback_url: app(), expires_at: '2001-01-01T00:00:00Z' },
      { callback_url: app(), usage_limit_type: 'yearly' },
      { callback_url: app(), workspace_id: 'no-such-workspace' },
      { callback_url: app(), limit: -1 },
    ]) {
      expectError(await post('/auth/keys/code', body, env.server.managementKey), 400);
    }
    const callback = app();
    await code({ callback_url: callback, code_challenge: RFC_CHALLENGE, code_challenge_method: 'S256' });
    expectError(
      await post(
        '/auth/keys/code',
        { callback_url: `${callback}/again`, code_challenge: RFC_CHALLENGE, code_challenge_method: 'S256' },
        env.server.managementKey,
      ),
      409,
    );
    // Another challenge for the same application is another code.
    await code({ callback_url: callback });
  });

  it('D11: 400 for an unknown or expired code and a missing or malformed verifier; 403 for a wrong one, which leaves the code usable', async () => {
    expectError(await exchange({ code: 'no-such-code' }), 400);
    expectError(await exchange({}), 400);
    const made = await code({ callback_url: app(), code_challenge: RFC_CHALLENGE, code_challenge_method: 'S256' });
    expectError(await exchange({ code: made.id }), 400);
    expectError(await exchange({ code: made.id, code_verifier: 'short' }), 400);
    expectError(await exchange({ code: made.id, code_verifier: RFC_VERIFIER, code_challenge_method: 'plain' }), 400);
    const wrong = await exchange({ code: made.id, code_verifier: RFC_VERIFIER.replace('d', 'e') });
    expectError(wrong, 403);
    expect(ErrorEnvelopeSchema.parse(wrong.body).error.metadata).toMatchObject({ reason: 'the code_verifier does not answer the code_challenge' });
    expect((await exchange({ code: made.id, code_verifier: RFC_VERIFIER })).status).toBe(200);

    const expired = await code({ callback_url: app() });
    await env.server.db.authorizationCode.updateMany({ where: { app_id: expired.app_id }, data: { expires_at: new Date(Date.now() - 1000) } });
    expectError(await exchange({ code: expired.id }), 400);
  });

  it('two concurrent exchanges of one code make one key', async () => {
    for (let round = 0; round < 5; round++) {
      const made = await code({ callback_url: app() });
      const before = await env.server.db.apiKey.count();
      const answers = await Promise.all(Array.from({ length: 8 }, () => exchange({ code: made.id })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
      expect(await env.server.db.apiKey.count()).toBe(before + 1);
    }
  });

  it('a code whose maker was disabled since is refused (403), and mints nothing', async () => {
    const maker = await createKey(env.server, { name: 'maker' });
    const made = await code({ callback_url: app() }, maker.key);
    await ok(env.server, 'keys.update', { hash: maker.hash, disabled: true });
    const before = await env.server.db.apiKey.count();
    expectError(await exchange({ code: made.id }), 403);
    expect(await env.server.db.apiKey.count()).toBe(before);
  });
});

describe('who may make codes', () => {
  it('401 without a key; 403 for a platform key', async () => {
    expectError(await post('/auth/keys/code', { callback_url: app() }, null), 401);
    expectError(await post('/auth/keys/code', { callback_url: app() }, env.server.platformKey), 403);
  });

  it('a regular key: its own workspace only, no more than its remaining limit, and no resetting limit while it has one', async () => {
    const workspace = await ok(env.server, 'workspaces.create', { slug: `pkce-${randomUUID().slice(0, 8)}`, name: 'PKCE' });
    const regular = await createKey(env.server, { name: 'limited', limit: 10, limit_reset: 'monthly' });
    expectError(await post('/auth/keys/code', { callback_url: app(), workspace_id: workspace.data.id }, regular.key), 403);
    expectError(await post('/auth/keys/code', { callback_url: app(), limit: 10.01 }, regular.key), 403);
    expectError(await post('/auth/keys/code', { callback_url: app(), limit: 5, usage_limit_type: 'daily' }, regular.key), 403);
    // Without a limit, the new key gets what the calling key has left (10 USD, nothing spent).
    const granted = ExchangedKeySchema.parse((await exchange({ code: (await code({ callback_url: app() }, regular.key)).id })).body);
    expect(await keyOf(granted.key)).toMatchObject({ limit: 10, limit_reset: null, is_management_key: false });
    const smaller = ExchangedKeySchema.parse((await exchange({ code: (await code({ callback_url: app(), limit: 2 }, regular.key)).id })).body);
    expect((await keyOf(smaller.key)).limit).toBe(2);

    // A management key names any workspace of its organization; the key is made there.
    const other = await code({ callback_url: app(), workspace_id: workspace.data.slug, limit: 50, usage_limit_type: 'daily' });
    const made = ExchangedKeySchema.parse((await exchange({ code: other.id })).body);
    expect(await keyOf(made.key)).toMatchObject({ limit: 50, limit_reset: 'daily' });
    const hash = createHash('sha256').update(made.key).digest('hex');
    expect((await env.server.db.apiKey.findUniqueOrThrow({ where: { hash } })).workspace_id).toBe(workspace.data.id);
  });

  it("another organization cannot name this one's workspace, and its codes make its own keys", async () => {
    const theirs = await post('/auth/keys/code', { callback_url: app(), workspace_id: env.server.workspaceId }, env.other.managementKey);
    expectError(theirs, 400);
    const made = await code({ callback_url: app() }, env.other.managementKey);
    const exchanged = ExchangedKeySchema.parse((await exchange({ code: made.id })).body);
    const hash = createHash('sha256').update(exchanged.key).digest('hex');
    expect((await env.server.db.apiKey.findUniqueOrThrow({ where: { hash } })).organization_id).toBe(env.other.organizationId);
    expect(exchanged.user_id).toBe(env.other.userId);
  });
});

describe('PKCE edges', () => {
  it('http callbacks: localhost and 127.0.0.1 as written only; other spellings of loopback are 400 with a reason', async () => {
    for (const ok of ['http://localhost:8123/cb', 'http://127.0.0.1:9/cb', 'http://LOCALHOST/cb']) {
      expect((await post('/auth/keys/code', { callback_url: ok }, env.server.managementKey)).status, ok).toBe(200);
    }
    for (const bad of ['http://127.1/', 'http://0x7f000001/', 'http://2130706433/', 'http://[::1]/', 'http://127.0.0.1.nip.io/', 'http://example.com/']) {
      const answer = await post('/auth/keys/code', { callback_url: bad }, env.server.managementKey);
      expectError(answer, 400);
      expect(ErrorEnvelopeSchema.parse(answer.body).error.metadata, bad).toMatchObject({
        parameter: 'callback_url',
        reason: expect.stringContaining('localhost or 127.0.0.1'),
      });
    }
  });

  it("a wrong verifier gets the contract's 403 text, and the reason says the verifier does not answer the challenge (REST and tRPC)", async () => {
    const made = await code({ callback_url: app(), code_challenge: RFC_CHALLENGE, code_challenge_method: 'S256' });
    const wrong = await exchange({ code: made.id, code_verifier: RFC_VERIFIER.replace('d', 'e') });
    expectError(wrong, 403);
    const { error } = ErrorEnvelopeSchema.parse(wrong.body);
    expect(error.message).toBe('Only management keys can perform this operation');
    expect(error.metadata).toMatchObject({ reason: 'the code_verifier does not answer the code_challenge' });
    const viaTrpc = await trpcRaw(env.server, 'auth.exchangeCode', { code: made.id, code_verifier: RFC_VERIFIER.replace('d', 'e') }, { key: null });
    expect(viaTrpc.status).toBe(403);
    expect(JSON.stringify(viaTrpc.error)).toContain('the code_verifier does not answer the code_challenge');
  });

  it('settings.updatePkce: with pkce_require_s256 on, plain and a missing challenge are 400, made or exchanged; S256 works', async () => {
    const shown = await ok(env.server, 'settings.pkce', undefined, { query: true });
    expect(shown).toEqual({ data: { pkce_require_s256: false, updated_at: null } });
    // Made before the setting: without a challenge, and with plain.
    const before = await code({ callback_url: app() });
    const plainBefore = await code({ callback_url: app(), code_challenge: RFC_VERIFIER });
    const set = await ok(env.server, 'settings.updatePkce', { pkce_require_s256: true });
    expect(set.data.pkce_require_s256).toBe(true);
    try {
      for (const body of [{}, { code_challenge: RFC_VERIFIER }, { code_challenge: RFC_VERIFIER, code_challenge_method: 'plain' }]) {
        const answer = await post('/auth/keys/code', { callback_url: app(), ...body }, env.server.managementKey);
        expectError(answer, 400);
        expect(ErrorEnvelopeSchema.parse(answer.body).error.metadata).toMatchObject({ reason: expect.stringContaining('pkce_require_s256') });
      }
      expectError(await exchange({ code: before.id }), 400);
      expectError(await exchange({ code: plainBefore.id, code_verifier: RFC_VERIFIER }), 400);
      const s256 = await code({ callback_url: app(), code_challenge: RFC_CHALLENGE, code_challenge_method: 'S256' });
      expect((await exchange({ code: s256.id, code_verifier: RFC_VERIFIER })).status).toBe(200);
      // Another organization keeps its own (default) rule.
      expect((await post('/auth/keys/code', { callback_url: app() }, env.other.managementKey)).status).toBe(200);
    } finally {
      await ok(env.server, 'settings.updatePkce', { pkce_require_s256: false });
    }
  });

  it('settings.pkce and settings.updatePkce: 401 without a key, 403 for a regular key, a platform key, and a key without the keys scope', async () => {
    expect((await trpcRaw(env.server, 'settings.pkce', undefined, { key: null, query: true })).status).toBe(401);
    expect((await trpcRaw(env.server, 'settings.updatePkce', { pkce_require_s256: true }, { key: null })).status).toBe(401);
    const regular = await createKey(env.server, { name: 'regular' });
    const scoped = await createKey(env.server, { name: 'scoped', is_management_key: true, scopes: ['audit:read'] });
    for (const key of [regular.key, env.server.platformKey, scoped.key]) {
      expect((await trpcRaw(env.server, 'settings.pkce', undefined, { key, query: true })).status).toBe(403);
      expect((await trpcRaw(env.server, 'settings.updatePkce', { pkce_require_s256: true }, { key })).status).toBe(403);
    }
    const reader = await createKey(env.server, { name: 'reader', is_management_key: true, scopes: ['keys:read'] });
    expect((await trpcRaw(env.server, 'settings.pkce', undefined, { key: reader.key, query: true })).status).toBe(200);
    expect((await trpcRaw(env.server, 'settings.updatePkce', { pkce_require_s256: true }, { key: reader.key })).status).toBe(403);
    expect((await ok(env.server, 'settings.pkce', undefined, { query: true })).data.pkce_require_s256).toBe(false);
  });
});
