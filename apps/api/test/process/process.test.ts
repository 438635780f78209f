// The server as a process: embedded PostgreSQL by default, data that survives restarts, recovery
// after SIGKILL, DATABASE_URL, and configuration errors. Runs the build's dist/main.js the way
// `pnpm start` runs it (fixtures-process.ts).
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkDatabaseUrl, DatabaseUrlError } from '@switchyard/db';
import { createTestDatabase, scaled } from '@switchyard/db/testing';
import { describe, expect, inject, it } from 'vitest';
import { CONFIG_FIX, ConfigError, loadConfig } from '../../src/config.js';
import { AWS_SDK_NOTICE } from '../../src/lib/aws-sdk-notice.js';
import { VERSION } from '../../src/lib/version.js';
import { NODE_FLAGS, START_ENV } from '../../src/process/node-flags.js';
import { until } from '../fixtures.js';
import { assertBuilt, launch, launchWith, mainArgs, start, waitFor } from '../fixtures-process.js';

const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url));

async function getKey(url: string, key: string) {
  const res = await fetch(`${url}/api/v1/key`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as { data: { organization_id: string } } };
}

async function pidOf(dataDir: string): Promise<number | null> {
  const file = path.join(dataDir, 'postgres', 'cluster', 'postmaster.pid');
  try {
    return Number((await fs.readFile(file, 'utf8')).split('\n')[0]);
  } catch {
    return null;
  }
}
/** Running, and not a zombie waiting for a parent that will reap it later. */
async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Live processes whose command line names `dir` (an orphaned postgres would: -D <dir>/...). */
async function processesUsing(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(dir) && (await alive(Number(entry)))) pids.push(Number(entry));
  }
  return pids;
}

