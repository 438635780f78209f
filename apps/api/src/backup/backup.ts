// Backup and restore of a server's own database and store (docs/operations.md, "Backup and restore";
// decision 0028). They run on the server's machine with the server's configuration (DATA_DIR,
// DATABASE_URL, STORAGE_URL, AWS_*), as `pnpm start` reads it, not through the API:
// - the database: logical (pg_dump -Fd) for DATABASE_URL, physical (the low-level base backup API)
//   for the embedded database; @switchyard/db does both;
// - the store: every object, through the same storage interface the server uses (local or S3);
// - DATA_DIR's key files (the secret key that opens stored provider keys, the generated keys);
// - manifest.json, written last: a directory without it is not a backup.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { BackupError, dumpDatabase, findPgTools, physicalBackup, restoreDatabase, restorePhysical, serverFacts, withEmbeddedDatabase } from '@switchyard/db';
import { z } from 'zod';
import type { Config } from '../config.js';
import { NotFound } from '../lib/errors.js';
import { SECRET_KEY_FILE } from '../lib/secret-box.js';
import { ADMIN_KEY_FILE, PLATFORM_KEY_FILE } from '../server.js';
import { LocalStorage } from '../storage/local-storage.js';
import { createStorage } from '../storage/media.js';
import { isStorageKey, type BlobStorage } from '../storage/storage.js';
import { VERSION } from '../lib/version.js';

export { BackupError } from '@switchyard/db';
export { ConfigError, loadConfig } from '../config.js';

export const BACKUP_FORMAT = 'switchyard-backup';
export const BACKUP_FORMAT_VERSION = 1;
const MANIFEST = 'manifest.json';
/** DATA_DIR's files a restored server needs: the secret key that opens stored secrets, and the generated keys. */
const DATA_FILES = [SECRET_KEY_FILE, ADMIN_KEY_FILE, PLATFORM_KEY_FILE];

const FileSchema = z.object({ path: z.string().min(1), size: z.number().int().min(0), sha256: z.string().regex(/^[0-9a-f]{64}$/) });

export const ManifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  format_version: z.literal(BACKUP_FORMAT_VERSION),
  created_at: z.string(),
  switchyard_version: z.string(),
  database: z.object({
    kind: z.enum(['logical', 'physical']),
    server_version: z.string(),
    server_major: z.number().int(),
    /** The newest migration applied when the backup was made. */
    migration: z.string().nullable(),
    /** The pg_dump that made a logical backup. */
    tool: z.string().nullable(),
  }),
  store: z.object({ kind: z.enum(['local', 's3']), location: z.string(), objects: z.number().int().min(0), bytes: z.number().int().min(0) }),
  data_files: z.array(z.string()),
  /** Every file of the backup but the manifest, with its size and SHA-256. */
  files: z.array(FileSchema),
});
export type Manifest = z.infer<typeof ManifestSchema>;

type Log = (message: string) => void;

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

