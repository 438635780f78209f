// Workload identity (platform-api.md D12, D13): federation policies, the token
// exchange against a local identity provider (inline keys, and a JWKS served on loopback), access
// tokens as bearers with exactly their key's rights, Switchyard's signing keys (rotation, publication,
// sealing), and every refusal with its OAuth error.
import { randomBytes, randomUUID } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, generateKeyPair, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FederationPolicySchema, JwksOutputSchema, TokenAnswerSchema } from '@switchyard/schema';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { TOKEN_AUDIENCE, TOKEN_ISSUER } from '../../src/modules/auth/access-tokens.js';
import { ACCESS_TOKEN_TYPE } from '../../src/modules/auth/token-exchange.js';
import { keyIdOf } from '../../src/lib/secret-box.js';
import { createOrganization, type OrgFixture } from '../fixtures.js';
import { AUDIENCE, exchange, exchangeForm, identityProvider, ISSUER, serveJwks, type IdentityProvider } from '../fixtures-identity.js';
import { inProcessReplica } from '../fixtures-replica.js';
import { ok, trpc } from '../fixtures-trpc.js';
import { inject } from 'vitest';

const SECRET_KEY = randomBytes(32).toString('hex');
const DAY_MS = 86_400_000;

let server: TestServer;
let other: OrgFixture;
let idp: IdentityProvider;
let jwksServer: Awaited<ReturnType<typeof serveJwks>>;
let regular: { key: string; hash: string };

beforeAll(async () => {
  idp = await identityProvider();
  jwksServer = await serveJwks(idp);
  server = await startTestServer({
    adminUrl: inject('pgAdminUrl'),
    template: inject('pgTemplate'),
    // The local JWKS server is on loopback: reached only because the operator allows its host. Nothing
    // is kept in memory (CACHE_TTL_MS 0), so that the signing keys follow the server's driven clock.
    env: { UPSTREAM_ALLOWED_HOSTS: jwksServer.host, SWITCHYARD_SECRET_KEY: SECRET_KEY, TOKEN_EXCHANGES_PER_MINUTE: '1000', CACHE_TTL_MS: '0' },
  });
  other = await createOrganization(server.db);
  const created = await ok(server, 'keys.create', { name: 'workload' });
  regular = { key: created.key, hash: created.data.hash };
});
afterAll(async () => {
  await server?.close();
  await jwksServer?.close();
});

const subject = () => `repo:switchyard/${randomUUID()}`;

async function policy(input: { key_hash?: string; subject?: string; jwks_url?: string } = {}) {
  const { jwks_url, ...rest } = input;
  return ok(server, 'federationPolicies.create', {
    issuer: ISSUER,
    audience: AUDIENCE,
    subject: rest.subject ?? subject(),
    key_hash: rest.key_hash ?? regular.hash,
    ...(jwks_url ? { jwks_url } : { jwks: idp.jwks as never }),
  });
}

async function oauthError(res: Response, status: number, error: string): Promise<string> {
  const body = (await res.json()) as { error: string; error_description: string };
  expect({ status: res.status, error: body.error }, body.error_description).toEqual({ status, error });
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(typeof body.error_description).toBe('string');
  return body.error_description;
}

describe('GET /oauth/jwks (D13)', () => {
  it('publishes the signing key from the first start, before any token is signed, with its four constants, without a key', async () => {
    // Read before the first exchange, as a verifier that caches the set at its start does.
    const res = await server.request('/api/v1/oauth/jwks', { key: null });
    expect(res.status).toBe(200);
    const body = JwksOutputSchema.strict().parse(await res.json());
    expect(body.keys.length).toBeGreaterThanOrEqual(1);
    const p = await policy();
    const answer = await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)));
    expect(answer.status).toBe(200);
    const token = TokenAnswerSchema.parse(await answer.json()).access_token;
    await jwtVerify(token, createLocalJWKSet(body), { issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE });
    for (const key of body.keys) expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    // Any key, or none, gets the same answer.
    const withKey = await server.request('/api/v1/oauth/jwks', { key: 'sk-sy-v1-nonsense' });
    expect(withKey.status).toBe(200);
  });
});

