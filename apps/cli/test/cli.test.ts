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
import { commands, run, serverUrl, VERSION } from '../src/cli.js';
import type { Command } from '../src/command.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });
});
afterAll(async () => {
  await server?.close();
});

async function cli(args: string[], env: Record<string, string | undefined> = {}, cwd = process.cwd(), list = commands) {
  let stdout = '';
  let stderr = '';
  const code = await run(
    args,
    {
      stdout: (t) => (stdout += `${t}\n`),
      stderr: (t) => (stderr += `${t}\n`),
      env: { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: server.managementKey, SWITCHYARD_PLATFORM_KEY: server.platformKey, ...env },
      cwd,
    },
    list,
  );
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

    const listed = JSON.parse((await cli(['keys', 'list', '--json', '--limit', '1'])).stdout) as { data: { usage: number }[] };
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toHaveProperty('usage');
    expect(JSON.parse((await cli(['keys', 'list', '--json', '--limit', '100'])).stdout).data.length).toBeGreaterThanOrEqual(2);

    const shown = await cli(['keys', 'show', data.hash]);
    expect(shown.stdout).toMatch(/name\s+ci/);

    const limited = await cli(['keys', 'set-limit', data.hash, '--limit', '9', '--json']);
    expect(JSON.parse(limited.stdout)).toMatchObject({ data: { limit: 9, limit_reset: 'monthly' } });
    expect(JSON.parse((await cli(['keys', 'set-limit', data.hash, '--limit', 'none', '--json'])).stdout)).toMatchObject({ data: { limit: null } });

    expect((await server.request('/api/v1/key', { key })).status).toBe(200);
    expect((await cli(['keys', 'disable', data.hash])).code).toBe(0);
    expect((await server.request('/api/v1/key', { key })).status).toBe(401);
    // Disabled keys are listed with --all only.
    expect((await cli(['keys', 'list', '--limit', '100'])).stdout).not.toContain(data.label);
    expect((await cli(['keys', 'list', '--all', '--limit', '100'])).stdout).toContain(data.label);
  });

  it('deletes a key by a prefix of its hash: it authenticates no more and is listed no more', async () => {
    const made = JSON.parse((await cli(['keys', 'create', '--name', 'doomed', '--json'])).stdout) as { key: string; data: { hash: string; label: string } };
    expect((await server.request('/api/v1/key', { key: made.key })).status).toBe(200);
    const deleted = await cli(['keys', 'delete', made.data.hash.slice(0, 16), '--json']);
    expect(deleted, deleted.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(deleted.stdout)).toEqual({ deleted: true });
    expect((await server.request('/api/v1/key', { key: made.key })).status).toBe(401);
    expect((await cli(['keys', 'list', '--all', '--limit', '100'])).stdout).not.toContain(made.data.label);
    expect((await cli(['keys', 'delete', made.data.hash])).stderr).toContain('404 Resource not found');
  });

  it('rotates a key by a prefix of its hash: the same hash, a new secret; with --grace the old one works on; keys secrets lists both', async () => {
    const made = JSON.parse((await cli(['keys', 'create', '--name', 'rotated', '--json'])).stdout) as { key: string; data: { hash: string } };
    const rotated = await cli(['keys', 'rotate', made.data.hash.slice(0, 14), '--grace', '3600', '--json']);
    expect(rotated, rotated.stderr).toMatchObject({ code: 0 });
    const { data, key } = JSON.parse(rotated.stdout) as { key: string; data: { hash: string; name: string } };
    expect(data).toMatchObject({ hash: made.data.hash, name: 'rotated' });
    expect(key).not.toBe(made.key);
    for (const secret of [made.key, key]) expect((await server.request('/api/v1/key', { key: secret })).status).toBe(200);
    const secrets = JSON.parse((await cli(['keys', 'secrets', made.data.hash, '--json'])).stdout) as { data: { current: boolean }[] };
    expect(secrets.data.map((s) => s.current)).toEqual([true, false]);
    // Without --grace the secret in use stops at once; the human answer shows the new secret once.
    const again = await cli(['keys', 'rotate', made.data.hash]);
    expect(again.stdout).toMatch(/New secret \(shown once\): sk-sy-v1-[0-9a-f]{64}/);
    expect(again.stdout).toContain('The old secret works no more.');
    for (const secret of [made.key, key]) expect((await server.request('/api/v1/key', { key: secret })).status).toBe(401);
    expect((await cli(['keys', 'rotate', made.data.hash, '--grace', 'soon'])).stderr).toContain('--grace must be a number');
  });

  it('audit list: the changes just made, newest first, filtered by --action and --since; --json gives the page', async () => {
    const since = new Date().toISOString();
    const made = JSON.parse((await cli(['keys', 'create', '--name', 'audited by cli', '--json'])).stdout) as { data: { hash: string } };
    const listed = await cli(['audit', 'list', '--action', 'keys.create', '--since', since, '--json']);
    expect(listed, listed.stderr).toMatchObject({ code: 0 });
    const page = JSON.parse(listed.stdout) as { data: { action: string; target: { id: string } }[]; cursor: string | null };
    expect(page.data.map((e) => [e.action, e.target.id])).toEqual([['keys.create', made.data.hash]]);
    const human = await cli(['audit', 'list', '--since', since]);
    expect(human.stdout).toContain('keys.create');
    expect(human.stdout).toContain(made.data.hash.slice(0, 12));
    const refused = await cli(['audit', 'list', '--since', 'yesterday']);
    expect(refused.code).not.toBe(0);
  });

  it('creates a scoped management key with --scopes; an unknown scope is refused', async () => {
    const made = await cli(['keys', 'create', '--name', 'reader', '--management', '--scopes', 'keys:read, analytics:read', '--json']);
    expect(made, made.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(made.stdout)).toMatchObject({ data: { is_management_key: true, scopes: ['analytics:read', 'keys:read'] } });
    expect((await cli(['keys', 'create', '--name', 'bad', '--management', '--scopes', 'keys:admin'])).code).not.toBe(0);
  });

  it('takes a unique prefix of a hash wherever a hash is expected', async () => {
    const made = JSON.parse((await cli(['keys', 'create', '--name', 'prefixed', '--json'])).stdout) as { key: string; data: { hash: string } };
    const { hash } = made.data;
    // The 12 characters `keys list` shows, and fewer.
    const listed = await cli(['keys', 'list']);
    expect(listed.stdout).toContain(hash.slice(0, 12));
    expect(listed.stdout).not.toContain(hash.slice(0, 13));
    const shown = JSON.parse((await cli(['keys', 'show', hash.slice(0, 12), '--json'])).stdout) as { data: { hash: string; name: string } };
    expect(shown.data).toMatchObject({ hash, name: 'prefixed' });
    expect(JSON.parse((await cli(['keys', 'set-limit', hash.slice(0, 8).toUpperCase(), '--limit', '3', '--json'])).stdout)).toMatchObject({
      data: { hash, limit: 3 },
    });

    const guardrail = JSON.parse((await cli(['guardrails', 'create', '--name', 'by-prefix', '--json'])).stdout) as { id: string };
    const assigned = await cli(['guardrails', 'assign', guardrail.id, '--keys', hash.slice(0, 10), '--json']);
    expect(JSON.parse(assigned.stdout)).toMatchObject({ keys: { assigned_count: 1 } });
    const admin = createSwitchyardClient({ url: server.url, apiKey: server.managementKey });
    const assignments = await admin.guardrails.keyAssignments.query({ id: guardrail.id });
    expect(assignments.data.map((a: { key_hash: string }) => a.key_hash)).toContain(hash);

    // A prefix two keys share is refused, naming how many; so is one that matches nothing. Both are
    // counted as the lookup sees keys (every workspace, disabled keys too: `keys list` shows only
    // the default workspace's enabled ones, and other tests here leave keys elsewhere).
    const sharing = async (): Promise<[string, number] | undefined> => {
      for (const c of '0123456789abcdef') {
        const found = await admin.keys.list.query({ hash_prefix: c, include_disabled: true, limit: 100 });
        if (found.data.length > 1) return [c, found.data.length];
      }
      return undefined;
    };
    let pair = await sharing();
    for (let i = 0; pair === undefined && i < 17; i++) {
      await cli(['keys', 'create', '--name', `filler-${i}`]);
      pair = await sharing();
    }
    const [shared, count] = pair!;
    const ambiguous = await cli(['keys', 'show', shared]);
    expect(ambiguous).toMatchObject({ code: 2, stdout: '' });
    expect(ambiguous.stderr).toContain(`${count} keys' hashes start with ${shared}`);
    // A prefix no key of the organization has.
    let unknown: string | undefined;
    for (const c of '0123456789abcdef') {
      const found = await admin.keys.list.query({ hash_prefix: `${c}0`, include_disabled: true });
      if (found.data.length === 0) {
        unknown = `${c}0`;
        break;
      }
    }
    expect(unknown).toBeDefined();
    const none = await cli(['keys', 'disable', unknown!]);
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toContain(`no key's hash starts with ${unknown}`);
    expect((await cli(['keys', 'show', 'not-hex'])).code).toBe(2);
    expect((await server.request('/api/v1/key', { key: made.key })).status).toBe(200);
  });

  it('takes global options before the command too', async () => {
    const res = await cli(['--json', '--url', server.url, 'keys', 'list', '--limit', '1'], { SWITCHYARD_URL: 'http://127.0.0.1:1' });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).data).toHaveLength(1);
  });

  it("falls back to the server's PORT on this machine when neither --url nor SWITCHYARD_URL is set", async () => {
    const res = await cli(['keys', 'list', '--json', '--limit', '1'], { SWITCHYARD_URL: undefined, PORT: String(server.port) });
    expect(res, res.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(res.stdout).data).toHaveLength(1);
    // SWITCHYARD_URL wins over PORT; with neither, port 8080.
    expect((await cli(['keys', 'list'], { SWITCHYARD_URL: 'http://127.0.0.1:1', PORT: String(server.port) })).stderr).toContain(
      'cannot reach http://127.0.0.1:1',
    );
    expect(serverUrl(undefined, {})).toBe('http://127.0.0.1:8080');
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
  const json = async (args: string[], env: Record<string, string | undefined> = {}, cwd?: string) => {
    const res = await cli([...args, '--json'], env, cwd);
    expect(res, res.stderr).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(res.stdout);
  };

  it('creates a workspace, adds an organization member and lists its members', async () => {
    const ws = await json(['workspaces', 'create', '--slug', 'cli-team', '--name', 'CLI team']);
    expect(ws).toMatchObject({ data: { slug: 'cli-team', is_default: false } });
    expect((await json(['workspaces', 'list'])).data.map((w: { slug: string }) => w.slug)).toContain('cli-team');
    const admin = createSwitchyardClient({ url: server.url, apiKey: server.managementKey });
    const member = await admin.organization.createMember.mutate({ email: 'cli-member@example.com', first_name: 'Cli', last_name: 'Member' });
    const userId = member.id;
    const added = await json(['workspaces', 'add-members', 'cli-team', userId]);
    expect(added).toMatchObject({ added_count: 1 });
    expect((await json(['workspaces', 'members', 'cli-team'])).data.map((m: { user_id: string }) => m.user_id)).toEqual([userId]);
    expect((await cli(['workspaces', 'add-members', 'cli-team'])).code).toBe(2);

    expect(await json(['workspaces', 'remove-members', 'cli-team', userId])).toEqual({ removed_count: 1 });
    expect((await json(['workspaces', 'members', 'cli-team'])).data).toEqual([]);
  });

  it('takes a workspace slug wherever it takes a workspace (every --workspace option and <workspace> argument)', async () => {
    const ws = (await json(['workspaces', 'create', '--slug', 'cli-slugs', '--name', 'Slugs'])).data as { id: string };
    const covered = new Set<string>();
    const ran = (args: string[]) => {
      covered.add(args.slice(0, 2).join(' '));
      return json(args);
    };
    const key = await ran(['keys', 'create', '--name', 'slugged', '--workspace', 'cli-slugs']);
    expect(key.data.workspace_id).toBe(ws.id);
    expect((await ran(['keys', 'list', '--workspace', 'cli-slugs'])).data.map((k: { hash: string }) => k.hash)).toEqual([key.data.hash]);
    const credential = await ran(['byok', 'add', '--provider', 'openai', '--workspace', 'cli-slugs', '--provider-key', 'sk-slugged-12345678']);
    expect(credential.data.workspace_id).toBe(ws.id);
    expect((await ran(['byok', 'list', '--workspace', 'cli-slugs'])).data.map((c: { id: string }) => c.id)).toEqual([credential.data.id]);
    const guardrail = await ran(['guardrails', 'create', '--name', 'slugged', '--workspace', 'cli-slugs']);
    expect(guardrail.workspace_id).toBe(ws.id);
    expect((await ran(['guardrails', 'list', '--workspace', 'cli-slugs'])).data.map((g: { id: string }) => g.id)).toEqual([guardrail.id]);
    // A slug that names no workspace is an empty page, as an unknown UUID is.
    expect(await json(['guardrails', 'list', '--workspace', 'no-such-team'])).toEqual({ data: [], total_count: 0 });
    await ran(['budgets', 'set', 'cli-slugs', 'weekly', '--limit', '7']);
    expect((await ran(['budgets', 'list', 'cli-slugs'])).data).toMatchObject([{ workspace_id: ws.id, reset_interval: 'weekly', limit_usd: 7 }]);
    expect(await ran(['budgets', 'delete', 'cli-slugs', 'weekly'])).toEqual({ deleted: true });
    const mapping = await ran(['scim', 'map', '--group', '5b0f4a4e-7d1e-4c55-9a51-0f0c7c1a2b3c', '--workspace', 'cli-slugs', '--role', 'member']);
    expect(mapping).toMatchObject({ workspace_id: ws.id });
    const destination = await ran([
      'destinations',
      'create',
      '--type',
      'webhook',
      '--name',
      'slugged',
      '--workspace',
      'cli-slugs',
      '--config',
      '{"url":"https://hooks.example.com/slug"}',
    ]);
    expect(destination.data.workspace_id).toBe(ws.id);
    expect((await ran(['destinations', 'list', '--workspace', 'cli-slugs'])).data.map((d: { id: string }) => d.id)).toEqual([destination.data.id]);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-slug-'));
    try {
      await fs.writeFile(path.join(dir, 'a.csv'), 'a,b\n1,2\n');
      const uploaded = await ran(['files', 'upload', path.join(dir, 'a.csv'), '--workspace', 'cli-slugs']);
      const page = await fetch(`${server.url}/api/v1/files?workspace_id=${ws.id}`, { headers: { authorization: `Bearer ${server.managementKey}` } });
      expect(((await page.json()) as { data: { id: string }[] }).data.map((f) => f.id)).toEqual([uploaded.id]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
    // The workspaces commands take a slug too (the tests above and below); every other command
    // that names a workspace is covered here.
    const naming = commands
      .filter((c) => 'workspace' in (c.options ?? {}) || (c.args ?? []).includes('<workspace>'))
      .map((c) => c.path.join(' '))
      .filter((name) => !name.startsWith('workspaces '));
    expect(naming.filter((name) => !covered.has(name))).toEqual([]);
  });

  it('shows, updates and deletes a workspace', async () => {
    const ws = (await json(['workspaces', 'create', '--slug', 'cli-temp', '--name', 'Temp'])).data;
    expect((await json(['workspaces', 'show', 'cli-temp'])).data).toEqual(ws);
    const updated = await json(['workspaces', 'update', ws.id, '--name', 'Temporary', '--slug', 'cli-temporary']);
    expect(updated.data).toMatchObject({ id: ws.id, name: 'Temporary', slug: 'cli-temporary' });
    const traced = await json(['workspaces', 'update', ws.id, '--broadcast', 'on', '--io-logging', 'off']);
    expect(traced.data).toMatchObject({ is_observability_broadcast_enabled: true, is_observability_io_logging_enabled: false });
    expect((await cli(['workspaces', 'update', ws.id, '--broadcast', 'yes'])).stderr).toContain('--broadcast is on or off');
    expect(await json(['workspaces', 'delete', 'cli-temporary'])).toEqual({ deleted: true });
    expect((await cli(['workspaces', 'show', ws.id])).stderr).toContain('404 Resource not found');
    expect((await cli(['workspaces', 'delete', 'default'])).stderr).toContain('400 Invalid request parameters');
  });

  it('sets and lists budgets; a budget above a wider one is refused with the 400', async () => {
    await json(['budgets', 'set', 'default', 'monthly', '--limit', '100']);
    await json(['budgets', 'set', 'default', 'daily', '--limit', '10']);
    const listed = await json(['budgets', 'list', 'default']);
    expect(listed.data.map((b: { reset_interval: string; limit_usd: number }) => [b.reset_interval, b.limit_usd])).toEqual(
      expect.arrayContaining([
        ['monthly', 100],
        ['daily', 10],
      ]),
    );
    const refused = await cli(['budgets', 'set', 'default', 'weekly', '--limit', '500']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('400 Invalid request parameters');
    expect((await cli(['budgets', 'set', 'default', 'hourly', '--limit', '1'])).code).toBe(2);

    const withByok = await json(['budgets', 'set', 'default', 'daily', '--limit', '9', '--include-byok']);
    expect(withByok).toMatchObject({ data: { reset_interval: 'daily', limit_usd: 9 }, include_byok_in_budgets: true });
    expect(await json(['budgets', 'delete', 'default', 'daily'])).toEqual({ deleted: true });
    expect(await json(['budgets', 'delete', 'default', 'daily'])).toEqual({ deleted: true });
    expect((await json(['budgets', 'list', 'default'])).data.map((b: { reset_interval: string }) => b.reset_interval)).toEqual(['monthly']);
    expect((await cli(['budgets', 'delete', 'default', 'hourly'])).code).toBe(2);
  });

  it('settings alerts shows and sets the alert thresholds; a bad list is a usage error', async () => {
    expect(await json(['settings', 'alerts'])).toEqual({ data: { alert_thresholds: [50, 80, 100], credits_low_usd: null, updated_at: null } });
    expect(await json(['settings', 'alerts', '--thresholds', '90,25', '--credits-low-usd', '12.5'])).toMatchObject({
      data: { alert_thresholds: [25, 90], credits_low_usd: 12.5 },
    });
    expect((await cli(['settings', 'alerts'])).stdout).toMatch(/alert_thresholds\s+25,90\n.*credits_low_usd\s+12\.5/s);
    expect(await json(['settings', 'alerts', '--thresholds', 'none', '--credits-low-usd', 'off'])).toMatchObject({
      data: { alert_thresholds: [], credits_low_usd: null },
    });
    expect((await cli(['settings', 'alerts'])).stdout).toMatch(/alert_thresholds\s+none/);
    expect(await json(['settings', 'alerts', '--thresholds', 'default'])).toMatchObject({ data: { alert_thresholds: [50, 80, 100] } });
    for (const bad of [
      ['--thresholds', '50,,80'],
      ['--thresholds', '0'],
      ['--thresholds', '12.5'],
      ['--credits-low-usd', '-1'],
    ]) {
      expect((await cli(['settings', 'alerts', ...bad])).code, bad.join(' ')).toBe(2);
    }
    // The server refuses what it cannot take (a repeated percentage): 400.
    const refused = await cli(['settings', 'alerts', '--thresholds', '50,50']);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('400') });
  });

  it('settings retention shows and sets how long generation content is kept; a bad value is a usage error', async () => {
    // The settings row may exist (the alerts test writes it): the retention is still unset.
    expect(await json(['settings', 'retention'])).toMatchObject({ data: { content_retention_days: null } });
    expect((await cli(['settings', 'retention'])).stdout).toMatch(/content_retention_days\s+forever/);
    expect(await json(['settings', 'retention', '--days', '30'])).toMatchObject({ data: { content_retention_days: 30 } });
    expect((await cli(['settings', 'retention'])).stdout).toMatch(/content_retention_days\s+30\n/);
    expect(await json(['settings', 'retention', '--keep-forever'])).toMatchObject({ data: { content_retention_days: null } });
    for (const bad of [
      ['--days', '0'],
      ['--days', '3651'],
      ['--days', '1.5'],
      ['--days', 'month'],
      ['--days', '30', '--keep-forever'],
    ]) {
      expect((await cli(['settings', 'retention', ...bad])).code, bad.join(' ')).toBe(2);
    }
  });

  it('creates a guardrail and assigns a key and a member to it', async () => {
    const guardrail = await json([
      'guardrails',
      'create',
      '--name',
      'no-preview',
      '--ignored-models',
      'openai/gpt-preview',
      '--limit',
      '5',
      '--limit-reset',
      'daily',
    ]);
    expect(guardrail).toMatchObject({ name: 'no-preview', ignored_models: ['openai/gpt-preview'], reset_interval: 'daily' });
    const key = await json(['keys', 'create', '--name', 'guarded']);
    const owner = (await json(['keys', 'list'])).data.find((k: { is_management_key: boolean }) => k.is_management_key).creator_user_id;
    const assigned = await json(['guardrails', 'assign', guardrail.id, '--keys', key.data.hash, '--members', owner]);
    expect(assigned).toMatchObject({ keys: { assigned_count: 1 }, members: { assigned_count: 1 } });
  });

  it('lists, shows, unassigns and deletes guardrails; lists the assignments of the organization', async () => {
    const guardrail = await json(['guardrails', 'create', '--name', 'short-lived']);
    const key = await json(['keys', 'create', '--name', 'short-lived key']);
    await json(['guardrails', 'assign', guardrail.id, '--keys', key.data.hash.slice(0, 12)]);
    expect((await json(['guardrails', 'list', '--limit', '100'])).data.map((g: { id: string }) => g.id)).toContain(guardrail.id);
    expect(await json(['guardrails', 'show', guardrail.id])).toMatchObject({ id: guardrail.id, name: 'short-lived' });
    const keys = await json(['guardrails', 'assignments', '--limit', '100']);
    expect(keys.data).toContainEqual(expect.objectContaining({ guardrail_id: guardrail.id, key_hash: key.data.hash }));
    expect(await json(['guardrails', 'assignments', '--members'])).toHaveProperty('total_count');
    expect(await json(['guardrails', 'unassign', guardrail.id, '--keys', key.data.hash])).toMatchObject({ keys: { unassigned_count: 1 }, members: null });
    expect(await json(['guardrails', 'delete', guardrail.id])).toEqual({ deleted: true });
    const gone = await cli(['guardrails', 'show', guardrail.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('404 Resource not found');
  });

  it('lists and shows presets, and one version of a preset', async () => {
    const admin = createSwitchyardClient({ url: server.url, apiKey: server.managementKey });
    await admin.presets.create.mutate({ slug: 'cli-preset', name: 'CLI preset', config: { model: 'a/b' }, system_prompt: 'Hi.' });
    await admin.presets.createVersion.mutate({ slug: 'cli-preset', config: { model: 'a/c' } });
    expect((await json(['presets', 'list'])).data.map((p: { slug: string }) => p.slug)).toContain('cli-preset');
    expect(await json(['presets', 'show', 'cli-preset'])).toMatchObject({ slug: 'cli-preset', designated_version: { version: 2 } });
    expect(await json(['presets', 'show', 'cli-preset', '1'])).toMatchObject({ version: 1, system_prompt: 'Hi.' });
    expect((await cli(['presets', 'list'])).stdout).toMatch(/^SLUG\s+NAME\s+STATUS/);
  });

  it('makes a preset, then its next version, from request bodies (presets from-request)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-'));
    try {
      const write = async (name: string, body: unknown) => {
        await fs.writeFile(path.join(dir, name), JSON.stringify(body));
        return path.join(dir, name);
      };
      const chat = await write('chat.json', { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, stream: false });
      const made = await json(['presets', 'from-request', 'cli-from-request', '--kind', 'chat', '--file', chat]);
      expect(made).toMatchObject({
        slug: 'cli-from-request',
        name: 'cli-from-request',
        status: 'active',
        designated_version: { version: 1, config: { model: 'openai/gpt-4o', temperature: 0.2 }, system_prompt: null },
      });
      const messages = await write('messages.json', { model: 'anthropic/claude-sonnet-4', messages: null, system: 'Be brief.', max_tokens: 100 });
      const human = await cli(['presets', 'from-request', 'cli-from-request', '--kind', 'messages', '--file', messages]);
      expect(human).toMatchObject({ code: 0, stderr: '' });
      expect(human.stdout).toMatch(/version\s+2/);
      expect(human.stdout).toMatch(/system_prompt\s+Be brief\./);
      const responses = await write('responses.json', { instructions: 'Be kind.', input: 'hi', store: false });
      expect(await json(['presets', 'from-request', 'cli-from-request', '--kind', 'responses', '--file', responses])).toMatchObject({
        designated_version: { version: 3, config: {}, system_prompt: 'Be kind.' },
      });
      // The server's refusal (a chat body without messages: 400), and mistakes in the call (exit 2).
      const refused = await cli(['presets', 'from-request', 'cli-from-request', '--kind', 'chat', '--file', responses]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('400 Invalid request parameters');
      expect((await cli(['presets', 'from-request', 'cli-from-request', '--kind', 'completions', '--file', chat])).code).toBe(2);
      expect((await cli(['presets', 'from-request', 'cli-from-request', '--kind', 'chat'])).code).toBe(2);
      expect((await cli(['presets', 'from-request', 'cli-from-request', '--kind', 'chat', '--file', path.join(dir, 'missing.json')])).code).toBe(2);
      expect((await cli(['presets', 'from-request', 'cli-from-request', '--kind', 'chat', '--file', await write('list.json', [])])).code).toBe(2);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('files upload: streams a file from disk, prints the File record; the server refuses what it cannot take', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-upload-'));
    try {
      const file = path.join(dir, 'notes.md');
      await fs.writeFile(file, '# Notes\n\n- one\n- two\n');
      const uploaded = await cli(['files', 'upload', file, '--json']);
      expect(uploaded).toMatchObject({ code: 0, stderr: '' });
      const record = JSON.parse(uploaded.stdout) as { id: string; filename: string; mime_type: string; size_bytes: number; downloadable: boolean };
      expect(record).toMatchObject({ _shape: 'native', filename: 'notes.md', mime_type: 'text/markdown', size_bytes: 21, downloadable: false });
      const listed = await fetch(`${server.url}/api/v1/files?workspace_id=default`, { headers: { authorization: `Bearer ${server.managementKey}` } });
      expect(((await listed.json()) as { data: { id: string }[] }).data.map((f) => f.id)).toContain(record.id);

      const human = await cli(['files', 'upload', file, '--workspace', 'default']);
      expect(human.stdout).toMatch(/mime_type\s+text\/markdown/);

      const empty = path.join(dir, 'empty.txt');
      await fs.writeFile(empty, '');
      const refused = await cli(['files', 'upload', empty]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^switchyard: 400 /);
      const missing = await cli(['files', 'upload', path.join(dir, 'nope.txt')]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('is not a file');
      expect((await cli(['files', 'upload', file, '--workspace', 'no-such-workspace'])).stderr).toMatch(/^switchyard: 400 /);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('maps, lists, shows and unmaps SCIM groups', async () => {
    const group = '6f1c2a7e-0b1d-4c3e-9f00-123456789abc';
    const mapped = await json(['scim', 'map', '--group', group, '--workspace', 'default', '--role', 'admin']);
    expect(mapped).toMatchObject({ scim_group_id: group, role: 'admin' });
    expect((await json(['scim', 'list'])).data.map((m: { id: string }) => m.id)).toContain(mapped.id);
    expect(await json(['scim', 'show', mapped.id])).toEqual(mapped);
    const conflict = await cli(['scim', 'map', '--group', group, '--workspace', 'default', '--role', 'member']);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('409');
    expect((await cli(['scim', 'unmap', mapped.id])).code).toBe(2);
    expect((await cli(['scim', 'map', '--group', group, '--workspace', 'default', '--role', 'owner'])).code).toBe(2);
    expect(await json(['scim', 'unmap', mapped.id, '--keep-members'])).toEqual({ deleted: true });
    expect((await cli(['scim', 'show', mapped.id])).code).toBe(1);
  });

  it('makes, lists and revokes SCIM tokens, and lists SCIM groups', async () => {
    const made = await json(['scim', 'tokens', 'create', '--json']);
    expect(Object.keys(made)).toEqual(['token']);
    expect(made.token).toMatch(/^sy-scim-v1-[0-9a-f]{64}$/);
    const scimFetch = (init: RequestInit = {}) =>
      fetch(`${server.url}/scim/v2/Groups`, { ...init, headers: { authorization: `Bearer ${made.token}`, 'content-type': 'application/scim+json' } });
    const group = (await (
      await scimFetch({ method: 'POST', body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'CLI group' }) })
    ).json()) as { id: string };
    const groups = await json(['scim', 'groups', 'list']);
    expect(groups.data.map((g: { id: string }) => g.id)).toContain(group.id);
    expect((await cli(['scim', 'groups', 'list'])).stdout).toContain('CLI group');
    // A synchronization: waited for, then its counts; --detach prints it as started.
    const synced = await json(['scim', 'sync']);
    expect(synced).toMatchObject({ status: 'succeeded', error_message: null });
    expect(typeof synced.synced_groups).toBe('number');
    const started = await json(['scim', 'sync', '--detach']);
    expect(['queued', 'running', 'succeeded']).toContain(started.status);

    const listed = await json(['scim', 'tokens', 'list']);
    const mine = listed.data.find((t: { label: string }) => made.token.startsWith(t.label.slice(0, 14)));
    expect(mine).toBeDefined();
    expect(JSON.stringify(listed)).not.toContain(made.token);
    const human = await cli(['scim', 'tokens', 'create']);
    expect(human.stdout).toMatch(/token\s+sy-scim-v1-[0-9a-f]{64}/);
    expect(await json(['scim', 'tokens', 'revoke', mine.id])).toEqual({ deleted: true });
    expect((await scimFetch()).status).toBe(401);
    expect((await cli(['scim', 'tokens', 'revoke', mine.id])).code).toBe(1);
  });

  it('creates, lists and deletes federation policies, with keys from a file or a URL', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-'));
    try {
      const key = await json(['keys', 'create', '--name', 'workload']);
      const jwks = {
        keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }],
      };
      await fs.writeFile(path.join(dir, 'jwks.json'), JSON.stringify(jwks));
      const base = [
        'federation-policies',
        'create',
        '--issuer',
        'https://idp.example',
        '--audience',
        'switchyard',
        '--subject',
        'ci',
        '--key-hash',
        key.data.hash,
      ];
      const inline = await json([...base, '--jwks-file', 'jwks.json'], {}, dir);
      expect(inline).toMatchObject({ issuer: 'https://idp.example', key_hash: key.data.hash, jwks_url: null, jwks });
      const fetched = await json([...base, '--jwks-url', 'https://idp.example/.well-known/jwks.json']);
      expect(fetched.jwks_url).toBe('https://idp.example/.well-known/jwks.json');
      const listed = (await json(['federation-policies', 'list'])).data.map((p: { id: string }) => p.id);
      expect(listed).toEqual(expect.arrayContaining([inline.id, fetched.id]));
      expect((await cli([...base])).code).toBe(2);
      expect((await cli([...base, '--jwks-file', 'missing.json'], {}, dir)).code).toBe(2);
      expect((await cli([...base.slice(0, -1), 'f'.repeat(64), '--jwks-file', 'jwks.json'], {}, dir)).stderr).toContain('404');
      expect(await json(['federation-policies', 'delete', inline.id])).toEqual({ deleted: true });
      expect((await cli(['federation-policies', 'delete', inline.id])).code).toBe(1);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it("sets, shows and deletes the organization's identity provider, never printing its client secret", async () => {
    const secret = 'oidc-client-secret-0123456789';
    expect(await json(['identity-provider', 'show'])).toEqual({ data: null });
    expect((await cli(['identity-provider', 'show'])).stdout).toContain('no identity provider is set');
    const base = ['identity-provider', 'set', '--issuer', 'https://idp.example', '--client-id', 'switchyard-console'];
    // The secret comes from the option or the environment; without it, or without domains, nothing is sent.
    expect((await cli([...base, '--allowed-domains', 'example.com'])).code).toBe(2);
    expect((await cli(base, { SWITCHYARD_OIDC_CLIENT_SECRET: secret })).code).toBe(2);
    // The server's rules reach the CLI: a plain-http issuer off loopback is refused.
    const refused = await cli(['identity-provider', 'set', '--issuer', 'http://idp.example', '--client-id', 'c', '--allowed-domains', 'example.com'], {
      SWITCHYARD_OIDC_CLIENT_SECRET: secret,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('400');

    const set = await cli([...base, '--allowed-domains', 'example.com, corp.example'], { SWITCHYARD_OIDC_CLIENT_SECRET: secret });
    expect(set, set.stderr).toMatchObject({ code: 0 });
    expect(set.stdout).toMatch(/issuer\s+https:\/\/idp\.example/);
    expect(set.stdout).not.toContain(secret);
    const shown = await json(['identity-provider', 'show']);
    expect(shown.data).toMatchObject({
      issuer: 'https://idp.example',
      client_id: 'switchyard-console',
      has_secret: true,
      allowed_email_domains: ['example.com', 'corp.example'],
    });
    expect(JSON.stringify(shown)).not.toContain(secret);
    // Another organization's key sees none of it.
    const other = await json(['orgs', 'create', '--name', 'Elsewhere']);
    expect(await json(['identity-provider', 'show'], { SWITCHYARD_API_KEY: other.management_key })).toEqual({ data: null });

    expect(await json(['identity-provider', 'delete'])).toEqual({ deleted: true });
    expect(await json(['identity-provider', 'show'])).toEqual({ data: null });
    expect((await cli(['identity-provider', 'delete'])).stdout).toContain('no identity provider was set');
  });

  it('adds and rotates a BYOK credential without ever printing the secret', async () => {
    const secret = 'sk-provider-0123456789abcdef';
    const res = await cli(['byok', 'add', '--provider', 'openai', '--name', 'prod'], { SWITCHYARD_PROVIDER_KEY: secret });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('sk-...cdef');
    expect(res.stdout).not.toContain(secret);
    const id = (res.stdout.match(/^id\s+(\S+)/m) ?? [])[1]!;
    const rotated = await json(['byok', 'rotate', id, '--provider-key', 'sk-provider-rotated-9999']);
    expect(rotated.data.label).toBe('sk...9999'); // 24 characters: at most 6 shown

    const listed = await cli(['byok', 'list', '--provider', 'openai']);
    expect(listed.stdout).toMatch(/^ID\s+PROVIDER\s+NAME/);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toContain('rotated-9999');
    expect((await json(['byok', 'disable', id])).data.disabled).toBe(true);
    expect((await json(['byok', 'disable', id, '--enable'])).data.disabled).toBe(false);
    expect(await json(['byok', 'delete', id])).toEqual({ deleted: true });
    expect((await json(['byok', 'list'])).data.map((c: { id: string }) => c.id)).not.toContain(id);

    // --every-workspace: workspace_id null, listed in every workspace; not with --workspace.
    const everywhere = await json(['byok', 'add', '--provider', 'groq', '--every-workspace', '--provider-key', 'gsk-everywhere-12345678']);
    expect(everywhere.data.workspace_id).toBeNull();
    expect((await json(['byok', 'list', '--provider', 'groq'])).data.map((c: { id: string }) => c.id)).toContain(everywhere.data.id);
    expect((await cli(['byok', 'add', '--provider', 'groq', '--every-workspace', '--workspace', 'default', '--provider-key', 'gsk-x-12345678'])).code).toBe(2);
    expect(await json(['byok', 'delete', everywhere.data.id])).toEqual({ deleted: true });
  });

  it('destinations create | list | show | update | secret | delete, never printing a secret', async () => {
    const secret = 'Bearer dest-header-0123456789';
    const res = await cli(['destinations', 'create', '--type', 'webhook', '--name', 'hook', '--regions', 'eu,us'], {
      SWITCHYARD_DESTINATION_CONFIG: JSON.stringify({ url: 'https://hooks.example.com/in', headers: { Authorization: secret } }),
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).not.toContain(secret);
    expect(res.stdout).toContain('Bea...6789');
    const id = (res.stdout.match(/^id\s+(\S+)/m) ?? [])[1]!;
    const listed = await cli(['destinations', 'list']);
    expect(listed.stdout).toMatch(/^ID\s+TYPE\s+NAME/);
    expect(listed.stdout).toContain(id);
    expect((await json(['destinations', 'show', id])).data).toMatchObject({ type: 'webhook', regions: ['europe', 'us'], delivery: 'supported' });
    const updated = await json(['destinations', 'update', id, '--disable', '--sampling-rate', '0.5', '--config', '{"method":"PUT"}']);
    expect(updated.data).toMatchObject({ enabled: false, sampling_rate: 0.5, config: { url: 'https://hooks.example.com/in', method: 'PUT' } });
    const printed = await json(['destinations', 'secret', id]);
    expect(printed).toEqual({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+={0,2}$/) });
    const rotated = await json(['destinations', 'secret', id, '--rotate']);
    expect(rotated.secret).not.toBe(printed.secret);
    expect((await cli(['destinations', 'secret', id])).stdout.trim()).toBe(rotated.secret);
    // The server's refusals: a missing required config key (400), an unknown type (400).
    const refused = await cli(['destinations', 'create', '--type', 's3', '--name', 'x', '--config', '{"bucketName":"b"}']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('400');
    expect((await cli(['destinations', 'create', '--type', 'webhook', '--name', 'x', '--config', 'not json'])).code).toBe(2);
    const status = await json(['destinations', 'status', id]);
    expect(status.data).toMatchObject({
      destination_id: id,
      enabled: false,
      delivery: 'supported',
      pending: 0,
      failing: 0,
      delivered: 0,
      dead: 0,
      last_error: null,
    });
    expect((await cli(['destinations', 'status', id])).stdout).toContain('last_delivered_at');
    expect(await json(['destinations', 'delete', id])).toEqual({ deleted: true });
    expect((await json(['destinations', 'list'])).data.map((d: { id: string }) => d.id)).not.toContain(id);
  });

  it('imports the demo catalog and shows a recorded generation', async () => {
    const catalog = fileURLToPath(new URL('../../../demo/catalog.json', import.meta.url));
    const imported = await json(['models', 'import', catalog]);
    expect(imported.models).toBeGreaterThanOrEqual(25);
    expect((await cli(['models', 'import', '/nonexistent.json'])).code).toBe(2);

    const keys = await json(['keys', 'list']);
    const hash = keys.data.find((k: { is_management_key: boolean }) => k.is_management_key).hash;
    await createSwitchyardClient({ url: server.url, apiKey: server.platformKey }).generations.record.mutate({
      id: 'gen-cli-1',
      api_key_hash: hash,
      model: 'openai/gpt-4o',
      content: { input: { messages: [{ role: 'user', content: 'hi' }] }, output: { completion: 'hello' } },
    });
    const shown = await json(['generations', 'show', 'gen-cli-1', '--content']);
    expect(shown).toMatchObject({ data: { id: 'gen-cli-1', model: 'openai/gpt-4o' }, content: { output: { completion: 'hello' } } });

    // The catalog's lists: all models, ZDR ones, image and video models, and what the key may use.
    const zdr = await json(['models', 'list', '--zdr', '--modalities', 'all']);
    expect(zdr.data.length).toBeGreaterThan(0);
    expect(zdr.data.map((m: { id: string }) => m.id)).not.toContain('openai/gpt-4o');
    const images = await json(['models', 'list', '--images']);
    expect(images.data.map((m: { id: string }) => m.id)).toContain('openai/gpt-image-1');
    expect((await cli(['models', 'list', '--videos'])).stdout).toMatch(/google\/veo-3\s+Google: Veo 3\s+4, 6, 8/);
    expect((await cli(['models', 'list', '--images', '--videos'])).code).toBe(2);
    const mine = await json(['models', 'user', '--limit', '2']);
    expect(mine).toMatchObject({ data: [expect.anything(), expect.anything()], links: { next: expect.stringContaining('/models/user?offset=2&limit=2') } });
    expect((await cli(['models', 'user'])).stdout).toMatch(/model\(s\) the key may use$/m);
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

  it('lists the commands with no arguments, and those of a group alone or with --help', async () => {
    const bare = await cli([]);
    expect(bare).toMatchObject({ code: 0, stderr: '' });
    expect(bare.stdout).toContain('keys create');
    expect(bare.stdout).toContain('workspaces add-members <workspace> <user-id...>');
    for (const args of [['keys'], ['keys', '--help'], ['--json', 'keys']]) {
      const group = await cli(args);
      expect(group, args.join(' ')).toMatchObject({ code: 0, stderr: '' });
      expect(group.stdout).toContain('Usage: switchyard keys');
      expect(group.stdout).toContain('keys set-limit <hash>');
      expect(group.stdout).not.toContain('workspaces create');
    }
  });

  it('prints its version', async () => {
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
    for (const flag of ['--version', '-V']) expect(await cli([flag])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('suggests the nearest command or option for a typo', async () => {
    const cases: [string[], string][] = [
      [['kyes', 'list'], 'Did you mean keys?'],
      [['keys', 'lsit'], 'Did you mean list?'],
      [['workspace', 'list'], 'Did you mean workspaces?'],
      [['keys', 'create', '--nmae', 'x'], 'Did you mean --name?'],
      [['keys', 'list', '--jsno'], 'Did you mean --json?'],
    ];
    for (const [args, suggestion] of cases) {
      const res = await cli(args);
      expect(res, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(res.stderr).toContain(suggestion);
    }
  });

  it('calls with the credential a command names: its option, its variable, then its file under DATA_DIR', async () => {
    const credential = { option: 'other-key', env: 'SWITCHYARD_OTHER_KEY', file: 'other-key', describe: 'other key' };
    const whoami: Command = {
      path: ['whoami'],
      summary: 'the calling key',
      credential,
      run: async (ctx) => ({ json: (await ctx.client.keys.current.query()).data.label }),
    };
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-'));
    try {
      const env = { SWITCHYARD_API_KEY: undefined };
      expect(await cli(['whoami'], env, dir, [whoami])).toMatchObject({
        code: 2,
        stderr: expect.stringContaining('no other key: pass --other-key, set SWITCHYARD_OTHER_KEY'),
      });
      await fs.mkdir(path.join(dir, '.data'));
      await fs.writeFile(path.join(dir, '.data', 'other-key'), `${server.managementKey}\n`);
      const fromFile = await cli(['whoami'], env, dir, [whoami]);
      expect(fromFile).toMatchObject({ code: 0, stdout: expect.stringMatching(/^"sk-sy-v1-/) });
      const regular = JSON.parse((await cli(['keys', 'create', '--name', 'other', '--json'])).stdout) as { key: string; data: { label: string } };
      expect((await cli(['whoami', '--json'], { ...env, SWITCHYARD_OTHER_KEY: regular.key }, dir, [whoami])).stdout).toBe(`"${regular.data.label}"\n`);
      const bad = await cli(['whoami', '--other-key', 'sk-sy-v1-nope'], { ...env, SWITCHYARD_OTHER_KEY: regular.key }, dir, [whoami]);
      expect(bad).toMatchObject({ code: 1, stderr: expect.stringContaining('401') });
      expect((await cli(['whoami', '--help'], env, dir, [whoami])).stdout).toContain('--other-key <key>');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('orgs create | list | disable: the platform key creates organizations whose management key works until disabled', async () => {
    const created = JSON.parse((await cli(['orgs', 'create', '--name', 'Acme', '--owner-email', 'boss@acme.example', '--json'])).stdout);
    expect(created).toMatchObject({
      organization_id: expect.stringMatching(/^org_/),
      workspace_id: expect.any(String),
      management_key: expect.stringMatching(/^sk-sy-v1-[0-9a-f]{64}$/),
    });
    const theirs = await cli(['keys', 'list', '--json'], { SWITCHYARD_API_KEY: created.management_key });
    expect(theirs.code).toBe(0);
    expect(JSON.parse(theirs.stdout).data).toHaveLength(1);
    const listed = await cli(['orgs', 'list']);
    expect(listed.stdout).toContain(created.organization_id);
    expect(listed.stdout).toContain('Acme');
    // Tenants' keys cannot: 403 with the platform's message.
    const refused = await cli(['orgs', 'create', '--name', 'Nope'], { SWITCHYARD_PLATFORM_KEY: server.managementKey });
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('Only platform keys can perform this operation') });
    // The platform key is found like the API key: option, variable, then DATA_DIR/platform-key.
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-'));
    try {
      expect((await cli(['orgs', 'list'], { SWITCHYARD_PLATFORM_KEY: undefined }, dir)).code).toBe(2);
      await fs.mkdir(path.join(dir, '.data'));
      await fs.writeFile(path.join(dir, '.data', 'platform-key'), `${server.platformKey}\n`);
      expect((await cli(['orgs', 'list'], { SWITCHYARD_PLATFORM_KEY: undefined }, dir)).code).toBe(0);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
    // Its quotas: shown, set, back to the server's default; a whole number or nothing.
    const settings = async (...args: string[]) => JSON.parse((await cli(['orgs', 'settings', created.organization_id, ...args, '--json'])).stdout).data;
    expect(await settings()).toMatchObject({ organization_id: created.organization_id, free_model_requests_per_minute: null });
    expect(await settings('--free-model-rpm', '5')).toMatchObject({ free_model_requests_per_minute: 5 });
    expect((await cli(['orgs', 'settings', created.organization_id])).stdout).toMatch(/free_model_requests_per_minute\s+5/);
    expect(await settings('--default-free-model-rpm')).toMatchObject({ free_model_requests_per_minute: null });
    // The API's rate limits (docs/rate-limits.md), each on its own; at least 1 a minute.
    expect(await settings('--api-key-rpm', '600', '--api-rpm', '6000')).toMatchObject({ api_requests_per_minute_per_key: 600, api_requests_per_minute: 6000 });
    expect(await settings('--default-api-key-rpm')).toMatchObject({ api_requests_per_minute_per_key: null, api_requests_per_minute: 6000 });
    expect((await cli(['orgs', 'settings', created.organization_id, '--api-rpm', '0'])).code).toBe(2);
    expect((await cli(['orgs', 'settings', created.organization_id, '--api-rpm', '5', '--default-api-rpm'])).code).toBe(2);
    expect((await cli(['orgs', 'settings', created.organization_id, '--free-model-rpm', '-1'])).code).toBe(2);
    const tenant = await cli(['orgs', 'settings', created.organization_id, '--free-model-rpm', '1000'], { SWITCHYARD_PLATFORM_KEY: created.management_key });
    expect(tenant).toMatchObject({ code: 1, stderr: expect.stringContaining('Only platform keys can perform this operation') });
    // A new management key, shown once; the organization's first one may then be disabled.
    const issued = JSON.parse((await cli(['orgs', 'issue-management-key', created.organization_id, '--name', 'spare', '--json'])).stdout);
    expect(issued).toMatchObject({ key: expect.stringMatching(/^sk-sy-v1-/), data: { name: 'spare', is_management_key: true } });
    expect((await cli(['orgs', 'issue-management-key', created.organization_id])).stdout).toMatch(/key\s+sk-sy-v1-/);
    expect((await cli(['keys', 'disable', created.management_key_hash], { SWITCHYARD_API_KEY: issued.key })).code).toBe(0);
    const disabled = JSON.parse((await cli(['orgs', 'disable', created.organization_id, '--json'])).stdout);
    expect(disabled).toMatchObject({ id: created.organization_id, disabled: true });
    expect(await cli(['keys', 'list'], { SWITCHYARD_API_KEY: issued.key })).toMatchObject({ code: 1, stderr: expect.stringContaining('401') });
  });

  it('route check prints the decision, every rule under --explain, and leaves nothing held', async () => {
    expect((await cli(['models', 'import', fileURLToPath(new URL('../../../demo/catalog.json', import.meta.url))])).code).toBe(0);
    const created = JSON.parse((await cli(['keys', 'create', '--name', 'routed', '--limit', '1', '--limit-reset', 'daily', '--json'])).stdout) as {
      data: { hash: string };
    };
    const hash = created.data.hash;
    // A paid model with no credit: refused, with the rule that refused it.
    const refused = await cli(['route', 'check', '--key-hash', hash, '--model', 'openai/gpt-4o', '--explain']);
    expect(refused.code).toBe(0);
    expect(refused.stdout).toMatch(/^refused: 402 credits_exhausted/);
    expect(refused.stdout).toContain('[key] enabled');
    expect(refused.stdout).toContain('[credits]');
    const allowed = JSON.parse((await cli(['route', 'check', '--key-hash', hash, '--model', 'openai/gpt-oss-20b:free', '--cost', '1', '--json'])).stdout);
    expect(allowed).toMatchObject({ allowed: true, model: 'openai/gpt-oss-20b:free', reservation_id: expect.any(String) });
    expect(await server.db.spendReservation.count({ where: { id: allowed.reservation_id } })).toBe(0);
    // Tenant keys cannot ask; bad input is a usage error.
    expect((await cli(['route', 'check', '--key-hash', hash, '--model', 'openai/gpt-4o'], { SWITCHYARD_PLATFORM_KEY: server.managementKey })).code).toBe(1);
    expect((await cli(['route', 'check', '--key-hash', hash, '--model', 'm', '--region', 'mars'])).code).toBe(2);
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

  it('runs as a process through its package bin, from the compiled CLI', async () => {
    // The file the package's bin names, run as an executable (as the link an install makes from it
    // runs it). It runs dist/, built before this test.
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const manifest = JSON.parse(await fs.readFile(path.join(root, 'apps', 'cli', 'package.json'), 'utf8')) as { bin: { switchyard: string } };
    const bin = path.join(root, 'apps', 'cli', manifest.bin.switchyard);
    const exec = promisify(execFile);
    const env = { ...process.env, SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: server.managementKey };
    const { stdout } = await exec(bin, ['keys', 'list', '--json', '--limit', '1'], { cwd: root, env });
    expect(JSON.parse(stdout)).toHaveProperty('data');
    expect((await exec(bin, ['--version'], { cwd: root })).stdout).toBe(`${VERSION}\n`);
    const failed = await exec(bin, ['nope'], { cwd: root }).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringMatching(/^switchyard: unknown command 'nope'/) });
  });
});
