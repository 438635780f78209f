// demo/typed-client.mjs as the README runs it (node, from a directory holding demo.json) against a
// real server: it finds the server through PORT as the CLI does, reports the members the server
// added (none on a second run), and says in one line, without a stack trace, when there is no
// server or no demo.json.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inheritedEnv, startTestServer, type TestServer } from '@switchyard/api/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { run } from '../src/cli.js';

const script = fileURLToPath(new URL('../../../demo/typed-client.mjs', import.meta.url));

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-typed-client-'));
});
afterAll(async () => {
  await server?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

/** The script under node, in `cwd`, with only PATH, HOME, the run's temporary settings (inheritedEnv) and `env`. */
function typedClient(env: Record<string, string>, cwd = dir): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script], { cwd, env: { PATH: process.env.PATH ?? '', HOME: dir, ...inheritedEnv(), ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('demo/typed-client.mjs', () => {
  it('calls the server at PORT, and reports the members the server added: all asked for, then none', async () => {
    let json = '';
    const code = await run(['demo', '--json'], {
      stdout: (t) => (json += `${t}\n`),
      stderr: () => undefined,
      env: { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: server.managementKey, SWITCHYARD_PLATFORM_KEY: server.platformKey },
      cwd: dir,
    });
    expect(code).toBe(0);
    await fs.writeFile(path.join(dir, 'demo.json'), json);
    const demo = JSON.parse(json) as { workspace_slug: string; user_ids_not_in_workspace: string[] };
    const asked = demo.user_ids_not_in_workspace.length;
    expect(asked).toBeGreaterThan(0);

    const port = new URL(server.url).port;
    const first = await typedClient({ PORT: port });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^key sk-sy-v1-.{3}\.\.\..{3}: [\d.]+ USD spent, [\d.]+ today\ngeneration .+: .+, [\d.]+ USD\n/);
    expect(first.stdout).toContain(`added ${asked} member(s) to ${demo.workspace_slug}\n`);

    // The same ids again: the server adds none, and the script says so.
    const second = await typedClient({ PORT: port });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`added 0 member(s) to ${demo.workspace_slug} (${asked} of the ${asked} asked for already in it)\n`);

    // SWITCHYARD_URL comes before PORT.
    const both = await typedClient({ SWITCHYARD_URL: server.url, PORT: '1' });
    expect(both.code).toBe(0);
  });

  it('says in one line, without a stack trace, when nothing listens there', async () => {
    await fs.writeFile(path.join(dir, 'demo.json'), JSON.stringify({ key: 'sk-sy-v1-x', management_key: 'sk-sy-v1-y', generation_id: 'g' }));
    const result = await typedClient({ PORT: '1' });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^typed-client: cannot reach http:\/\/127\.0\.0\.1:1: .+\. Is the server running \(pnpm start\)\? Set SWITCHYARD_URL, or PORT, to where it listens\n$/,
    );
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('says what to run when there is no demo.json, and what the server answered to a wrong key', async () => {
    const empty = await fs.mkdtemp(path.join(dir, 'empty-'));
    const missing = await typedClient({ SWITCHYARD_URL: server.url }, empty);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toBe(
      'typed-client: no demo.json in this directory: run `pnpm -s switchyard demo --json > demo.json` first (from the repository root)\n',
    );
    await fs.writeFile(path.join(dir, 'demo.json'), JSON.stringify({ key: `sk-sy-v1-${'0'.repeat(64)}`, generation_id: 'g' }));
    const refused = await typedClient({ SWITCHYARD_URL: server.url });
    expect(refused.code).toBe(1);
    expect(refused.stderr.startsWith(`typed-client: ${server.url} answered 401 Missing Authentication header {"reason":"unknown key"`)).toBe(true);
  });
});
