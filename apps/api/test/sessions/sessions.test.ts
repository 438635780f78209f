// People's sessions (docs/sessions.md) on the real server and PostgreSQL: sign-in with a management
// key and its cookie, calls on /trpc with the cookie (the key's organization and scopes, nothing of
// another organization), CSRF on state-changing calls, the key's end ending the session, idle and
// absolute expiry (the server's fixed clock), sign-out here and everywhere, the sweep, and the
// audit entries of a session's writes.
import { randomUUID } from 'node:crypto';
import { ERROR_MESSAGES, SESSION_COOKIE, SESSION_PREFIX, type Session } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/access/key-format.js';
import { CONFIG_FIX, loadConfig } from '../../src/config.js';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { inject } from 'vitest';
import { createOrganization, until, type OrgFixture } from '../fixtures.js';
import { inProcessReplica } from '../fixtures-replica.js';
import { ok, type Requester, sessionCall } from '../fixtures-trpc.js';

const IDLE_MS = 10 * 60_000;
const MAX_AGE_MS = 60 * 60_000;

let server: TestServer;
let other: OrgFixture;
/** The server's clock, fixed, moved forward only by the tests that are about time. */
let clock = new Date('2026-12-01T10:00:00.000Z');
const advance = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
  server.setNow(clock);
};

beforeAll(async () => {
  server = await startTestServer({
    adminUrl: inject('pgAdminUrl'),
    template: inject('pgTemplate'),
    env: {
      SESSION_IDLE_TIMEOUT_MS: String(IDLE_MS),
      SESSION_MAX_AGE_MS: String(MAX_AGE_MS),
      SESSION_SWEEP_INTERVAL_MS: '200',
      // X-Forwarded-Proto is believed from the loopback proxy only: the cookie's Secure follows it.
      TRUST_PROXY: 'loopback',
    },
  });
  server.setNow(clock);
  other = await createOrganization(server.db);
});
afterAll(async () => {
  await server?.close();
});

interface SignedIn {
  cookie: string;
  csrf: string;
  session: Session;
  setCookie: string;
}

async function signIn(key: string | null, headers: Record<string, string> = {}): Promise<Response> {
  return server.request(`${SESSION_PREFIX}/sign-in`, { method: 'POST', key, headers });
}

async function signedIn(key: string): Promise<SignedIn> {
  const res = await signIn(key);
  const text = await res.text();
  expect(res.status, text).toBe(201);
  const setCookie = res.headers.get('set-cookie')!;
  const session = (JSON.parse(text) as { data: Session }).data;
  return { cookie: setCookie.split(';')[0]!, csrf: session.csrf_token, session, setCookie };
}

/** A tRPC call made with a session cookie (no key), with the CSRF header when `csrf` is given. */
const call = (path: string, input: unknown, as: { cookie: string; csrf?: string | null }, query = false, via: Requester = server) =>
  sessionCall(via, path, input, as, query);

const current = (as: SignedIn, via: Requester = server) => call('sessions.current', undefined, as, true, via);
const newKey = async (input: { name?: string; is_management_key?: boolean; scopes?: string[]; expires_at?: string } = {}) =>
  ok(server, 'keys.create', { name: `k-${randomUUID().slice(0, 8)}`, ...input } as never);