/** loadConfig's refusal of `env` (with the defaults for the rest): its message. */
function refused(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(Object.keys(env))}`);
}

describe('server process on embedded PostgreSQL', () => {
  it(
    'bootstraps once, keeps data across restarts, and recovers after SIGKILL',
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-proc-'));
      try {
        // First start: new cluster, migrations, bootstrap, admin-key and platform-key files (0600).
        let proc = await start({ DATA_DIR: dataDir });
        // One line for the migrations, however many: the first start applies them all.
        const migrationLines = proc
          .output()
          .split('\n')
          .filter((line) => line.includes('"component":"migrate"'));
        expect(migrationLines).toEqual([
          expect.stringMatching(/"msg":"applying \d+ migrations \(.+ to .+\)\.\.\."/),
          expect.stringMatching(/"msg":"applied \d+ migrations in \d+\.\d s"/),
        ]);
        expect(proc.output()).toContain(`"version":"${VERSION}","url":"${proc.url}","msg":"listening"`);
        const keyFile = path.join(dataDir, 'admin-key');
        const platformFile = path.join(dataDir, 'platform-key');
        expect((await fs.stat(keyFile)).mode & 0o777).toBe(0o600);
        expect((await fs.stat(platformFile)).mode & 0o777).toBe(0o600);
        const adminKey = (await fs.readFile(keyFile, 'utf8')).trim();
        const platformKey = (await fs.readFile(platformFile, 'utf8')).trim();
        expect(platformKey).toMatch(/^sk-sy-platform-v1-[0-9a-f]{64}$/);
        // The log names the files and the masked labels, never a secret.
        expect(proc.output()).toContain(keyFile);
        expect(proc.output()).toContain(platformFile);
        expect(proc.output()).toContain(`${adminKey.slice(0, 12)}...${adminKey.slice(-3)}`);
        expect(proc.output()).not.toContain(adminKey.slice(9));
        expect(proc.output()).not.toContain(platformKey.slice(18));
        const first = await getKey(proc.url, adminKey);
        expect(first.status).toBe(200);
        // The platform key belongs to no organization: GET /key is for tenants' keys (403).
        expect((await getKey(proc.url, platformKey)).status).toBe(403);
        expect((await fetch(`${proc.url}/readyz`)).status).toBe(200);

        // A second server on the same DATA_DIR is refused, and leaves the first one's database alone.
        const rival = launch({ DATA_DIR: dataDir });
        expect(await rival.exited).toBe(1);
        expect(rival.output()).toMatch(
          /is in use by a running server \(PostgreSQL pid \d+, started by pid \d+\): stop that server, or give this one another DATA_DIR/,
        );
        expect((await getKey(proc.url, adminKey)).status).toBe(200);

        // SIGTERM: exits 0 and stops PostgreSQL.
        const pgPid = await pidOf(dataDir);
        expect(pgPid).not.toBeNull();
        proc.child.kill('SIGTERM');
        expect(await proc.exited).toBe(0);
        expect(await alive(pgPid!)).toBe(false);
        expect(await pidOf(dataDir)).toBeNull();

        // Restart: same organization, same key, no second bootstrap, key shown no more; no migration to apply, no line.
        proc = await start({ DATA_DIR: dataDir });
        expect(proc.output()).not.toContain('"component":"migrate"');
        const second = await getKey(proc.url, adminKey);
        expect(second).toMatchObject({ status: 200, body: { data: { organization_id: first.body.data.organization_id } } });
        expect(proc.output()).not.toContain(adminKey);
        expect(proc.output()).not.toContain(platformKey);

        // SIGKILL leaves an orphaned postgres and its postmaster.pid behind...
        const orphan = await pidOf(dataDir);
        proc.child.kill('SIGKILL');
        await proc.exited;
        expect(await alive(orphan!)).toBe(true);

        // ...and the next start recovers from it.
        proc = await start({ DATA_DIR: dataDir });
        expect(proc.output()).toMatch(/orphaned PostgreSQL/);
        expect((await getKey(proc.url, adminKey)).status).toBe(200);
        expect(await alive(orphan!)).toBe(false);
        proc.child.kill('SIGTERM');
        expect(await proc.exited).toBe(0);

        // A stale postmaster.pid whose process is gone does not block a start either.
        await fs.writeFile(path.join(dataDir, 'postgres', 'cluster', 'postmaster.pid'), '4194000\n/nowhere\n');
        proc = await start({ DATA_DIR: dataDir });
        expect((await getKey(proc.url, adminKey)).status).toBe(200);
        proc.child.kill('SIGINT');
        expect(await proc.exited).toBe(0);
      } finally {
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
    scaled(300_000),
  );

  it('uses DATABASE_URL when set and starts no PostgreSQL of its own', async () => {
    const database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-proc-'));
    const key = `sk-sy-v1-${'ab'.repeat(32)}`;
    const platformKey = `sk-sy-platform-v1-${'cd'.repeat(32)}`;
    try {
      const proc = await start({ DATA_DIR: dataDir, DATABASE_URL: database.url, SWITCHYARD_BOOTSTRAP_KEY: key, SWITCHYARD_PLATFORM_KEY: platformKey });
      expect((await getKey(proc.url, key)).status).toBe(200);
      expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);
      expect(existsSync(path.join(dataDir, 'admin-key'))).toBe(false);
      expect(existsSync(path.join(dataDir, 'platform-key'))).toBe(false);
      expect(proc.output()).not.toContain(platformKey.slice(18));
      expect(proc.output()).not.toContain('node was started without');
      // The AWS SDK's Node notice: once, in the server's words, on a Node the SDK warns on; never the SDK's own.
      expect(proc.output().split(AWS_SDK_NOTICE).length - 1).toBe(Number(process.versions.node.split('.')[0]) < 22 ? 1 : 0);
      expect(proc.output()).not.toContain('NodeVersionSupportWarning');
      const orgs = await fetch(`${proc.url}/trpc/organizations.list?input=${encodeURIComponent('{}')}`, {
        headers: { authorization: `Bearer ${platformKey}` },
      });
      expect(orgs.status).toBe(200);
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    } finally {
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it(
    'exits 1 with a clear message when its port is taken, before anything is written',
    async () => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as AddressInfo).port;
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-proc-'));
      try {
        const proc = launch({ DATA_DIR: dataDir, PORT: String(port) });
        expect(await proc.exited).toBe(1);
        expect(proc.output()).toContain(`could not start: 127.0.0.1:${port} is already in use: stop what listens there, or set PORT to another port`);
        expect(proc.output()).not.toContain('"msg":"listening"');
        // Found before the database: no cluster was made, no PostgreSQL started, nothing written.
        expect(await fs.readdir(dataDir)).toEqual([]);
        expect(await processesUsing(dataDir)).toEqual([]);
        // METRICS_PORT too.
        const metrics = launch({ DATA_DIR: path.join(dataDir, 'never'), METRICS_PORT: String(port) });
        expect(await metrics.exited).toBe(1);
        expect(metrics.output()).toContain(
          `could not start: 127.0.0.1:${port} is already in use: stop what listens there, or set METRICS_PORT to another port`,
        );
        expect(existsSync(path.join(dataDir, 'never'))).toBe(false);
      } finally {
        await new Promise((resolve) => taken.close(resolve));
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
    scaled(180_000),
  );

  it(
    'writes readable lines, not JSON, when stdout is a terminal',
    async () => {
      const database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-proc-'));
      // script(1) runs the server on a pseudo-terminal, as a person at a shell would.
      const command = `exec ${process.execPath} ${mainArgs().join(' ')}`;
      const proc = launchWith('script', ['-qfec', command, '/dev/null'], {
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        SWITCHYARD_BOOTSTRAP_KEY: `sk-sy-v1-${'cd'.repeat(32)}`,
        TERM: 'xterm',
      });
      try {
        const url = await waitFor(proc, /INFO.*listening.*"url":"(http:\/\/[^"]+)"/);
        await fetch(`${url}/api/v1/key`, { headers: { 'x-request-id': 'tty-1' } });
        await waitFor(proc, /GET \/api\/v1\/key 401 \d+\.\dms.*tty-1/);
        expect(proc.output()).not.toMatch(/^\{"level"/m);
      } finally {
        // script(1) ends when the server does.
        proc.child.kill('SIGTERM');
        await proc.exited;
        await database.drop();
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
    scaled(180_000),
  );

  // Each rule's message from loadConfig itself; the process's part (it prints that message, exits 1,
  // makes nothing) is the same for every ConfigError (main.ts), and is checked once, below.
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['STORAGE_URL', 'ftp://files.example.com/blobs'],
    ['S3_FORCE_PATH_STYLE', 'yes'],
  ])('refuses to start with a clear message for %s=%s', (name, value) => {
    const message = refused({ [name]: value, DATA_DIR: path.join(os.tmpdir(), 'switchyard-never-created') });
    expect(message).toContain('Invalid configuration');
    expect(message).toContain(`${name}="${value}"`);
    expect(message).toContain(CONFIG_FIX);
  });

  it('prints the configuration refusal and exits 1, before making DATA_DIR', async () => {
    const env = { PORT: 'abc', DATA_DIR: path.join(os.tmpdir(), 'switchyard-never-created') };
    const proc = launch(env);
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toContain(refused(env));
    expect(proc.output()).toContain('PORT="abc"');
    expect(existsSync(path.join(os.tmpdir(), 'switchyard-never-created'))).toBe(false);
  });

  it('never prints a secret setting: its length and the rule instead, and URLs with their passwords masked', async () => {
    const secrets = [
      ['SWITCHYARD_SECRET_KEY', 'mysupersecretvalue123', 'must be 32 bytes as 64 hex characters or base64'],
      ['SWITCHYARD_BOOTSTRAP_KEY', 'sk-sy-v1-notquiteasecret', 'must be sk-sy-v1- followed by 64 lowercase hex characters'],
      ['SWITCHYARD_PLATFORM_KEY', 'sk-sy-platform-v1-nothex!', 'must be sk-sy-platform-v1- followed by 64 lowercase hex characters'],
    ] as const;
    for (const [name, value, rule] of secrets) {
      const message = refused({ [name]: value });
      expect(message).not.toContain(value);
      expect(message).not.toContain(value.slice(-8));
      expect(message).toContain(`${name} (${value.length} characters, not shown): ${rule}`);
      expect(message).toContain(CONFIG_FIX);
    }
    const urls = [
      ['DATABASE_URL', 'mysql://app:hunter2secret@db.example.com/app?password=hunter2secret', 'mysql://app:***@db.example.com/app?password=***'],
      ['COUNTER_STORE_URL', 'http://:hunter2secret@cache.example.com:6379', 'http://:***@cache.example.com:6379'],
      ['STORAGE_URL', 'ftp://AKIAEXAMPLE:hunter2secret@files.example.com/blobs', 'ftp://***@files.example.com/blobs'],
    ] as const;
    for (const [name, value, shown] of urls) {
      const message = refused({ [name]: value });
      expect(message).not.toContain('hunter2secret');
      expect(message).not.toContain('AKIAEXAMPLE');
      expect(message).toContain(`${name}="${shown}": must be`);
    }
    // As the process prints it.
    const proc = launch({ SWITCHYARD_SECRET_KEY: 'mysupersecretvalue123', DATA_DIR: path.join(os.tmpdir(), 'switchyard-never-created') });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toContain('SWITCHYARD_SECRET_KEY (21 characters, not shown): must be 32 bytes');
    expect(proc.output()).not.toContain('mysupersecretvalue123');
  });

  it('names DATABASE_URL, with its password masked, when its database cannot be reached, at once for a refused connection or an unknown host', async () => {
    // The promise is an answer within 2 s. A busy machine stretches every step of it (the process
    // gets less of a core), so the bound is scaled like every time limit in the tests; the connect
    // timeout stays far beyond it, so the answer must come from the failure itself, not from a timer.
    const within = scaled(2_000);
    const failure = async (url: string, timeoutMs = scaled(60_000)) => {
      const started = Date.now();
      const error = await checkDatabaseUrl(url, timeoutMs).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DatabaseUrlError);
      const message = (error as Error).message;
      expect(message).not.toContain('hunter2secret');
      return { message, ms: Date.now() - started };
    };
    const refused = await failure('postgresql://app:hunter2secret@127.0.0.1:1/app');
    expect(refused.message).toBe(
      'DATABASE_URL (postgresql://app:***@127.0.0.1:1/app): nothing accepts connections at 127.0.0.1:1: start PostgreSQL there, or fix the host and port',
    );
    expect(refused.ms).toBeLessThan(within);
    const unknown = await failure('postgresql://app:hunter2secret@no-such-host.invalid:5432/app');
    expect(unknown.message).toBe(
      'DATABASE_URL (postgresql://app:***@no-such-host.invalid:5432/app): the host of no-such-host.invalid:5432 cannot be resolved (DNS lookup failed): fix the host',
    );
    expect(unknown.ms).toBeLessThan(within);

    // The test cluster: a database that is not there.
    const admin = new URL(inject('pgAdminUrl'));
    const missing = new URL(admin);
    missing.pathname = '/no_such_database';
    expect((await failure(missing.href)).message).toMatch(/database "no_such_database" does not exist on .+: create it/);

    // The process says it in its one fatal line, and writes nothing.
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-proc-'));
    try {
      const proc = launch({ DATA_DIR: dataDir, DATABASE_URL: 'postgresql://app:hunter2secret@127.0.0.1:1/app' });
      expect(await proc.exited).toBe(1);
      expect(proc.output()).toContain('could not start: DATABASE_URL (postgresql://app:***@127.0.0.1:1/app): nothing accepts connections at 127.0.0.1:1');
      expect(proc.output()).not.toContain('hunter2secret');
      expect(await fs.readdir(dataDir)).toEqual([]);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  // A cluster that trusts local connections (TEST_DATABASE_URL's may) asks nobody for a password.
  const trusting = new URL(inject('pgAdminUrl')).password === '';
  it.skipIf(trusting)(
    `names DATABASE_URL when the server asks for a password it lacks or refuses the one it has${trusting ? ' (skipped: the test cluster asks for no password)' : ''}`,
    async () => {
      const admin = new URL(inject('pgAdminUrl'));
      const failure = async (url: string) => {
        const error = await checkDatabaseUrl(url, scaled(60_000)).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(DatabaseUrlError);
        const message = (error as Error).message;
        expect(message).not.toContain('hunter2secret');
        return message;
      };
      const noPassword = new URL(admin);
      noPassword.password = '';
      expect(await failure(noPassword.href)).toMatch(/^DATABASE_URL \(.+\): the server asks user "\w+" for a password, and DATABASE_URL has none: add it/);
      const wrong = new URL(admin);
      wrong.password = 'hunter2secret';
      expect(await failure(wrong.href)).toMatch(
        /^DATABASE_URL \(postgresql:\/\/\w+:\*\*\*@.+\): password authentication failed for user "\w+": fix the password/,
      );
    },
  );

  it('reports a database host that accepts and never answers within DATABASE_CONNECT_TIMEOUT_MS', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-proc-'));
    try {
      const proc = launch({ DATA_DIR: dataDir, DATABASE_URL: `postgresql://app:hunter2secret@127.0.0.1:${port}/app`, DATABASE_CONNECT_TIMEOUT_MS: '500' });
      expect(await proc.exited).toBe(1);
      expect(proc.output()).toContain(
        `could not start: DATABASE_URL (postgresql://app:***@127.0.0.1:${port}/app): 127.0.0.1:${port} did not answer within 500 ms (DATABASE_CONNECT_TIMEOUT_MS)`,
      );
      expect(sockets.size).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a DATA_DIR it cannot use, at once, naming it: under /proc, below a file', async () => {
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-proc-'));
    try {
      const file = path.join(scratch, 'a-file');
      await fs.writeFile(file, '');
      const cases: [string, RegExp][] = [
        // Node's recursive mkdir never returns there: the server makes each level itself.
        [
          `/proc/switchyard-${process.pid}`,
          /DATA_DIR="\/proc\/switchyard-\d+": cannot make the directory \/proc\/switchyard-\d+ \(\w+\): choose a directory on a writable file system/,
        ],
        [path.join(file, 'data'), /DATA_DIR=".+": .+\/a-file is not a directory: choose a directory/],
      ];
      for (const [dataDir, message] of cases) {
        const proc = launch({ DATA_DIR: dataDir });
        expect(await proc.exited, dataDir).toBe(1);
        // The fatal line is JSON: its quotes escaped.
        expect(proc.output().replaceAll('\\"', '"')).toMatch(new RegExp(`could not start: ${message.source}`));
        expect(proc.output()).not.toContain('"component":"postgres"');
      }
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  });

  it('makes a DATA_DIR whose parents are missing, one level at a time', async () => {
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-proc-'));
    const database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
    try {
      const dataDir = path.join(scratch, 'a', 'b', 'c');
      const proc = await start({ DATA_DIR: dataDir, DATABASE_URL: database.url, SWITCHYARD_BOOTSTRAP_KEY: `sk-sy-v1-${'12'.repeat(32)}` });
      expect((await fs.stat(dataDir)).isDirectory()).toBe(true);
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    } finally {
      await database.drop();
      await fs.rm(scratch, { recursive: true, force: true });
    }
  });

  it("makes S3 clients without the AWS SDK's Node notice in any process that loads the server's S3 modules", async () => {
    const makeClients = (prelude: string) =>
      launchWith(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `${prelude} const { S3Client } = await import('@aws-sdk/client-s3'); new S3Client({ region: 'us-east-1' }); new S3Client({ region: 'eu-west-1' }); console.log('made two');`,
        ],
        {},
      );
    assertBuilt();
    const quiet = makeClients("await import('./dist/storage/s3-storage.js');");
    expect(await quiet.exited).toBe(0);
    expect(quiet.output()).toContain('made two');
    expect(quiet.output()).not.toContain('NodeVersionSupportWarning');
    // Without it, on Node 20, the SDK prints its notice: what the module keeps out is really there.
    if (Number(process.versions.node.split('.')[0]) < 22) {
      const loud = makeClients('');
      expect(await loud.exited).toBe(0);
      expect(loud.output()).toContain('NodeVersionSupportWarning');
    }
  });

  it('warns, and still serves, when node was started without NODE_FLAGS', async () => {
    const database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-proc-'));
    try {
      const proc = await start({ DATA_DIR: dataDir, DATABASE_URL: database.url, SWITCHYARD_BOOTSTRAP_KEY: `sk-sy-v1-${'ef'.repeat(32)}` }, []);
      expect((await fetch(`${proc.url}/readyz`)).status).toBe(200);
      expect(proc.output()).toContain(`node was started without ${NODE_FLAGS.join(' ')}`);
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    } finally {
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it("gives node NODE_FLAGS and START_ENV in both of pnpm start's scripts", async () => {
    const startScript = async (file: string) => {
      const manifest = JSON.parse(await fs.readFile(new URL(file, import.meta.url), 'utf8')) as { scripts: { start: string } };
      return manifest.scripts.start;
    };
    for (const script of [await startScript('../../../../package.json'), await startScript('../../package.json')]) {
      const env = Object.entries(START_ENV).map(([name, value]) => `${name}=${value} `);
      // exec: node takes the shell's place, so the signals pnpm passes on reach the server.
      expect(script).toContain(`${env.join('')}exec node ${NODE_FLAGS.join(' ')} `);
      expect(script).toMatch(/dist\/main\.js$/);
    }
  });
});

/** The processes below `pid` (children, theirs, ...), from /proc. */
async function descendantsOf(pid: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid) parents.set(Number(entry), ppid);
  }
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length; ) {
    frontier = [...parents].filter(([, ppid]) => frontier.includes(ppid)).map(([child]) => child);
    found.push(...frontier);
  }
  return found;
}

