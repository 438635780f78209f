// Backing up and restoring the database with PostgreSQL's own tools (decision 0028):
// - logical: pg_dump -Fd / pg_restore, for a server this process does not own (DATABASE_URL). It
//   needs a pg_dump whose major version is at least the server's.
// - physical: the documented low-level base backup API (pg_backup_start / pg_backup_stop) over the
//   embedded cluster's data directory, with the WAL written meanwhile. Restored, the copy is started
//   by the same embedded binaries, which replay that WAL to a consistent state.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { EMBEDDED_DATABASE_NAME, ensureDatabaseExists } from './database.js';
import { chownTree, embeddedBinaries, runAsIds, startEmbeddedPostgres } from './embedded.js';

const run = promisify(execFile);

/** A failure a person can act on (printed alone, without a stack). */
export class BackupError extends Error {}

export interface ServerFacts {
  /** e.g. "18.4" */
  version: string;
  major: number;
  walLevel: string;
  /** The newest applied migration, or null before the first. */
  migration: string | null;
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function serverFacts(url: string): Promise<ServerFacts> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ version: string; num: string; wal_level: string }>(
      `SELECT current_setting('server_version') AS version, current_setting('server_version_num') AS num, current_setting('wal_level') AS wal_level`,
    );
    const row = rows[0]!;
    const history = await client
      .query<{ name: string }>(
        `SELECT migration_name AS name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name DESC LIMIT 1`,
      )
      .catch(() => ({ rows: [] as { name: string }[] }));
    return {
      version: row.version.split(' ')[0]!,
      major: Math.floor(Number(row.num) / 10_000),
      walLevel: row.wal_level,
      migration: history.rows[0]?.name ?? null,
    };
  });
}

export interface PgTools {
  dir: string;
  major: number;
  pgDump: string;
  pgRestore: string;
}

/** The major version a PostgreSQL client tool reports ("pg_dump (PostgreSQL) 15.14 (Debian ...)"), or null. */
async function toolMajor(file: string): Promise<number | null> {
  try {
    const { stdout } = await run(file, ['--version']);
    const match = /\)\s+(\d+)/.exec(stdout);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Directories that may hold pg_dump and pg_restore, in the order they are tried: PG_BIN, PATH, the
 * embedded package's bin directory, then Debian's /usr/lib/postgresql/<major>/bin, newest first.
 */
async function toolDirs(env: Record<string, string | undefined>): Promise<string[]> {
  const dirs: string[] = [];
  if (env.PG_BIN) dirs.push(env.PG_BIN);
  dirs.push(...(env.PATH ?? '').split(path.delimiter).filter(Boolean));
  try {
    dirs.push(path.dirname((await embeddedBinaries()).postgres));
  } catch {
    // no embedded binaries on this platform
  }
  const debian = '/usr/lib/postgresql';
  const majors = await fs.readdir(debian).catch(() => [] as string[]);
  dirs.push(...majors.sort((a, b) => Number(b) - Number(a)).map((m) => path.join(debian, m, 'bin')));
  return [...new Set(dirs)];
}

/** The first pg_dump and pg_restore pair whose major version is at least `serverMajor`, or null (with what was found). */
export async function findPgTools(
  serverMajor: number,
  env: Record<string, string | undefined> = process.env,
): Promise<{ tools: PgTools | null; seen: string[] }> {
  const seen: string[] = [];
  for (const dir of await toolDirs(env)) {
    const pgDump = path.join(dir, 'pg_dump');
    const pgRestore = path.join(dir, 'pg_restore');
    if (!existsSync(pgDump) || !existsSync(pgRestore)) continue;
    const major = await toolMajor(pgDump);
    if (major === null) continue;
    seen.push(`${pgDump} (${major})`);
    if (major >= serverMajor && (await toolMajor(pgRestore)) === major) return { tools: { dir, major, pgDump, pgRestore }, seen };
  }
  return { tools: null, seen };
}

/** The URL without its password, and the environment that passes the password (never on a command line). */
function connectionOf(url: string, database?: string): { url: string; env: NodeJS.ProcessEnv } {
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  u.password = '';
  if (database !== undefined) u.pathname = `/${encodeURIComponent(database)}`;
  return { url: u.toString(), env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}), PGAPPNAME: 'switchyard-backup' } };
}

function databaseOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
}

async function tool(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await run(file, args, { env, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new BackupError(`${path.basename(file)} failed: ${(e.stderr || e.message).trim()}`);
  }
}

/** pg_dump -Fd of the database `url` names into `outDir` (which must not exist). */
export async function dumpDatabase(url: string, tools: PgTools, outDir: string): Promise<void> {
  const conn = connectionOf(url);
  await tool(tools.pgDump, ['--format=directory', `--file=${outDir}`, '--no-owner', '--no-privileges', `--dbname=${conn.url}`], conn.env);
}

/** Whether the database holds any table outside PostgreSQL's own schemas. */
async function holdsTables(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`,
  );
  return Number(rows[0]!.n) > 0;
}

/**
 * Restores a pg_dump directory into the database `url` names: into a new database on the same
 * server first (pg_restore in one transaction), which then takes the target's name; the target's
 * previous content (refused unless `force`) is dropped only after the swap. Nothing is connected to
 * the target meanwhile (the server must be stopped), else it is refused.
 */
export async function restoreDatabase(url: string, tools: PgTools, dumpDir: string, options: { force: boolean }): Promise<void> {
  const target = databaseOf(url);
  const scratch = `${target}_restore_${randomBytes(4).toString('hex')}`.slice(0, 63);
  const exists = await withClient(connectionOf(url, 'postgres').url, async (client) => {
    await client.query(`SET application_name = 'switchyard-restore'`);
    return (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [target])).rowCount === 1;
  }).catch((error: Error) => {
    throw new BackupError(`cannot reach the maintenance database "postgres" on the target server: ${error.message}`);
  });
  if (exists) {
    const busy = await withClient(url, async (client) => {
      if ((await holdsTables(client)) && !options.force) {
        throw new BackupError(`the database "${target}" is not empty: restore into an empty database, or pass --force to replace it`);
      }
      const { rows } = await client.query<{ n: string }>('SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
        target,
      ]);
      return Number(rows[0]!.n);
    });
    if (busy > 0) throw new BackupError(`${busy} other session(s) are connected to "${target}": stop the server (every replica) before restoring`);
  }
  await withClient(connectionOf(url, 'postgres').url, (client) => client.query(`CREATE DATABASE ${client.escapeIdentifier(scratch)} TEMPLATE template0`)).catch(
    (error: Error) => {
      throw new BackupError(`cannot create a database to restore into (the user needs CREATEDB): ${error.message}`);
    },
  );
  try {
    const conn = connectionOf(url, scratch);
    await tool(tools.pgRestore, ['--exit-on-error', '--single-transaction', '--no-owner', '--no-privileges', `--dbname=${conn.url}`, dumpDir], conn.env);
    const old = `${target}_replaced_${randomBytes(4).toString('hex')}`.slice(0, 63);
    await withClient(connectionOf(url, 'postgres').url, async (client) => {
      const id = (name: string) => client.escapeIdentifier(name);
      await client.query('BEGIN');
      try {
        if (exists) await client.query(`ALTER DATABASE ${id(target)} RENAME TO ${id(old)}`);
        await client.query(`ALTER DATABASE ${id(scratch)} RENAME TO ${id(target)}`);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new BackupError(`could not swap the restored database in: ${(error as Error).message}`);
      }
      if (exists) await client.query(`DROP DATABASE ${id(old)}`);
    });
  } catch (error) {
    await withClient(connectionOf(url, 'postgres').url, (client) => client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(scratch)}`)).catch(
      () => undefined,
    );
    throw error;
  }
}

// --- physical -----------------------------------------------------------------------------------

/**
 * What a base backup leaves out (PostgreSQL docs, "Making a Base Backup Using the Low Level API",
 * and pg_basebackup's own list): these directories are copied empty; these files not at all.
 */
