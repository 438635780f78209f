// The CLI end to end against a real server: commands run in-process through run(), and once as
// a process through its bin entry.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '@switchyard/api/testing';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createSwitchyardClient } from '@switchyard/client';
import { commands, run } from '../src/cli.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });
});
afterAll(async () => {
  await server?.close();
});

async function cli(args: string[], env: Record<string, string | undefined> = {}, cwd = process.cwd()) {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: (t) => (stdout += `${t}\n`),
    stderr: (t) => (stderr += `${t}\n`),
    env: { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: server.managementKey, ...env },
    cwd,
  });
  return { code, stdout, stderr };
}

describe('switchyard keys', () => {
  it('creates, lists, shows, limits and disables a key', async () => {
    const created = await cli(['keys', 'create', '--name', 'ci', '--limit', '5', '--limit-reset', 'monthly', '--json']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const { key, data } = JSON.parse(created.stdout) as { key: string; data: { hash: string; label: string } };
    expect(key).toMatch(/^sk-sy-v1-/);

    const list = await cli(['keys', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^HASH\s+NAME\s+LABEL/);
    expect(list.stdout).toContain(data.label);
    expect(list.stdout).not.toContain(key);

    const listed = JSON.parse((await cli(['keys', 'list', '--json', '--limit', '1'])).stdout) as { data: unknown[]; total_count: number };
    expect(listed.data).toHaveLength(1);
    expect(listed.total_count).toBeGreaterThanOrEqual(2);

    const shown = await cli(['keys', 'show', data.hash]);
    expect(shown.stdout).toMatch(/name\s+ci/);

    const limited = await cli(['keys', 'set-limit', data.hash, '--limit', '9', '--json']);
    expect(JSON.parse(limited.stdout)).toMatchObject({ limit: 9, limit_reset: 'monthly' });
    expect(JSON.parse((await cli(['keys', 'set-limit', data.hash, '--limit', 'none', '--json'])).stdout)).toMatchObject({ limit: null });

    expect((await server.request('/api/v1/key', { key })).status).toBe(200);
    expect((await cli(['keys', 'disable', data.hash])).code).toBe(0);
    expect((await server.request('/api/v1/key', { key })).status).toBe(401);
  });

  it('takes global options before the command too', async () => {
    const res = await cli(['--json', '--url', server.url, 'keys', 'list', '--limit', '1'], { SWITCHYARD_URL: 'http://127.0.0.1:1' });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toHaveProperty('total_count');
  });

  it('reads the key from DATA_DIR/admin-key when neither --key nor SWITCHYARD_API_KEY is set', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-'));
    try {
      await fs.mkdir(path.join(dir, '.data'));
      await fs.writeFile(path.join(dir, '.data', 'admin-key'), `${server.managementKey}\n`);
      expect((await cli(['keys', 'list'], { SWITCHYARD_API_KEY: undefined }, dir)).code).toBe(0);
      expect((await cli(['keys', 'list'], { SWITCHYARD_API_KEY: undefined }, os.tmpdir())).code).toBe(2);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('switchyard administration commands', () => {
  const json = async (args: string[], env: Record<string, string | undefined> = {}) => {
    const res = await cli([...args, '--json'], env);
    expect(res, res.stderr).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(res.stdout);
  };

  it('creates a workspace, adds an organization member and lists its members', async () => {
    const ws = await json(['workspaces', 'create', '--slug', 'cli-team', '--name', 'CLI team']);
    expect(ws).toMatchObject({ slug: 'cli-team', is_default: false });
    expect((await json(['workspaces', 'list'])).data.map((w: { slug: string }) => w.slug)).toContain('cli-team');
    const admin = createSwitchyardClient({ url: server.url, apiKey: server.managementKey });
    const member = await admin.organization.createMember.mutate({ email: 'cli-member@example.com', first_name: 'Cli', last_name: 'Member' });
    const userId = member.id;
    const added = await json(['workspaces', 'add-members', 'cli-team', userId]);
    expect(added).toMatchObject({ added_count: 1 });
    expect((await json(['workspaces', 'members', 'cli-team'])).data.map((m: { user_id: string }) => m.user_id)).toEqual([userId]);
    expect((await cli(['workspaces', 'add-members', 'cli-team'])).code).toBe(2);
  });

  it('sets and lists budgets; a budget above a wider one is refused with the 400', async () => {
    await json(['budgets', 'set', 'default', 'monthly', '--limit', '100']);
    await json(['budgets', 'set', 'default', 'daily', '--limit', '10']);
    const listed = await json(['budgets', 'list', 'default']);
    expect(listed.data.map((b: { reset_interval: string; limit_usd: number }) => [b.reset_interval, b.limit_usd])).toEqual(
      expect.arrayContaining([['monthly', 100], ['daily', 10]]),
    );
    const refused = await cli(['budgets', 'set', 'default', 'weekly', '--limit', '500']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('400 Invalid request parameters');
    expect((await cli(['budgets', 'set', 'default', 'hourly', '--limit', '1'])).code).toBe(2);
  });

  it('creates a guardrail and assigns a key and a member to it', async () => {
    const guardrail = await json(['guardrails', 'create', '--name', 'no-preview', '--ignored-models', 'openai/gpt-preview', '--limit', '5', '--limit-reset', 'daily']);
    expect(guardrail).toMatchObject({ name: 'no-preview', ignored_models: ['openai/gpt-preview'], reset_interval: 'daily' });
    const key = await json(['keys', 'create', '--name', 'guarded']);
    const owner = (await json(['keys', 'list'])).data.find((k: { is_management_key: boolean }) => k.is_management_key).creator_user_id;
    const assigned = await json(['guardrails', 'assign', guardrail.id, '--keys', key.data.hash, '--members', owner]);
    expect(assigned).toMatchObject({ keys: { assigned_count: 1 }, members: { assigned_count: 1 } });
  });

  it('adds and rotates a BYOK credential without ever printing the secret', async () => {
    const secret = 'sk-provider-0123456789abcdef';
    const res = await cli(['byok', 'add', '--provider', 'openai', '--name', 'prod'], { SWITCHYARD_PROVIDER_KEY: secret });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('sk-...cdef');
    expect(res.stdout).not.toContain(secret);
    const id = (res.stdout.match(/^id\s+(\S+)/m) ?? [])[1]!;
    const rotated = await json(['byok', 'rotate', id, '--provider-key', 'sk-provider-rotated-9999']);
    expect(rotated.label).toBe('sk...9999'); // 24 characters: at most 6 shown
  });

  it('imports the demo catalog and shows a recorded generation', async () => {
    const catalog = fileURLToPath(new URL('../../../demo/catalog.json', import.meta.url));
    const imported = await json(['models', 'import', catalog]);
    expect(imported.models).toBeGreaterThanOrEqual(25);
    expect((await cli(['models', 'import', '/nonexistent.json'])).code).toBe(2);

    const keys = await json(['keys', 'list']);
    const hash = keys.data.find((k: { is_management_key: boolean }) => k.is_management_key).hash;
    await createSwitchyardClient({ url: server.url, apiKey: server.managementKey }).generations.record.mutate({
      id: 'gen-cli-1',
      api_key_hash: hash,
      model: 'openai/gpt-4o',
      content: { input: { messages: [{ role: 'user', content: 'hi' }] }, output: { completion: 'hello' } },
    });
    const shown = await json(['generations', 'show', 'gen-cli-1', '--content']);
    expect(shown).toMatchObject({ data: { id: 'gen-cli-1', model: 'openai/gpt-4o' }, content: { output: { completion: 'hello' } } });
    expect((await cli(['generations', 'show', 'gen-missing'])).stderr).toContain('404 Resource not found');
  });
});

describe('help and errors', () => {
  it.each(commands.map((c) => c.path.join(' ')))('%s --help prints its usage', async (name) => {
    const res = await cli([...name.split(' '), '--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Usage: switchyard ${name}`);
    expect(res.stdout).toContain('--json');
  });

  it('lists the commands with no arguments, and of a group', async () => {
    expect((await cli([])).stdout).toContain('keys create');
    expect((await cli(['keys', '--help'])).stdout).toContain('keys set-limit');
  });

  it('exits 2 with usage on stderr for a mistake in the call', async () => {
    for (const args of [['nope'], ['keys', 'create'], ['keys', 'create', '--name', 'x', '--bogus'], ['keys', 'set-limit', 'abc', '--limit', 'lots']]) {
      const res = await cli(args);
      expect(res.code).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(/^switchyard: /);
    }
  });

  it("exits 1 with the server's status and message on stderr", async () => {
    const regular = JSON.parse((await cli(['keys', 'create', '--name', 'regular', '--json'])).stdout) as { key: string };
    const res = await cli(['keys', 'list'], { SWITCHYARD_API_KEY: regular.key });
    expect(res).toMatchObject({ code: 1, stdout: '' });
    expect(res.stderr).toContain('403 Only management keys can perform this operation');
    const missing = await cli(['keys', 'show', 'f'.repeat(64)]);
    expect(missing.stderr).toContain('404 Resource not found');
    const down = await cli(['keys', 'list'], { SWITCHYARD_URL: 'http://127.0.0.1:1' });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('cannot reach http://127.0.0.1:1');
  });

  it('runs as a process through its bin entry', async () => {
    const cliDir = fileURLToPath(new URL('..', import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=@switchyard/source', '--import', 'tsx', 'src/main.ts', 'keys', 'list', '--json', '--limit', '1'],
      { cwd: cliDir, env: { ...process.env, SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: server.managementKey } },
    );
    expect(JSON.parse(stdout)).toHaveProperty('data');
    const failed = await promisify(execFile)(process.execPath, ['--conditions=@switchyard/source', '--import', 'tsx', 'src/main.ts', 'nope'], {
      cwd: cliDir,
    }).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 2 });
  });
});