/** Whether anything answers HTTP at `url`. */
async function answers(url: string): Promise<boolean> {
  return fetch(`${url}/healthz`, { signal: AbortSignal.timeout(scaled(5_000)) }).then(
    () => true,
    () => false,
  );
}

// `pnpm start` as a supervisor or a terminal runs it: the signal goes to the pnpm process (which
// passes it to its script's shell), not to node. The root script builds first (turbo: a cache hit,
// since the API's tests run after its build); the API package's script runs the build as it is.
describe.each([
  ['the root', repoRoot, 'SIGTERM'],
  ["the API package's", path.join(repoRoot, 'apps', 'api'), 'SIGINT'],
] as const)('%s `pnpm start`', (_name, cwd, signal) => {
  it(
    `hands ${signal} to the server: it drains, stops its PostgreSQL, and pnpm exits 0`,
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-proc-'));
      const proc = launchWith('pnpm', ['start'], { DATA_DIR: dataDir }, cwd);
      try {
        const url = await waitFor(proc, /"url":"(http:\/\/[^"]+)","msg":"listening"/, scaled(240_000));
        expect(await answers(url)).toBe(true);
        const postgres = await processesUsing(dataDir);
        expect(postgres.length).toBeGreaterThan(0);

        proc.child.kill(signal);
        await until(async () => proc.child.exitCode !== null, {
          everyMs: 100,
          timeoutMs: scaled(60_000),
          what: `pnpm start to exit on ${signal}`,
          detail: proc.output,
        });
        expect(proc.child.exitCode).toBe(0);
        await until(async () => !(await answers(url)), { everyMs: 100, what: `${url} to stop answering`, detail: proc.output });
        await until(async () => (await processesUsing(dataDir)).length === 0, {
          everyMs: 100,
          what: `the PostgreSQL of ${dataDir} to stop`,
          detail: proc.output,
        });
        expect(proc.output()).toContain(`"signal":"${signal}","msg":"shutting down"`);
        // The root script says what it does while turbo builds (quiet but for errors), one line a step.
        if (cwd === repoRoot) expect(proc.output()).toMatch(/switchyard: building the server .*\.\.\.\n(.|\n)*switchyard: built; starting\n/);
        expect(await pidOf(dataDir)).toBeNull();
      } finally {
        // On a failure, nothing of it is left running: pnpm, what it started, PostgreSQL.
        const left = [...(proc.child.pid ? await descendantsOf(proc.child.pid) : []), ...(await processesUsing(dataDir))];
        if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
        for (const pid of left) if (await alive(pid)) process.kill(pid, 'SIGKILL');
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
    scaled(300_000),
  );
});
