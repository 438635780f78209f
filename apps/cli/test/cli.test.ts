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
