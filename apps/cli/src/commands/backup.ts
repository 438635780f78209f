// `switchyard backup` and `switchyard restore` (docs/operations.md, "Backup and restore"): they act on
// the server's own database and store, with the server's configuration (DATA_DIR, DATABASE_URL,
// STORAGE_URL, AWS_*), so they run where the server is installed, not over the API. The work is the
// server's (@switchyard/api/backup), loaded only for these commands: the CLI installed alone (npm)
// has no server in it, and says so.
import path from 'node:path';
import { CliError, requireString, type LocalCommand, type LocalContext } from '../command.js';
import { renderRecord } from '../output.js';

type ServerBackup = typeof import('@switchyard/api/backup');

async function serverBackup(): Promise<ServerBackup> {
  try {
    return await import('@switchyard/api/backup');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new CliError(
      "backup and restore run on the server's machine, from its installation (the repository: `pnpm switchyard backup --out DIR`), " +
        'with its DATA_DIR, DATABASE_URL and STORAGE_URL; this CLI was installed without the server',
    );
  }
}

/** The server's configuration, as `pnpm start` reads it; DATA_DIR relative to the working directory. */
function serverConfig(api: ServerBackup, ctx: LocalContext) {
  try {
    return api.loadConfig({ ...ctx.env, DATA_DIR: path.resolve(ctx.cwd, ctx.env.DATA_DIR || '.data') });
  } catch (error) {
    if (error instanceof api.ConfigError) throw new CliError(error.message);
    throw error;
  }
}

/** Failures a person can act on are printed alone; anything else keeps its stack for the report. */
async function reported<T>(api: ServerBackup, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof api.BackupError) throw new CliError(error.message);
    throw error;
  }
}

export const backupCommands: LocalCommand[] = [
  {
    local: true,
    path: ['backup'],
    summary: "Back up the server's database and stored bytes into a new directory, while it runs (on the server's machine)",
    options: {
      out: { type: 'string', value: '<dir>', description: 'the directory to write (absent or empty)' },
    },
    async run(ctx) {
      const out = path.resolve(ctx.cwd, requireString(ctx, 'out'));
      const api = await serverBackup();
      const config = serverConfig(api, ctx);
      const { dir, manifest } = await reported(api, () => api.backup(config, out, ctx.progress));
      const summary = {
        dir,
        database: `${manifest.database.kind} (PostgreSQL ${manifest.database.server_version}, migration ${manifest.database.migration ?? '-'})`,
        store: `${manifest.store.kind}: ${manifest.store.objects} object(s), ${manifest.store.bytes} bytes`,
        files: manifest.files.length,
        created_at: manifest.created_at,
      };
      return { json: { dir, manifest }, human: renderRecord(summary) };
    },
  },
  {
    local: true,
    path: ['restore'],
    summary: "Restore a backup into the server's database and store, the server stopped (on the server's machine)",
    options: {
      from: { type: 'string', value: '<dir>', description: 'the backup directory (its manifest.json and files are checked first)' },
      force: { type: 'boolean', description: 'replace a database, store or key files that are not empty' },
    },
    async run(ctx) {
      const from = path.resolve(ctx.cwd, requireString(ctx, 'from'));
      const api = await serverBackup();
      const config = serverConfig(api, ctx);
      const force = ctx.options.force === true;
      const { manifest, objects } = await reported(api, () => api.restore(config, from, { force }, ctx.progress));
      const target = config.databaseUrl ? 'DATABASE_URL' : path.join(config.dataDir, 'postgres');
      const summary = {
        from,
        database: `${manifest.database.kind} backup of ${manifest.created_at} restored into ${target}`,
        store: `${objects} object(s) into ${config.storage.kind === 'local' ? config.storage.root : `s3://${config.storage.bucket}/${config.storage.prefix}`}`,
        next: 'start the server: it applies any newer migration',
      };
      return { json: { from, manifest, objects }, human: renderRecord(summary) };
    },
  },
];