describe('sign-in with a management key', () => {
  it('answers 201 with the session and a cookie: HttpOnly, SameSite=Strict, Path=/, Max-Age its absolute end; the token is stored only as its hash', async () => {
    const signed = await signedIn(server.managementKey);
    const owner = await server.db.apiKey.findUniqueOrThrow({ where: { hash: hashApiKey(server.managementKey) } });
    expect(signed.session).toMatchObject({
      organization_id: server.organizationId,
      user_id: owner.creator_user_id,
      method: 'key',
      key_hash: owner.hash,
      created_at: clock.toISOString(),
      idle_expires_at: new Date(clock.getTime() + IDLE_MS).toISOString(),
      expires_at: new Date(clock.getTime() + MAX_AGE_MS).toISOString(),
    });
    const attributes = signed.setCookie.split(';').map((a) => a.trim());
    const token = attributes[0]!.slice(`${SESSION_COOKIE}=`.length);
    expect(attributes[0]).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43}$`));
    expect(attributes.slice(1).sort()).toEqual(['HttpOnly', `Max-Age=${MAX_AGE_MS / 1000}`, 'Path=/', 'SameSite=Strict']);
    // Over plain http, not Secure; the CSRF token is not the cookie's token.
    expect(signed.csrf).not.toBe(token);
    const row = await server.db.session.findUniqueOrThrow({ where: { token_hash: hashApiKey(token) } });
    expect(row).toMatchObject({ id: signed.session.id, organization_id: server.organizationId, api_key_id: owner.id, key_secret_hash: owner.hash });
    expect(JSON.stringify(row)).not.toContain(token);
  });

  it('sets Secure when the request came over https through a trusted proxy (TRUST_PROXY)', async () => {
    const res = await signIn(server.managementKey, { 'x-forwarded-proto': 'https' });
    expect(res.status).toBe(201);
    expect(
      res.headers
        .get('set-cookie')!
        .split(';')
        .map((a) => a.trim()),
    ).toContain('Secure');
  });

  it('refuses a regular key (403), a platform key (403), a wrong key and no key (401), all in the envelope', async () => {
    const regular = await newKey();
    const answers = await Promise.all([signIn(regular.key), signIn(server.platformKey), signIn(`sk-sy-v1-${'0'.repeat(64)}`), signIn(null)]);
    const seen = await Promise.all(answers.map(async (res) => ({ status: res.status, cookie: res.headers.get('set-cookie'), body: await res.json() })));
    expect(seen.map((s) => s.status)).toEqual([403, 403, 401, 401]);
    for (const s of seen) {
      expect(s.cookie).toBeNull();
      expect(s.body).toMatchObject({ error: { code: s.status, message: ERROR_MESSAGES[s.status as 401 | 403] } });
    }
  });

  it("refuses a rotated key's former secret in its grace period (403): a session from it would end at once", async () => {
    const made = await newKey({ is_management_key: true });
    await ok(server, 'keys.rotate', { hash: made.data.hash, grace_period_seconds: 600 });
    const res = await signIn(made.key);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { metadata: { reason: expect.stringContaining('rotated') } } });
  });
});

describe('calls on /trpc with the session cookie', () => {
  it("act as the key's organization and person, with its scopes; a scoped key's session is refused outside them", async () => {
    const full = await signedIn(server.managementKey);
    const me = await current(full);
    expect(me.status).toBe(200);
    expect(me.data).toMatchObject({ organization_id: server.organizationId, session: { id: full.session.id, csrf_token: full.csrf } });
    const keys = await call('keys.list', {}, full, true);
    expect(keys.status).toBe(200);
    const scoped = await newKey({ is_management_key: true, scopes: ['keys:write'] });
    const narrow = await signedIn(scoped.key);
    expect((await call('keys.list', {}, narrow, true)).status).toBe(200);
    const refused = await call('guardrails.list', {}, narrow, true);
    expect(refused.status).toBe(403);
    expect(refused.error?.data.metadata?.reason).toContain('guardrails:read');
    // Nor may it make what its key may not (the ceiling): a key holding a scope it lacks.
    const made = await call('keys.create', { name: 'wider', is_management_key: true, scopes: ['guardrails:write'] }, narrow);
    expect(made.status).toBe(403);
    expect(made.error?.data.metadata?.reason).toContain('guardrails:write');
  });

  it('reaches nothing of another organization: its key is 404, its data are not listed', async () => {
    const signed = await signedIn(server.managementKey);
    const got = await call('keys.get', { hash: hashApiKey(other.managementKey) }, signed, true);
    expect(got.status).toBe(404);
    const listed = (await call('keys.list', {}, signed, true)).data as { data: { hash: string }[] };
    expect(listed.data.map((k) => k.hash)).not.toContain(hashApiKey(other.managementKey));
    // The other organization's own session sees its own key.
    const theirs = await signedIn(other.managementKey);
    expect((await call('keys.get', { hash: hashApiKey(other.managementKey) }, theirs, true)).status).toBe(200);
  });

  it('are accepted on /trpc only: the REST face reads no cookie (401); neither cookie nor key is 401; a bearer key wins over a cookie', async () => {
    const signed = await signedIn(server.managementKey);
    const rest = await server.request('/api/v1/keys', { key: null, headers: { cookie: signed.cookie } });
    expect(rest.status).toBe(401);
    expect((await call('keys.list', {}, { cookie: 'unrelated=1' }, true)).status).toBe(401);
    expect((await call('keys.list', {}, { cookie: `${SESSION_COOKIE}=${'A'.repeat(43)}` }, true)).status).toBe(401);
    // A bearer call carries no CSRF header, cookie or not.
    const regular = await newKey();
    const res = await server.request('/trpc/sessions.current', { key: regular.key, headers: { cookie: signed.cookie } });
    expect(((await res.json()) as { result: { data: { session: unknown } } }).result.data.session).toBeNull();
  });
});

describe('CSRF', () => {
  it('refuses a state-changing call without the header or with a wrong one (403, the envelope, a reason); allows it with the right one; reads need none', async () => {
    const signed = await signedIn(server.managementKey);
    const input = { name: `csrf-${randomUUID().slice(0, 8)}` };
    const without = await call('keys.create', input, { cookie: signed.cookie, csrf: null });
    expect(without.status).toBe(403);
    expect(without.error?.message).toBe(ERROR_MESSAGES[403]);
    expect(without.error?.data.metadata?.reason).toContain('X-CSRF-Token');
    const second = await signedIn(server.managementKey);
    const wrong = await call('keys.create', input, { cookie: signed.cookie, csrf: second.csrf });
    expect(wrong.status).toBe(403);
    expect(wrong.error?.data.metadata?.reason).toContain('does not match');
    // Nothing was made by the refused calls.
    expect(await server.db.apiKey.count({ where: { name: input.name } })).toBe(0);
    const made = await call('keys.create', input, signed);
    expect(made.status).toBe(200);
    expect(await server.db.apiKey.count({ where: { name: input.name } })).toBe(1);
    expect((await call('keys.list', {}, { cookie: signed.cookie, csrf: null }, true)).status).toBe(200);
    // The calls of a batch share the request's session.
    const batch = await server.request(`/trpc/keys.list,sessions.current?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: {} }))}`, {
      key: null,
      headers: { cookie: signed.cookie },
    });
    expect(batch.status).toBe(200);
    expect(((await batch.json()) as { result: { data: unknown } }[]).map((r) => r.result.data !== undefined)).toEqual([true, true]);
    // Bearer calls are unaffected.
    await ok(server, 'keys.create', { name: `bearer-${randomUUID().slice(0, 8)}` });
  });
});

describe("the key's end ends its sessions at once", () => {
  it.each([
    ['disabled', (hash: string) => ok(server, 'keys.update', { hash, disabled: true })],
    ['rotated', (hash: string) => ok(server, 'keys.rotate', { hash, grace_period_seconds: 600 })],
    ['deleted', (hash: string) => ok(server, 'keys.delete', { hash })],
  ] as const)('%s', async (_what, end) => {
    const key = await newKey({ is_management_key: true });
    const signed = await signedIn(key.key);
    expect((await current(signed)).status).toBe(200);
    await end(key.data.hash);
    const after = await current(signed);
    expect(after.status).toBe(401);
    expect(after.error?.message).toBe(ERROR_MESSAGES[401]);
  });

  it('expired', async () => {
    const key = await newKey({ is_management_key: true, expires_at: new Date(clock.getTime() + 60_000).toISOString() });
    const signed = await signedIn(key.key);
    expect((await current(signed)).status).toBe(200);
    advance(60_000);
    expect((await current(signed)).status).toBe(401);
  });
});

describe('every replica', () => {
  it("honours a sign-out at once, and the key's end as soon as it is announced (not after its cache time)", async () => {
    // The replica keeps a key for a minute: only the key's announcement makes it read the key again.
    const replica = await inProcessReplica(server, {
      env: { CACHE_TTL_MS: '60000', SESSION_IDLE_TIMEOUT_MS: String(IDLE_MS), SESSION_MAX_AGE_MS: String(MAX_AGE_MS) },
      now: () => clock,
    });
    try {
      const key = await newKey({ is_management_key: true });
      const signed = await signedIn(key.key);
      const other = await signedIn(key.key);
      expect((await current(signed, replica)).status).toBe(200);
      expect((await current(other, replica)).status).toBe(200);
      // Signed out here: refused there at the next call.
      expect((await call('sessions.signOut', undefined, other)).data).toEqual({ ended: 1 });
      expect((await current(other, replica)).status).toBe(401);
      // The key disabled here: refused there once the announcement arrives.
      await ok(server, 'keys.update', { hash: key.data.hash, disabled: true });
      await until(async () => (await current(signed, replica)).status === 401, { what: "the replica to refuse the disabled key's session" });
    } finally {
      await replica.close();
    }
  });
});

describe('expiry', () => {
  it('ends a session unused for the idle timeout; use moves its idle end forward', async () => {
    const signed = await signedIn(server.managementKey);
    advance(IDLE_MS - 1_000);
    const used = await current(signed);
    expect(used.status).toBe(200);
    expect((used.data as { session: Session }).session.idle_expires_at).toBe(new Date(clock.getTime() + IDLE_MS).toISOString());
    advance(IDLE_MS - 1_000);
    expect((await current(signed)).status).toBe(200);
    advance(IDLE_MS);
    expect((await current(signed)).status).toBe(401);
  });

  it('ends a session at its absolute end, however much it is used', async () => {
    const signed = await signedIn(server.managementKey);
    const end = Date.parse(signed.session.expires_at);
    while (clock.getTime() + IDLE_MS / 2 < end) {
      advance(IDLE_MS / 2);
      expect((await current(signed)).status).toBe(200);
    }
    advance(end - clock.getTime());
    expect((await current(signed)).status).toBe(401);
  });
});

describe('sign-out', () => {
  it("ends this session only; sign-out everywhere ends all of the person's sessions in the organization", async () => {
    const a = await signedIn(server.managementKey);
    const b = await signedIn(server.managementKey);
    const c = await signedIn(server.managementKey);
    const theirs = await signedIn(other.managementKey);
    // A sign-out is state-changing: it needs the CSRF token too.
    expect((await call('sessions.signOut', undefined, { cookie: a.cookie, csrf: null })).status).toBe(403);
    expect((await call('sessions.signOut', undefined, a)).data).toEqual({ ended: 1 });
    expect((await current(a)).status).toBe(401);
    expect((await current(b)).status).toBe(200);
    const everywhere = await call('sessions.signOutEverywhere', undefined, b);
    expect((everywhere.data as { ended: number }).ended).toBeGreaterThanOrEqual(2);
    expect((await current(b)).status).toBe(401);
    expect((await current(c)).status).toBe(401);
    // Another organization's sessions are not the person's here.
    expect((await current(theirs)).status).toBe(200);
  });

  it("everywhere, from a scoped key's session, ends only the sessions its scopes cover (the ceiling)", async () => {
    const scoped = await newKey({ is_management_key: true, scopes: ['keys:write'] });
    const narrow = await signedIn(scoped.key);
    const full = await signedIn(server.managementKey);
    expect((await call('sessions.signOutEverywhere', undefined, narrow)).status).toBe(200);
    expect((await current(narrow)).status).toBe(401);
    expect((await current(full)).status).toBe(200);
  });
});

describe('the sweep', () => {
  it('deletes signed-out and expired sessions and those of a disabled key, and keeps live ones', async () => {
    const ended = await signedIn(server.managementKey);
    await call('sessions.signOut', undefined, ended);
    const idle = await signedIn(server.managementKey);
    const key = await newKey({ is_management_key: true });
    const ofDisabled = await signedIn(key.key);
    await ok(server, 'keys.update', { hash: key.data.hash, disabled: true });
    advance(IDLE_MS);
    const live = await signedIn(server.managementKey);
    const exists = (id: string) => server.db.session.count({ where: { id } });
    const gone = async (...ids: string[]) => (await Promise.all(ids.map(exists))).every((n) => n === 0);
    await until(() => gone(ended.session.id, idle.session.id, ofDisabled.session.id), {
      what: 'the sweep to delete the ended sessions',
    });
    expect(await exists(live.session.id)).toBe(1);
  });
});

describe('the audit log', () => {
  it('names a session’s writes actor.kind session, with its person and key; the sign-in is audited as the key', async () => {
    const signed = await signedIn(server.managementKey);
    const owner = await server.db.apiKey.findUniqueOrThrow({ where: { hash: hashApiKey(server.managementKey) } });
    const signIn = await server.db.auditLog.findFirstOrThrow({ where: { action: 'sessions.signIn', target_id: signed.session.id } });
    expect(signIn).toMatchObject({ actor_kind: 'management_key', actor_key_hash: owner.hash, target_type: 'session' });
    const made = await call('keys.create', { name: `audited-${randomUUID().slice(0, 8)}` }, signed);
    expect(made.status).toBe(200);
    const hash = (made.data as { data: { hash: string } }).data.hash;
    const entries = await ok(server, 'audit.list', { action: 'keys.create', target_type: 'key', target_id: hash }, { query: true });
    expect(entries.data).toHaveLength(1);
    expect(entries.data[0]!.actor).toEqual({ kind: 'session', key_hash: owner.hash, label: owner.label, user_id: owner.creator_user_id });
  });
});

describe('configuration', () => {
  const refused = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('loadConfig accepted it');
  };

  it('takes the lifetimes and the sweep interval from SESSION_*', () => {
    const config = loadConfig({ SESSION_IDLE_TIMEOUT_MS: '60000', SESSION_MAX_AGE_MS: '120000', SESSION_SWEEP_INTERVAL_MS: '0' });
    expect([config.sessionIdleTimeoutMs, config.sessionMaxAgeMs, config.sessionSweepIntervalMs]).toEqual([60_000, 120_000, 0]);
  });

  it('refuses an idle timeout beyond the absolute lifetime, naming the variable, the rule and the fix', () => {
    const message = refused({ SESSION_MAX_AGE_MS: '60000' });
    expect(message).toContain('SESSION_IDLE_TIMEOUT_MS (unset): must be at most SESSION_MAX_AGE_MS (60000; the idle timeout is 1800000)');
    expect(message).toContain('lower it or raise SESSION_MAX_AGE_MS');
    expect(message).toContain(CONFIG_FIX);
  });

  it.each([
    ['SESSION_IDLE_TIMEOUT_MS', '10'],
    ['SESSION_MAX_AGE_MS', 'a day'],
    ['SESSION_SWEEP_INTERVAL_MS', '-1'],
  ])('refuses %s=%s', (name, value) => {
    const message = refused({ [name]: value });
    expect(message).toContain(`${name}="${value}"`);
    expect(message).toContain(CONFIG_FIX);
  });
});
