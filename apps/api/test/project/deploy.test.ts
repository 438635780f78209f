// The server as it is deployed (docs/deployment.md): a folder made by `pnpm deploy` (of the build,
// which turbo runs before the API's tests), started the way deploy/switchyard.service starts it
// (its ExecStart and Environment lines, with the folder, the data directory and node's path put in
// for /opt/switchyard, /var/lib/switchyard and /usr/bin/node), answers /healthz, and stops on
// SIGTERM with its PostgreSQL. The unit passes `systemd-analyze verify`. The folder is made by the
// commands docs/deployment.md gives, read from it, and serves the console from its own copy.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/lib/version.js';
import { inheritedEnv, waitFor } from '../fixtures-process.js';
import { scaled } from '@switchyard/db/testing';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('../../../..', import.meta.url));
const UNIT = path.join(root, 'deploy', 'switchyard.service');

/** The unit's values of one key of [Service], in order. */
async function unitValues(key: string): Promise<string[]> {
  const text = await fs.readFile(UNIT, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1));
}

/**
 * The commands of docs/deployment.md's "A deployable folder" block that come after the install and
 * build (which the test run has done): every line but the first and the comments.
 */
async function documentedDeployCommands(): Promise<string[]> {
  const doc = await fs.readFile(path.join(root, 'docs', 'deployment.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## A deployable folder'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('docs/deployment.md has no sh block under "A deployable folder"');
  const [install, ...rest] = block.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  expect(install).toContain('pnpm build');
  expect(rest.length, 'the deploy command and the console copy').toBe(2);
  return rest;
}

/** Live processes whose command line names `dir`/** Live processes whose command line names `dir` (PostgreSQL's would: -D <dir>/...). */
async function processesUsing(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (cmdline.includes(dir) && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') pids.push(Number(entry));
  }
  return pids;
}

describe('deploy/switchyard.service', () => {
  const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((file) => existsSync(file));
  // CI installs Debian's systemd package (.ci/run); elsewhere the check needs the binary.
  const noAnalyze = !analyze && process.env.CI !== 'true';
  it.skipIf(noAnalyze)(`passes systemd-analyze verify${noAnalyze ? ' (skipped: no systemd-analyze; apt-get install systemd)' : ''}`, async () => {
    if (!analyze) throw new Error('systemd-analyze is not installed (Debian package systemd): CI must run this check');
    const { stderr } = await exec(analyze, ['verify', UNIT]).catch((e: { stderr: string; code: number }) => {
      throw new Error(`systemd-analyze verify failed (${e.code}):\n${e.stderr}`);
    });
    // Unknown keys and bad values are warnings (exit 0), printed with the unit's name.
    expect(stderr.split('\n').filter((line) => line.includes('switchyard.service'))).toEqual([]);
  });
});

describe('the `pnpm deploy` folder', () => {
  let work: string;
  beforeAll(async () => {
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-deploy-'));
    // As root, PostgreSQL runs as the postgres user, which must be able to pass through to DATA_DIR.
    await fs.chmod(work, 0o711);
  });
  afterAll(async () => {
    if (work) await fs.rm(work, { recursive: true, force: true });
  });

  it(
    'starts as the unit starts it, answers /healthz with its version, serves the console from its own copy, and stops on SIGTERM',
    async () => {
      const folder = path.join(work, 'switchyard');
      const dataDir = path.join(work, 'data');
      // The commands docs/deployment.md gives after the build, as written there, with this test's
      // folder in place of /tmp/switchyard: pnpm deploy from the workspace lockfile, with the
      // workspace packages copied in (injected; no registry lookups, so offline and as fast as the
      // store), then the console's build (which turbo makes before these tests) copied in.
      const deployLimit = scaled(180_000);
      for (const command of await documentedDeployCommands()) {
        await exec('sh', ['-c', command.replaceAll('/tmp/switchyard', folder)], {
          cwd: root,
          maxBuffer: 64 * 1024 * 1024,
          timeout: deployLimit,
        }).catch((e: Error & { stdout?: string; stderr?: string; signal?: string | null }) => {
          // pnpm prints its own errors on stdout; a kill at the timeout shows as the signal.
          const said = [e.message, e.signal ? `signal: ${e.signal}` : '', e.stdout ?? '', e.stderr ?? ''].filter(Boolean);
          throw new Error(`\`${command}\` failed or took over ${deployLimit / 1000} s:\n${said.join('\n').slice(-8000)}`);
        });
      }
      // Only what runs: the build and its assets, no sources or tests, no dev dependencies.
      expect((await fs.readdir(folder)).sort()).toEqual(['assets', 'console', 'dist', 'node_modules', 'package.json', 'pnpm-lock.yaml']);
      expect(existsSync(path.join(folder, 'node_modules', 'vitest'))).toBe(false);
      expect(existsSync(path.join(folder, 'node_modules', '@switchyard', 'db', 'dist', 'migrations'))).toBe(true);

      const put = (value: string) =>
        value
          .replaceAll('/opt/switchyard', folder)
          .replaceAll('/var/lib/switchyard', dataDir)
          .replace(/^\/usr\/bin\/node\b/, process.execPath);
      const [execStart] = await unitValues('ExecStart');
      const [file, ...args] = put(execStart!).split(' ');
      const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? work, ...inheritedEnv() };
      for (const assignment of await unitValues('Environment')) {
        const [name, value] = assignment.split(/=(.*)/s) as [string, string];
        env[name] = put(value);
      }
      expect(env).toMatchObject({ DATA_DIR: dataDir, NODE_ENV: 'production', MALLOC_ARENA_MAX: '2' });
      env.PORT = '0';
      await fs.mkdir(dataDir, { mode: 0o700 });

      const child = spawn(file!, args, { cwd: put((await unitValues('WorkingDirectory'))[0]!), env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const proc = { child, output: () => out, exited };
      try {
        const url = await waitFor(proc, /"url":"(http:\/\/[^"]+)","msg":"listening"/, scaled(120_000));
        const health = await fetch(`${url}/healthz`);
        expect(health.status).toBe(200);
        expect(await health.json()).toEqual({ status: 'ok', version: VERSION });
        const doc = (await (await fetch(`${url}/api/v1/openapi.json`)).json()) as { info: { version: string } };
        expect(doc.info.version).toBe(VERSION);
        expect(out).not.toContain('node was started without');
        // The console, from the folder's own copy: its page, and the script the page names.
        const page = await fetch(`${url}/console/keys`);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
        const script = /<script[^>]+src="(\/console\/assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
        expect(script, 'the page names its script').toBeDefined();
        const served = Buffer.from(await (await fetch(`${url}${script}`)).arrayBuffer());
        expect(served.equals(await fs.readFile(path.join(folder, 'console', script!.slice('/console/'.length))))).toBe(true);

        child.kill('SIGTERM');
        expect(await exited).toBe(0);
        expect(await processesUsing(dataDir)).toEqual([]);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        for (const pid of await processesUsing(dataDir)) process.kill(pid, 'SIGKILL');
      }
    },
    scaled(300_000),
  );
});