const EMPTIED_DIRS = new Set(['pg_wal', 'pg_replslot', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_stat_tmp', 'pg_subtrans']);
const SKIPPED_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map', 'recovery.signal', 'standby.signal', 'server.log']);
const skippedName = (name: string) => name === 'pg_internal.init' || name.startsWith('pgsql_tmp');
const WAL_SEGMENT = /^[0-9A-F]{24}$/;

/** Copies a directory tree that the running server changes meanwhile: what vanishes while copied is left out. */
async function copyLive(from: string, to: string, top: boolean): Promise<void> {
  let entries;
  try {
    entries = await fs.readdir(from, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  await fs.mkdir(to, { recursive: true, mode: 0o700 });
  for (const entry of entries) {
    if (skippedName(entry.name) || (top && SKIPPED_FILES.has(entry.name))) continue;
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      if (top && EMPTIED_DIRS.has(entry.name)) await fs.mkdir(target, { mode: 0o700 });
      else await copyLive(source, target, false);
    } else if (entry.isFile()) {
      await fs.copyFile(source, target, constants.COPYFILE_EXCL).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    } else if (entry.isSymbolicLink()) {
      throw new BackupError(`${source} is a symbolic link (a tablespace?): the embedded cluster's physical backup copies one directory only`);
    }
  }
}

/**
 * An online physical backup of the embedded cluster in `clusterDir` (the server at `url`, as its
 * superuser) into `outDir`: a temporary replication slot keeps the WAL from the backup's start,
 * pg_backup_start on this session, a copy of the data directory, pg_backup_stop, its backup_label,
 * and the WAL segments from the start's to the stop's.
 */
export async function physicalBackup(url: string, clusterDir: string, outDir: string): Promise<{ startLsn: string; stopLsn: string }> {
  return withClient(url, async (client) => {
    const { rows: settings } = await client.query<{ wal_level: string }>(`SELECT current_setting('wal_level') AS wal_level`);
    if (!['replica', 'logical'].includes(settings[0]!.wal_level)) {
      throw new BackupError(`wal_level is ${settings[0]!.wal_level}: a physical backup needs replica or logical`);
    }
    const slot = `switchyard_backup_${randomBytes(4).toString('hex')}`;
    // Temporary: dropped when this session ends, whatever happens to this process.
    await client.query('SELECT pg_create_physical_replication_slot($1, true, true)', [slot]);
    const label = `switchyard backup ${new Date().toISOString()}`;
    const started = await client.query<{ lsn: string; wal: string }>(
      'SELECT lsn::text AS lsn, pg_walfile_name(lsn) AS wal FROM pg_backup_start($1, fast => true) AS lsn',
      [label],
    );
    let stopped = false;
    try {
      await copyLive(clusterDir, outDir, true);
      const stop = await client.query<{ lsn: string; labelfile: string; spcmapfile: string | null; wal: string }>(
        'SELECT lsn::text AS lsn, labelfile, spcmapfile, pg_walfile_name(lsn) AS wal FROM pg_backup_stop(wait_for_archive => false)',
      );
      stopped = true;
      const { labelfile, spcmapfile } = stop.rows[0]!;
      await fs.writeFile(path.join(outDir, 'backup_label'), labelfile, { mode: 0o600 });
      if (spcmapfile) await fs.writeFile(path.join(outDir, 'tablespace_map'), spcmapfile, { mode: 0o600 });
      const first = started.rows[0]!.wal;
      const last = stop.rows[0]!.wal;
      const timeline = first.slice(0, 8);
      const walDir = path.join(clusterDir, 'pg_wal');
      let copied = 0;
      for (const name of await fs.readdir(walDir)) {
        const segment = WAL_SEGMENT.test(name) && name.startsWith(timeline) && name >= first && name <= last;
        if (segment || name.endsWith('.history')) {
          await fs.copyFile(path.join(walDir, name), path.join(outDir, 'pg_wal', name));
          if (segment) copied += 1;
        }
      }
      if (copied === 0) throw new BackupError(`the WAL from ${first} to ${last} is missing from ${walDir}`);
      await fs.mkdir(path.join(outDir, 'pg_wal', 'archive_status'), { recursive: true, mode: 0o700 });
      return { startLsn: started.rows[0]!.lsn, stopLsn: stop.rows[0]!.lsn };
    } finally {
      if (!stopped) await client.query('SELECT pg_backup_stop(wait_for_archive => false)').catch(() => undefined);
    }
  });
}

/** Where a running embedded cluster listens, from its postmaster.pid (line 4: the port), or null when it is not running. */
export async function runningEmbeddedPort(clusterDir: string): Promise<number | null> {
  const content = await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => null);
  if (content === null) return null;
  const lines = content.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port)) return null;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return port;
}

