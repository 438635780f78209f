// `switchyard audit widened-keys` against a real server: keys minted through codes by a limited key
// (the copied limits an upgrade leaves in place) are reported from the audit log, with their maker;
// keys made by an unlimited key are not. The acts the ceiling now refuses (a scoped key rotating or
// naming in a federation policy a key beyond it, a code made by a scoped key lacking a regular key's
// scopes) cannot be made today, so their entries are written into the log as the server wrote them
// before; the allowed acts beside them are made through the API. The scopes path is read from entries
// as the log writes them.
import { createHash, randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '@switchyard/api/testing';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { commands, run } from '../src/cli.js';
import { REGULAR_KEY_SCOPES, type Widened, widenedKeys } from '../src/commands/widened-keys.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });
});
afterAll(async () => {
  await server?.close();
});

async function cli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(
    args,
    {
      stdout: (t) => (stdout += `${t}\n`),
      stderr: (t) => (stderr += `${t}\n`),
      env: { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: server.managementKey },
      cwd: process.cwd(),
    },
    commands,
  );
  return { code, stdout, stderr };
}

async function post(path: string, body: unknown, key: string | null) {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function call(method: string, path: string, body: unknown, key: string) {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A management key made by the server's unscoped key: scoped when `scopes` are given. */
async function managementKey(name: string, scopes?: string[]) {
  const made = await call('POST', '/keys', { name, is_management_key: true, ...(scopes ? { scopes } : {}) }, server.managementKey);
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return { key: made.body.key as string, hash: (made.body.data as { hash: string }).hash };
}

/** An entry as the server wrote it before the ceiling refused its act: by `actor` (a management key of the organization), now. */
async function pastEntry(actorHash: string, action: string, target: { type: string; id: string }, after: Record<string, unknown>, at: Date) {
  const actor = await server.db.apiKey.findUniqueOrThrow({ where: { hash: actorHash } });
  await server.db.auditLog.create({
    data: {
      organization_id: server.organizationId,
      actor_kind: actor.is_management_key ? 'management_key' : 'regular_key',
      actor_key_hash: actor.hash,
      actor_label: actor.label,
      actor_user_id: actor.creator_user_id,
      action,
      target_type: target.type,
      target_id: target.id,
      changes: { after } as never,
      created_at: at,
    },
  });
  return actor;
}

async function mint(maker: string): Promise<string> {
  const made = (await post('/auth/keys/code', { callback_url: `https://widened-${randomUUID().slice(0, 8)}.example/cb` }, maker)) as { data: { id: string } };
  const { key } = (await post('/auth/keys', { code: made.data.id }, null)) as { key: string };
  return createHash('sha256').update(key).digest('hex');
}

describe('switchyard audit widened-keys', () => {
  it('reports the keys a limited key minted through codes, with their maker; not those of an unlimited key', async () => {
    const limited = JSON.parse((await cli(['keys', 'create', '--name', 'limited maker', '--limit', '1', '--json'])).stdout) as {
      key: string;
      data: { hash: string };
    };
    const unlimited = JSON.parse((await cli(['keys', 'create', '--name', 'unlimited maker', '--json'])).stdout) as { key: string; data: { hash: string } };
    const minted = [await mint(limited.key), await mint(limited.key)];
    const free = await mint(unlimited.key);

    const answer = await cli(['audit', 'widened-keys', '--json']);
    expect(answer).toMatchObject({ code: 0, stderr: '' });
    const { data } = JSON.parse(answer.stdout) as { data: Widened[] };
    const reported = data.filter((w) => w.path === 'minted');
    expect(reported.map((w) => w.key).sort()).toEqual([...minted].sort());
    for (const w of reported) expect(w).toMatchObject({ by: limited.data.hash, why: expect.stringContaining('limited to 1 USD') });
    expect(data.map((w) => w.key)).not.toContain(free);

    const human = await cli(['audit', 'widened-keys']);
    expect(human.stdout).toMatch(/^TIME\s+PATH\s+KEY\s+BY\s+WHY/);
    expect(human.stdout).toContain(minted[0]!.slice(0, 12));
  });

  it("knows what a regular key holds as the server does: a scoped key makes a code with exactly the regular key's scopes", async () => {
    const code = (key: string) => call('POST', '/auth/keys/code', { callback_url: `https://ceiling-${randomUUID().slice(0, 8)}.example/cb` }, key);
    expect((await code((await managementKey('every regular scope', [...REGULAR_KEY_SCOPES])).key)).status).toBe(200);
    for (const missing of REGULAR_KEY_SCOPES) {
      const without = await managementKey(
        `without ${missing}`,
        REGULAR_KEY_SCOPES.filter((s) => s !== missing),
      );
      const refused = await code(without.key);
      expect(refused.status, missing).toBe(403);
    }
  });

  it('reports rotations, federation policies and codes by a scoped key beyond it, from the log as it was written; not those within', async () => {
    const since = new Date().toISOString();
    const owner = createHash('sha256').update(server.managementKey).digest('hex');
    const attacker = await managementKey('attacker', ['keys:write']);
    const auditor = await managementKey('auditor', ['audit:read']);
    const reader = await managementKey('reader', ['keys:read']);
    const holder = await managementKey('holder', [...REGULAR_KEY_SCOPES]);
    // Within the ceiling, made today: the attacker rotates a keys:read key and itself; a key holding
    // every regular-key scope mints a key through a code (its entry names the maker).
    expect((await call('POST', `/keys/${reader.hash}/rotate`, {}, attacker.key)).status).toBe(200);
    expect((await call('POST', `/keys/${attacker.hash}/rotate`, { grace_period_seconds: 60 }, attacker.key)).status).toBe(200);
    const withinMinted = await mint(holder.key);

    // Beyond it, as the log held them before the ceiling: rotations of the organization's first key
    // (no keys.create entry) and of an audit:read key, policies naming the first key and the keys:read
    // key, and a code the attacker made, exchanged anonymously (no minted_by in those days).
    let at = Date.now() + 1000;
    const next = () => new Date(at++);
    const actor = await pastEntry(attacker.hash, 'keys.rotate', { type: 'key', id: owner }, { label: 'sk-...', grace_period_seconds: 0 }, next());
    await pastEntry(attacker.hash, 'keys.rotate', { type: 'key', id: auditor.hash }, { label: 'sk-...', grace_period_seconds: 0 }, next());
    const policy = (key_hash: string) => ({ issuer: 'https://idp.example', audience: 'switchyard', subject: 'w', key_hash });
    await pastEntry(attacker.hash, 'federationPolicies.create', { type: 'federation_policy', id: randomUUID() }, policy(owner), next());
    await pastEntry(attacker.hash, 'federationPolicies.create', { type: 'federation_policy', id: randomUUID() }, policy(reader.hash), next());
    const workspace = actor.workspace_id;
    await pastEntry(
      attacker.hash,
      'auth.createCode',
      { type: 'oauth_app', id: '1' },
      { callback_url: 'https://old.example/cb', key_name: 'old.example', workspace_id: workspace },
      next(),
    );
    const minted = 'f'.repeat(64);
    await server.db.auditLog.create({
      data: {
        organization_id: server.organizationId,
        actor_kind: 'pkce',
        actor_user_id: actor.creator_user_id,
        action: 'auth.exchangeCode',
        target_type: 'key',
        target_id: minted,
        changes: { after: { name: 'old.example', workspace_id: workspace, is_management_key: false, limit: null, scopes: [] } },
        created_at: next(),
      },
    });

    const answer = await cli(['audit', 'widened-keys', '--since', since, '--json']);
    expect(answer).toMatchObject({ code: 0, stderr: '' });
    const { data } = JSON.parse(answer.stdout) as { data: Widened[] };
    expect(data.map((w) => [w.path, w.key, w.by])).toEqual([
      ['rotated', owner, attacker.hash],
      ['rotated', auditor.hash, attacker.hash],
      ['federated', owner, attacker.hash],
      ['minted', minted, attacker.hash],
    ]);
    expect(data[0]!.why).toContain('the log does not show');
    expect(data[1]!.why).toContain('audit:read');
    expect(data[3]!.why).toContain('analytics:read');
    expect(data.map((w) => w.key)).not.toContain(withinMinted);
    expect(data.map((w) => w.key)).not.toContain(reader.hash);
  });

  it('reports SCIM tokens a scoped key made, not those an unscoped key made', async () => {
    const since = new Date().toISOString();
    const owner = createHash('sha256').update(server.managementKey).digest('hex');
    const directory = await managementKey('directory', ['scim:write', 'members:write']);
    let at = Date.now() + 1000;
    const next = () => new Date(at++);
    const byScoped = randomUUID();
    await pastEntry(directory.hash, 'scim.createToken', { type: 'scim_token', id: byScoped }, { label: 'sy-scim-v1-abc...xyz' }, next());
    await pastEntry(owner, 'scim.createToken', { type: 'scim_token', id: randomUUID() }, { label: 'sy-scim-v1-def...uvw' }, next());

    const answer = await cli(['audit', 'widened-keys', '--since', since, '--json']);
    expect(answer).toMatchObject({ code: 0, stderr: '' });
    const { data } = JSON.parse(answer.stdout) as { data: Widened[] };
    expect(data.map((w) => [w.path, w.key, w.by])).toEqual([['scim-token', byScoped, directory.hash]]);
    expect(data[0]!.why).toContain('members:write, scim:write');
  });

  it('reports keys a scoped key made or changed beyond its own scopes, and a scoped key changing its own', () => {
    const at = (n: number) => `2026-01-01T00:00:0${n}.000Z`;
    const entry = (n: number, action: string, actor: string | null, target: string, after: Record<string, unknown>) => ({
      id: String(n),
      organization_id: 'org',
      actor: { kind: 'key' as never, key_hash: actor, label: null, user_id: 'user' },
      action,
      target: { type: 'key', id: target },
      changes: { after },
      request_id: null,
      client_address: null,
      created_at: at(n),
    });
    const found = widenedKeys([
      entry(1, 'keys.create', 'owner', 'scoped', { is_management_key: true, scopes: ['keys:write'], limit: null }),
      entry(2, 'keys.create', 'scoped', 'unscoped', { is_management_key: true, scopes: [], limit: null }),
      entry(3, 'keys.create', 'scoped', 'wider', { is_management_key: true, scopes: ['audit:read', 'keys:write'], limit: null }),
      entry(4, 'keys.create', 'scoped', 'same', { is_management_key: true, scopes: ['keys:write'], limit: null }),
      entry(5, 'keys.create', 'scoped', 'regular', { is_management_key: false, scopes: [], limit: 5 }),
      entry(6, 'keys.update', 'scoped', 'scoped', { scopes: [] }),
      // keys:write grants keys:read, as the server decides.
      entry(7, 'keys.create', 'owner', 'writer', { is_management_key: true, scopes: ['keys:write'], limit: null }),
      entry(8, 'keys.create', 'writer', 'narrower', { is_management_key: true, scopes: ['keys:read'], limit: null }),
    ]);
    expect(found.map((w) => [w.key, w.path, w.by])).toEqual([
      ['unscoped', 'scopes', 'scoped'],
      ['wider', 'scopes', 'scoped'],
      ['regular', 'scopes', 'scoped'],
      ['scoped', 'scopes', 'scoped'],
    ]);
    expect(found[1]!.why).toContain('audit:read');
    // A regular key holds what every key may call in its workspace: a keys:write key lacks the rest.
    expect(found[2]!.why).toContain('analytics:read');
  });
});