async function filesUnder(root: string): Promise<string[]> {
  const entries = await fs.readdir(root, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}

async function isEmptyDir(dir: string): Promise<boolean> {
  const names = await fs.readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  return names.length === 0;
}

async function writeFileAtomically(file: string, content: string, mode = 0o600): Promise<void> {
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await fs.open(tmp, 'w', mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(tmp, file);
}

/** Whether the store holds any object. */
async function storeHoldsObjects(storage: BlobStorage): Promise<boolean> {
  for await (const _ of storage.list('')) return true;
  return false;
}

export interface BackupResult {
  dir: string;
  manifest: Manifest;
}

/**
 * Backs up the server's database, store and key files into `outDir` (absent or empty), while the
 * server runs. The database first, then the store: every object the backed-up rows name was stored
 * before the rows were copied.
 */
export async function backup(config: Config, outDir: string, log: Log = () => undefined): Promise<BackupResult> {
  const dir = path.resolve(outDir);
  if (!(await isEmptyDir(dir))) throw new BackupError(`${dir} is not empty: back up into a new or empty directory`);
  const existed = existsSync(dir);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.chmod(dir, 0o700); // it holds every secret of the installation
  try {
    return await backupInto(config, dir, log);
  } catch (error) {
    // Everything in it is this backup's (it was empty): a failed backup leaves nothing behind.
    if (existed) for (const name of await fs.readdir(dir)) await fs.rm(path.join(dir, name), { recursive: true, force: true });
    else await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function backupInto(config: Config, dir: string, log: Log): Promise<BackupResult> {
  const databaseDir = path.join(dir, 'database');

  let database: Manifest['database'];
  if (config.databaseUrl) {
    const facts = await serverFacts(config.databaseUrl);
    const { tools, seen } = await findPgTools(facts.major);
    if (!tools) {
      throw new BackupError(
        `no pg_dump of PostgreSQL ${facts.major} or newer (the server runs ${facts.version}); found: ${seen.join(', ') || 'none'}. ` +
          'Install its client tools, or point PG_BIN at their directory.',
      );
    }
    log(`database: logical backup of PostgreSQL ${facts.version} with ${tools.pgDump} (${tools.major})`);
    await dumpDatabase(config.databaseUrl, tools, databaseDir);
    database = { kind: 'logical', server_version: facts.version, server_major: facts.major, migration: facts.migration, tool: `pg_dump ${tools.major}` };
  } else {
    database = await withEmbeddedDatabase(
      config.dataDir,
      async ({ url, clusterDir, passwordFile }) => {
        const facts = await serverFacts(url);
        log(`database: physical backup of the embedded PostgreSQL ${facts.version} in ${clusterDir}`);
        await physicalBackup(url, clusterDir, path.join(databaseDir, 'cluster'));
        await fs.copyFile(passwordFile, path.join(databaseDir, 'password'));
        return { kind: 'physical' as const, server_version: facts.version, server_major: facts.major, migration: facts.migration, tool: null };
      },
      log,
    );
  }

  const storage = await createStorage(config.storage);
  const storeDir = path.join(dir, 'store');
  await fs.mkdir(storeDir, { mode: 0o700 });
  let objects = 0;
  let bytes = 0;
  for await (const entry of storage.list('')) {
    if (!isStorageKey(entry.key)) continue;
    const target = path.join(storeDir, ...entry.key.split('/'));
    await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    let object;
    try {
      object = await storage.get(entry.key);
    } catch (error) {
      if (error instanceof NotFound) continue; // deleted since it was listed
      throw error;
    }
    await pipeline(object.stream, createWriteStream(target, { mode: 0o600 }));
    objects += 1;
    bytes += object.size;
  }
  log(`store: ${objects} object(s), ${bytes} bytes from ${storage.location}`);

  const dataFiles: string[] = [];
  for (const name of DATA_FILES) {
    const source = path.join(config.dataDir, name);
    if (!existsSync(source)) continue;
    await fs.mkdir(path.join(dir, 'data'), { recursive: true, mode: 0o700 });
    await fs.copyFile(source, path.join(dir, 'data', name));
    dataFiles.push(name);
  }

  const files = [];
  for (const file of await filesUnder(dir)) {
    const full = path.join(dir, file);
    files.push({ path: file, size: (await fs.stat(full)).size, sha256: await sha256Of(full) });
  }
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    format_version: BACKUP_FORMAT_VERSION,
    created_at: new Date().toISOString(),
    switchyard_version: VERSION,
    database,
    store: { kind: config.storage.kind, location: storage.location, objects, bytes },
    data_files: dataFiles,
    files,
  };
  await writeFileAtomically(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  log(`backup complete: ${dir}`);
  return { dir, manifest };
}

/** The manifest of a backup directory, every file it lists checked against its size and SHA-256. */
export async function readBackup(fromDir: string): Promise<Manifest> {
  const dir = path.resolve(fromDir);
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, MANIFEST), 'utf8');
  } catch {
    throw new BackupError(`${dir} has no ${MANIFEST}: it is not a backup, or one that did not finish`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BackupError(`${path.join(dir, MANIFEST)} is not JSON`);
  }
  const result = ManifestSchema.safeParse(parsed);
  if (!result.success)
    throw new BackupError(
      `${path.join(dir, MANIFEST)} is not a ${BACKUP_FORMAT} manifest of version ${BACKUP_FORMAT_VERSION}: ${result.error.issues[0]?.message}`,
    );
  const manifest = result.data;
  const listed = new Set(manifest.files.map((f) => f.path));
  for (const file of manifest.files) {
    const full = path.resolve(dir, file.path);
    if (!full.startsWith(`${dir}${path.sep}`)) throw new BackupError(`the manifest names a file outside the backup: ${file.path}`);
    const stat = await fs.stat(full).catch(() => null);
    if (!stat?.isFile()) throw new BackupError(`the backup lacks ${file.path}`);
    if (stat.size !== file.size || (await sha256Of(full)) !== file.sha256)
      throw new BackupError(`${file.path} does not match its checksum: the backup is damaged`);
  }
  for (const file of await filesUnder(dir)) {
    if (file !== MANIFEST && !listed.has(file)) throw new BackupError(`${file} is not in the manifest: the backup was changed after it was made`);
  }
  return manifest;
}

/** The store's objects of a backup, as (key, file) pairs. */
async function backedUpObjects(dir: string): Promise<{ key: string; file: string }[]> {
  const storeDir = path.join(dir, 'store');
  if (!existsSync(storeDir)) return [];
  return (await filesUnder(storeDir)).filter(isStorageKey).map((key) => ({ key, file: path.join(storeDir, ...key.split('/')) }));
}

export interface RestoreResult {
  manifest: Manifest;
  objects: number;
}

/**
 * Restores a backup into the server's database, store and DATA_DIR, the server stopped. Everything is
 * checked before anything changes (the manifest and checksums, that the targets are empty unless
 * `force`), then staged beside its target and swapped in: the database last but the local store.
 */
export async function restore(config: Config, fromDir: string, options: { force: boolean }, log: Log = () => undefined): Promise<RestoreResult> {
  const dir = path.resolve(fromDir);
  const manifest = await readBackup(dir);
  log(
    `backup of ${manifest.created_at}: ${manifest.database.kind} database (PostgreSQL ${manifest.database.server_version}), ${manifest.store.objects} object(s)`,
  );

  // What the backup needs of this configuration.
  let tools = null;
  if (manifest.database.kind === 'physical') {
    if (config.databaseUrl) throw new BackupError('this backup is of an embedded database: unset DATABASE_URL to restore it under DATA_DIR');
  } else {
    if (!config.databaseUrl)
      throw new BackupError('this backup is a pg_dump of a DATABASE_URL server: set DATABASE_URL to the (empty) database to restore it into');
    const facts = await serverFacts(config.databaseUrl);
    const found = await findPgTools(Math.max(facts.major, manifest.database.server_major));
    if (!found.tools)
      throw new BackupError(
        `no pg_restore of PostgreSQL ${Math.max(facts.major, manifest.database.server_major)} or newer; found: ${found.seen.join(', ') || 'none'}`,
      );
    tools = found.tools;
  }
  // The targets: refused when they hold something, unless forced.
  const storage = await createStorage(config.storage);
  if (!options.force) {
    if (await storeHoldsObjects(storage))
      throw new BackupError(`the store ${storage.location} is not empty: restore into an empty one, or pass --force to replace it`);
    for (const name of manifest.data_files) {
      if (existsSync(path.join(config.dataDir, name)))
        throw new BackupError(`${path.join(config.dataDir, name)} exists: restore into a fresh DATA_DIR, or pass --force`);
    }
  }

  // The store, staged: a local store beside its directory; S3 objects uploaded (their keys are unique names).
  const objects = await backedUpObjects(dir);
  let staged: string | null = null;
  if (config.storage.kind === 'local') {
    staged = `${config.storage.root}.restore-${randomBytes(4).toString('hex')}`;
    await fs.mkdir(path.dirname(staged), { recursive: true });
  }
  try {
    const into = staged ? new LocalStorage(staged) : storage;
    for (const { key, file } of objects) await into.put(key, createReadStream(file));
    log(`store: ${objects.length} object(s) ${staged ? 'staged' : `written to ${storage.location}`}`);

    // The database: swapped in atomically by @switchyard/db.
    if (manifest.database.kind === 'physical') {
      await restorePhysical(path.join(dir, 'database', 'cluster'), path.join(dir, 'database', 'password'), config.dataDir, { force: options.force, log });
    } else {
      await restoreDatabase(config.databaseUrl!, tools!, path.join(dir, 'database'), { force: options.force });
    }
    log('database: restored');
  } catch (error) {
    if (staged) await fs.rm(staged, { recursive: true, force: true });
    throw error;
  }

  if (staged) {
    const root = config.storage.kind === 'local' ? config.storage.root : '';
    const old = `${root}.replaced-${randomBytes(4).toString('hex')}`;
    const hadOld = existsSync(root);
    if (hadOld) await fs.rename(root, old);
    await fs.rename(staged, root);
    if (hadOld) await fs.rm(old, { recursive: true, force: true });
  } else if (options.force) {
    // S3 with --force: what the backup does not hold goes.
    const keep = new Set(objects.map((o) => o.key));
    for await (const entry of storage.list('')) if (!keep.has(entry.key)) await storage.delete(entry.key);
  }
  await fs.mkdir(config.dataDir, { recursive: true });
  for (const name of manifest.data_files) {
    await writeFileAtomically(path.join(config.dataDir, name), await fs.readFile(path.join(dir, 'data', name), 'utf8'));
  }
  log('restore complete');
  return { manifest, objects: objects.length };
}
