// `switchyard audit widened-keys` against a real server: keys minted through codes by a limited key
// (the copied limits an upgrade leaves in place) are reported from the audit log, with their maker;
// keys made by an unlimited key are not. The scopes path is read from entries as the log writes them.
import { createHash, randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '@switchyard/api/testing';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { commands, run } from '../src/cli.js';
import { type Widened, widenedKeys } from '../src/commands/widened-keys.js';

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
    ]);
    expect(found.map((w) => [w.key, w.path, w.by])).toEqual([
      ['unscoped', 'scopes', 'scoped'],
      ['wider', 'scopes', 'scoped'],
      ['scoped', 'scopes', 'scoped'],
    ]);
    expect(found[1]!.why).toContain('audit:read');
  });
});