describe('POST /oauth/token (D12)', () => {
  it('exchanges a subject token for an access token that verifies against D13 and acts as the key', async () => {
    const p = await policy();
    const res = await exchange(server, exchangeForm(p.id, await idp.sign(p.subject), { scope: 'inference', requested_token_type: ACCESS_TOKEN_TYPE }));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const answer = TokenAnswerSchema.strict().parse(await res.json());
    expect(answer).toMatchObject({ token_type: 'Bearer', issued_token_type: ACCESS_TOKEN_TYPE, scope: 'inference' });
    expect(answer.expires_in).toBeGreaterThan(890);
    expect(answer.expires_in).toBeLessThanOrEqual(900);

    // Anyone can verify it with the published keys.
    const jwks = JwksOutputSchema.parse(await (await server.request('/api/v1/oauth/jwks', { key: null })).json());
    const { payload, protectedHeader } = await jwtVerify(answer.access_token, createLocalJWKSet(jwks), { issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE });
    expect(protectedHeader.alg).toBe('ES256');
    expect(jwks.keys.map((k) => k.kid)).toContain(protectedHeader.kid);
    expect(payload).toMatchObject({ sub: regular.hash, scope: 'inference' });

    // A bearer on /api/v1 and /trpc, as the regular key.
    const key = await server.request('/api/v1/key', { key: answer.access_token });
    expect(key.status).toBe(200);
    expect(((await key.json()) as { data: { label: string } }).data.label).toBe(
      (await ok(server, 'keys.get', { hash: regular.hash }, { query: true })).data.label,
    );
    const current = await trpc(server, 'keys.current', undefined, { key: answer.access_token, query: true });
    expect(current.status).toBe(200);
  });

  it("never beyond the subject token's expiry", async () => {
    const p = await policy();
    const exp = Math.floor(Date.now() / 1000) + 120;
    const answer = TokenAnswerSchema.parse(await (await exchange(server, exchangeForm(p.id, await idp.sign(p.subject, { exp })))).json());
    expect(answer.expires_in).toBeLessThanOrEqual(120);
    expect(answer.expires_in).toBeGreaterThan(100);
  });

  it("a token acting as a regular key has a regular key's rights only", async () => {
    const p = await policy();
    const { access_token } = TokenAnswerSchema.parse(await (await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)))).json());
    const keys = await server.request('/api/v1/keys', { key: access_token });
    expect(keys.status).toBe(403);
    expect((await trpc(server, 'federationPolicies.list', {}, { key: access_token, query: true })).status).toBe(403);
    expect((await trpc(server, 'keys.create', { name: 'escalate' }, { key: access_token })).status).toBe(403);
  });

  it("a token acting as a management key has its scope's rights (inference), not the key's management ones", async () => {
    const managementHash = (await server.db.apiKey.findFirstOrThrow({ where: { organization_id: server.organizationId, is_management_key: true } })).hash;
    const p = await policy({ key_hash: managementHash });
    const { access_token } = TokenAnswerSchema.parse(await (await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)))).json());
    // The lesser of its scope and its key (docs/scopes.md#the-ceiling): no management operation.
    expect((await server.request('/api/v1/keys', { key: access_token })).status).toBe(403);
    expect((await server.request('/api/v1/key', { key: access_token })).status).toBe(200);
    // Another organization's policy is out of its reach.
    const theirs = await ok(
      server,
      'federationPolicies.create',
      {
        issuer: ISSUER,
        audience: AUDIENCE,
        subject: subject(),
        jwks: idp.jwks as never,
        key_hash: (await server.db.apiKey.findFirstOrThrow({ where: { organization_id: other.organizationId } })).hash,
      },
      { key: other.managementKey },
    );
    expect((await trpc(server, 'federationPolicies.delete', { id: theirs.id }, { key: access_token })).status).toBe(403);
  });

  it('fetches the issuer keys from its JWKS URL under the upstream rules, and caches them', async () => {
    const p = await policy({ jwks_url: jwksServer.url });
    const before = jwksServer.fetches();
    for (let i = 0; i < 3; i++) expect((await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)))).status).toBe(200);
    expect(jwksServer.fetches() - before).toBe(1);
  });

  it('refuses a JWKS URL on a private address the operator did not allow: the policy is refused, or its keys are never fetched', async () => {
    // http to a host not allowed: refused when the policy is made.
    const http = await trpc(server, 'federationPolicies.create', {
      issuer: ISSUER,
      audience: AUDIENCE,
      subject: subject(),
      jwks_url: 'http://10.0.0.1/jwks',
      key_hash: regular.hash,
    });
    expect(http.status).toBe(400);
    // https to loopback (another port than the allowed one): made, but the exchange never reaches it.
    const p = await policy({ jwks_url: 'https://127.0.0.1:1/jwks' });
    const why = await oauthError(await exchange(server, exchangeForm(p.id, await idp.sign(p.subject))), 400, 'invalid_grant');
    expect(why).toMatch(/could not be fetched/);
  });

  it('refuses what RFC 8693 and the spec refuse, with the OAuth error body', async () => {
    const p = await policy();
    const token = await idp.sign(p.subject);
    const cases: Array<[string, number, string]> = [
      [exchangeForm(p.id, token, { grant_type: 'authorization_code' }), 400, 'unsupported_grant_type'],
      [exchangeForm(p.id, token, { subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' }), 400, 'invalid_request'],
      [exchangeForm(p.id, token, { requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' }), 400, 'invalid_request'],
      [exchangeForm(p.id, token, { scope: 'admin' }), 400, 'invalid_scope'],
      [`${exchangeForm(p.id, token)}&scope=inference&scope=inference`, 400, 'invalid_request'],
      [new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange' }).toString(), 400, 'invalid_request'],
      [exchangeForm(randomUUID(), token), 400, 'invalid_grant'],
      [exchangeForm('not-a-uuid', token), 400, 'invalid_grant'],
      [exchangeForm(p.id, 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'), 400, 'invalid_grant'],
    ];
    for (const [form, status, error] of cases) await oauthError(await exchange(server, form), status, error);
    // Not a form.
    await oauthError(await exchange(server, exchangeForm(p.id, token), { 'content-type': 'application/json' }), 400, 'invalid_request');
    // Too large.
    await oauthError(await exchange(server, exchangeForm(p.id, 'x'.repeat(70_000))), 400, 'invalid_request');
  });

  it('refuses a subject token whose signature, iss, aud, sub, exp or nbf fails the policy', async () => {
    const p = await policy();
    const now = Math.floor(Date.now() / 1000);
    const stranger = await generateKeyPair('ES256');
    const cases: Array<[string, RegExp]> = [
      [await idp.sign(p.subject, {}, stranger.privateKey), /signature/],
      [await idp.sign(p.subject, { iss: 'https://evil.example' }), /iss/],
      [await idp.sign(p.subject, { aud: 'someone-else' }), /aud/],
      [await idp.sign('repo:someone/else'), /sub/],
      [await idp.sign(p.subject, { exp: now - 60, iat: now - 120 }), /expired/],
      [await idp.sign(p.subject, { nbf: now + 600 }), /nbf/],
    ];
    for (const [token, why] of cases) expect(await oauthError(await exchange(server, exchangeForm(p.id, token)), 400, 'invalid_grant')).toMatch(why);
  });

  it("one organization's policy never yields another organization's key", async () => {
    // Creating a policy for another organization's key: 404, nothing made.
    const theirKey = (await server.db.apiKey.findFirstOrThrow({ where: { organization_id: other.organizationId } })).hash;
    const before = await server.db.federationPolicy.count({ where: { api_key: { hash: theirKey } } });
    const res = await trpc(server, 'federationPolicies.create', {
      issuer: ISSUER,
      audience: AUDIENCE,
      subject: subject(),
      jwks: idp.jwks as never,
      key_hash: theirKey,
    });
    expect(res.status).toBe(404);
    expect(await server.db.federationPolicy.count({ where: { api_key: { hash: theirKey } } })).toBe(before);
    // The other organization sees none of ours.
    const theirs = await ok(server, 'federationPolicies.list', {}, { key: other.managementKey, query: true });
    expect(theirs.data.every((row) => row.key_hash !== regular.hash)).toBe(true);
    const mine = await policy();
    expect((await trpc(server, 'federationPolicies.delete', { id: mine.id }, { key: other.managementKey })).status).toBe(404);
    expect(await server.db.federationPolicy.count({ where: { id: mine.id } })).toBe(1);
  });

  it('a disabled or deleted key refuses its tokens, and mints no new one', async () => {
    const created = await ok(server, 'keys.create', { name: `revoked-${randomUUID()}` });
    const p = await policy({ key_hash: created.data.hash });
    const { access_token } = TokenAnswerSchema.parse(await (await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)))).json());
    expect((await server.request('/api/v1/key', { key: access_token })).status).toBe(200);
    await ok(server, 'keys.update', { hash: created.data.hash, disabled: true });
    expect((await server.request('/api/v1/key', { key: access_token })).status).toBe(401);
    await oauthError(await exchange(server, exchangeForm(p.id, await idp.sign(p.subject))), 400, 'invalid_grant');
    await ok(server, 'keys.update', { hash: created.data.hash, disabled: false });
    expect((await server.request('/api/v1/key', { key: access_token })).status).toBe(200);
    await ok(server, 'keys.delete', { hash: created.data.hash });
    expect((await server.request('/api/v1/key', { key: access_token })).status).toBe(401);
  });

  it("a rotation of the key's secret does not end its tokens; new exchanges act as the same key", async () => {
    const created = await ok(server, 'keys.create', { name: `rotated-${randomUUID()}` });
    const p = await policy({ key_hash: created.data.hash });
    const { access_token } = TokenAnswerSchema.parse(await (await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)))).json());
    await ok(server, 'keys.rotate', { hash: created.data.hash, grace_period_seconds: 0 });
    expect((await server.request('/api/v1/key', { key: created.key })).status).toBe(401);
    expect((await server.request('/api/v1/key', { key: access_token })).status).toBe(200);
    const again = TokenAnswerSchema.parse(await (await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)))).json());
    expect(decodeJwt(again.access_token).sub).toBe(created.data.hash);
    expect((await server.request('/api/v1/key', { key: again.access_token })).status).toBe(200);
  });

  it('an expired token, a forged one and one signed by another key are 401', async () => {
    const p = await policy();
    const { access_token } = TokenAnswerSchema.parse(await (await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)))).json());
    const [header, payload] = access_token.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), sub: 'f'.repeat(64) })).toString('base64url')}.${access_token.split('.')[2]}`;
    expect((await server.request('/api/v1/key', { key: forged })).status).toBe(401);
    // The identity provider's own token is no access token.
    expect((await server.request('/api/v1/key', { key: await idp.sign(p.subject) })).status).toBe(401);
    server.setNow(new Date(Date.now() + 901_000));
    try {
      expect((await server.request('/api/v1/key', { key: access_token })).status).toBe(401);
    } finally {
      server.setNow(null);
    }
  });
});

describe('limits and failures', () => {
  it('answers 429 temporarily_unavailable past TOKEN_EXCHANGES_PER_MINUTE, from the limiter', async () => {
    const limited = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), env: { TOKEN_EXCHANGES_PER_MINUTE: '2' } });
    try {
      const form = exchangeForm(randomUUID(), await idp.sign('x'));
      await oauthError(await exchange(limited, form), 400, 'invalid_grant');
      await oauthError(await exchange(limited, form), 400, 'invalid_grant');
      const res = await exchange(limited, form);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      await oauthError(res, 429, 'temporarily_unavailable');
    } finally {
      await limited.close();
    }
  });

  it('answers 503 temporarily_unavailable when the signing key cannot be opened, and mints nothing', async () => {
    const p = await policy();
    expect((await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)))).status).toBe(200);
    const current = await server.db.signingKey.findFirstOrThrow({ where: { retired_at: null } });
    // Sealed by a secret key this server does not hold.
    await server.db.signingKey.update({
      where: { kid: current.kid },
      data: { private_jwk: current.private_jwk.replace(/^v1\.[0-9a-f]+\./, 'v1.0000000000000000.') },
    });
    const replica = await inProcessReplica(server, { env: { SWITCHYARD_SECRET_KEY: SECRET_KEY } });
    try {
      const res = await replica.request('/api/v1/oauth/token', {
        method: 'POST',
        key: null,
        body: exchangeForm(p.id, await idp.sign(p.subject)),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      await oauthError(res, 503, 'temporarily_unavailable');
    } finally {
      await replica.close();
      await server.db.signingKey.update({ where: { kid: current.kid }, data: { private_jwk: current.private_jwk } });
    }
  });
});

describe("Switchyard's signing keys", () => {
  it('rotate after SIGNING_KEY_ROTATION_DAYS: the next key is published 15 minutes before it signs; the old one stays published until its last token has expired plus 15 minutes', async () => {
    const p = await policy();
    const t0 = Date.now();
    const at = (ms: number) => server.setNow(new Date(t0 + ms));
    const kidOf = async () => {
      const res = await exchange(server, exchangeForm(p.id, await idp.sign(p.subject, { exp: Math.floor((t0 + 40 * DAY_MS) / 1000) })));
      expect(res.status).toBe(200);
      return decodeProtectedHeader(TokenAnswerSchema.parse(await res.json()).access_token).kid!;
    };
    const published = async () => JwksOutputSchema.parse(await (await server.request('/api/v1/oauth/jwks', { key: null })).json()).keys.map((k) => k.kid);
    const AHEAD_MS = 15 * 60_000;
    try {
      at(0);
      const first = await kidOf();
      // The rotation is due: the next key is made and published, and the first still signs.
      at(31 * DAY_MS);
      expect(await kidOf()).toBe(first);
      const next = (await published()).filter((kid) => kid !== first);
      expect(next).toHaveLength(1);
      at(31 * DAY_MS + AHEAD_MS - 1_000);
      expect(await kidOf()).toBe(first);
      // Published 15 minutes: it signs, and the first is retired (still published).
      at(31 * DAY_MS + AHEAD_MS);
      const second = await kidOf();
      expect(second).toBe(next[0]);
      expect(await published()).toEqual(expect.arrayContaining([first, second]));
      // 15 minutes of tokens, the cache time and 15 minutes more after its retirement: gone.
      at(31 * DAY_MS + AHEAD_MS + 31 * 60_000 + 2_000);
      expect(await published()).toEqual([second]);
    } finally {
      server.setNow(null);
    }
  });

  it("an access token never outlives its key: expires_in stops at the key's expiry", async () => {
    const expiring = await ok(server, 'keys.create', { name: `expiring-${randomUUID()}`, expires_at: new Date(Date.now() + 120_000).toISOString() });
    const p = await policy({ key_hash: expiring.data.hash });
    const res = await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)));
    expect(res.status).toBe(200);
    const answer = TokenAnswerSchema.parse(await res.json());
    expect(answer.expires_in).toBeLessThanOrEqual(120);
    expect(answer.expires_in).toBeGreaterThan(60);
  });

  it('are sealed at rest, and one replica verifies the tokens another signed', async () => {
    const row = await server.db.signingKey.findFirstOrThrow({ where: { retired_at: null } });
    expect(row.private_jwk).toMatch(/^v1\./);
    expect(row.private_jwk).not.toContain('"d"');
    const replica = await inProcessReplica(server, { env: { SWITCHYARD_SECRET_KEY: SECRET_KEY } });
    try {
      const p = await policy();
      const { access_token } = TokenAnswerSchema.parse(await (await exchange(server, exchangeForm(p.id, await idp.sign(p.subject)))).json());
      expect((await replica.request('/api/v1/key', { key: access_token })).status).toBe(200);
    } finally {
      await replica.close();
    }
  });
});

describe('a SWITCHYARD_SECRET_KEY rotation', () => {
  it('a server started with the new key first reseals the signing keys with it, and signs with them', async () => {
    const before = await server.db.signingKey.findMany();
    expect(before.length).toBeGreaterThan(0);
    const rotated = randomBytes(32).toString('hex');
    const replica = await inProcessReplica(server, { env: { SWITCHYARD_SECRET_KEY: `${rotated},${SECRET_KEY}` } });
    try {
      const current = keyIdOf(Buffer.from(rotated, 'hex'));
      for (const row of await server.db.signingKey.findMany()) expect(row.private_jwk.startsWith(`v1.${current}.`), row.kid).toBe(true);
      const p = await policy();
      const res = await replica.request('/api/v1/oauth/token', {
        method: 'POST',
        key: null,
        body: exchangeForm(p.id, await idp.sign(p.subject)),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(res.status).toBe(200);
    } finally {
      await replica.close();
      // The server under test holds only the old key: give it back what it can open.
      for (const row of before) await server.db.signingKey.updateMany({ where: { kid: row.kid }, data: { private_jwk: row.private_jwk } });
    }
  });
});

describe('federationPolicies (tRPC, management keys)', () => {
  it('create, list and delete; the answer has every field', async () => {
    const p = await policy();
    FederationPolicySchema.strict().parse(p);
    expect(p).toMatchObject({ issuer: ISSUER, audience: AUDIENCE, key_hash: regular.hash, jwks_url: null });
    const listed = await ok(server, 'federationPolicies.list', { limit: 100 }, { query: true });
    expect(listed.data.map((row) => row.id)).toContain(p.id);
    expect(await ok(server, 'federationPolicies.delete', { id: p.id })).toEqual({ deleted: true });
    expect((await trpc(server, 'federationPolicies.delete', { id: p.id })).status).toBe(404);
    // A deleted policy exchanges nothing.
    await oauthError(await exchange(server, exchangeForm(p.id, await idp.sign(p.subject))), 400, 'invalid_grant');
  });

  it('refuses private keys, symmetric keys, both or neither key source, and unknown keys', async () => {
    const base = { issuer: ISSUER, audience: AUDIENCE, subject: subject(), key_hash: regular.hash };
    const privateJwk = { ...idp.jwks.keys[0]!, d: 'AAAA' };
    for (const input of [
      { ...base, jwks: { keys: [privateJwk] } },
      { ...base, jwks: { keys: [{ kty: 'oct', k: 'AAAA' }] } },
      { ...base, jwks: idp.jwks, jwks_url: 'https://idp.example.test/jwks' },
      base,
      { ...base, jwks_url: 'ftp://idp.example.test/jwks' },
    ]) {
      expect((await trpc(server, 'federationPolicies.create', input as never)).status, JSON.stringify(input).slice(0, 120)).toBe(400);
    }
    expect((await trpc(server, 'federationPolicies.create', { ...base, jwks: idp.jwks as never, key_hash: 'f'.repeat(64) })).status).toBe(404);
  });

  it('regular keys get 403, platform keys 403, no key 401', async () => {
    for (const [key, status] of [
      [regular.key, 403],
      [server.platformKey, 403],
      [null, 401],
    ] as const) {
      expect((await trpc(server, 'federationPolicies.list', {}, { key, query: true })).status).toBe(status);
      expect(
        (
          await trpc(
            server,
            'federationPolicies.create',
            { issuer: ISSUER, audience: AUDIENCE, subject: 's', jwks: idp.jwks as never, key_hash: regular.hash },
            { key },
          )
        ).status,
      ).toBe(status);
    }
  });
});