/** The embedded database of a DATA_DIR (<dataDir>/postgres): its superuser URL, started here for the time of `use` if it is not running. */
export async function withEmbeddedDatabase<T>(
  dataDir: string,
  use: (db: { url: string; clusterDir: string; passwordFile: string }) => Promise<T>,
  log?: (message: string) => void,
): Promise<T> {
  const root = path.join(dataDir, 'postgres');
  const clusterDir = path.join(root, 'cluster');
  const passwordFile = path.join(root, 'password');
  if (!existsSync(path.join(clusterDir, 'PG_VERSION')))
    throw new BackupError(`no embedded database in ${root}: is DATA_DIR right, or is DATABASE_URL missing?`);
  const port = await runningEmbeddedPort(clusterDir);
  if (port !== null) {
    const password = (await fs.readFile(passwordFile, 'utf8')).trim();
    const url = `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${EMBEDDED_DATABASE_NAME}`;
    return use({ url, clusterDir, passwordFile });
  }
  const embedded = await startEmbeddedPostgres({ dataDir: root, ...(log ? { log } : {}) });
  try {
    return await use({ url: embedded.urlFor(EMBEDDED_DATABASE_NAME), clusterDir, passwordFile });
  } finally {
    await embedded.stop();
  }
}

/**
 * Restores a physical backup (a copied cluster and its password file) as `<dataDir>/postgres`: the
 * copy goes to a directory beside it, is started once by the embedded binaries (which replay its WAL
 * to a consistent state) and stopped, and only then takes the place of the old one (refused unless
 * `force`; always refused while it runs).
 */
export async function restorePhysical(
  backupCluster: string,
  backupPassword: string,
  dataDir: string,
  options: { force: boolean; log?: (message: string) => void },
): Promise<void> {
  const root = path.join(dataDir, 'postgres');
  const cluster = path.join(root, 'cluster');
  if (await runningEmbeddedPort(cluster)) throw new BackupError(`the embedded database in ${root} is running: stop the server before restoring`);
  if (existsSync(path.join(cluster, 'PG_VERSION')) && !options.force) {
    throw new BackupError(`${root} already holds a database: restore into a fresh DATA_DIR, or pass --force to replace it`);
  }
  await fs.mkdir(dataDir, { recursive: true });
  const scratch = path.join(dataDir, `postgres.restore-${randomBytes(4).toString('hex')}`);
  try {
    await fs.mkdir(scratch, { mode: 0o700 });
    await fs.cp(backupCluster, path.join(scratch, 'cluster'), { recursive: true });
    await fs.copyFile(backupPassword, path.join(scratch, 'password'));
    await fs.chmod(path.join(scratch, 'password'), 0o600);
    await chownTree(path.join(scratch, 'cluster'), await runAsIds());
    await fs.chmod(path.join(scratch, 'cluster'), 0o700);
    // Recovery to consistency happens here, not at the server's first start: a copy that cannot
    // recover never replaces anything.
    const embedded = await startEmbeddedPostgres({ dataDir: scratch, ...(options.log ? { log: options.log } : {}) });
    try {
      await ensureDatabaseExists(embedded.url, EMBEDDED_DATABASE_NAME);
    } finally {
      await embedded.stop();
    }
    await fs.rm(path.join(scratch, 'owner'), { force: true });
    const old = path.join(dataDir, `postgres.replaced-${randomBytes(4).toString('hex')}`);
    const hadOld = existsSync(root);
    if (hadOld) await fs.rename(root, old);
    await fs.rename(scratch, root);
    if (hadOld) await fs.rm(old, { recursive: true, force: true });
  } catch (error) {
    await fs.rm(scratch, { recursive: true, force: true });
    throw error;
  }
}
