// `switchyard backup` and `switchyard restore` (docs/operations.md, "Backup and
// restore") on real servers: a server filled by `switchyard demo` is backed up while it runs, written
// to once more, and restored into a fresh data directory (and database, and bucket); a server started
// there answers every GET operation of the OpenAPI document as the first did before the backup, with
// each kind of key, downloads the same bytes, and lacks the write made after the backup.
// Two paths: the embedded database (physical: the base backup API) with the local store, in every
// run; a DATABASE_URL server (logical: pg_dump/pg_restore) with an S3 store, when a pg_dump of the
// test server's major version or newer is on this machine (the test:pg15 phase; PostgreSQL 18's
// client tools are not installable here). Under CI=true a phase's path that cannot run fails.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { createEmptyDatabase, createTestDatabase, scaled } from '@switchyard/db/testing';
import { embeddedBinaries, findPgTools, serverFacts } from '@switchyard/db';
import { inheritedEnv, startTestServer, testS3, type TestServer } from '@switchyard/api/testing';
import { createSwitchyardClient } from '@switchyard/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { DemoSummary } from '../src/commands/demo.js';
import { run } from '../src/cli.js';

const adminUrl = inject('pgAdminUrl');
const template = inject('pgTemplate');
const inCI = process.env.CI === 'true';
// test:pg15 (scripts/test-pg15.sh) runs the suite against TEST_DATABASE_URL: there the logical path must run.
const externalPhase = Boolean(process.env.TEST_DATABASE_URL);

const embeddedAvailable = await embeddedBinaries().then(
  (bins) => existsSync(bins.postgres),
  () => false,
);
const testServer = await serverFacts(adminUrl);
const { tools: logicalTools, seen: toolsSeen } = await findPgTools(testServer.major);
const skipReasons: Record<string, string | null> = {
  // Each phase runs its own path, to keep the file's time modest: the embedded one the physical,
  // test:pg15 the logical (the embedded PostgreSQL is the same in both).
  physical: externalPhase
    ? 'this phase is for TEST_DATABASE_URL (the default, embedded phase runs the physical path)'
    : embeddedAvailable
      ? null
      : 'the embedded PostgreSQL binaries are not installed',
  logical: logicalTools
    ? null
    : `no pg_dump of PostgreSQL ${testServer.major} or newer for the test server (${testServer.version}); found: ${toolsSeen.join(', ') || 'none'}`,
};
for (const [path_, reason] of Object.entries(skipReasons)) {
  if (!reason) continue;
  if (inCI && (path_ === 'physical' ? !externalPhase : externalPhase)) {
    throw new Error(`the ${path_} backup path must run in this CI phase, but ${reason}`);
  }
  console.log(`backup.test: the ${path_} path is skipped: ${reason}`);
}

async function switchyard(args: string[], env: Record<string, string | undefined>) {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: (t) => (stdout += `${t}\n`),
    stderr: (t) => (stderr += `${t}\n`),
    env: { PATH: process.env.PATH, ...inheritedEnv(), ...env },
    cwd: process.cwd(),
  });
  return { code, stdout, stderr };
}

const openapi = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, { get?: { parameters?: { name: string; in: string; required?: boolean }[] } }>;
};

/** The demo's records that fill the GET operations' required parameters. */
interface World {
  summary: DemoSummary;
  keyHash: string;
}

/** A GET operation's path with its required parameters filled from the demo's records, or null when the demo makes nothing to name. */
function fill(template_: string, world: World): string | null {
  const { summary } = world;
  const [author, slug] = summary.model.split('/') as [string, string];
  const byPath: Record<string, Record<string, string>> = {
    '/workspaces/{id}': { id: summary.workspace_slug },
    '/workspaces/{id}/members': { id: summary.workspace_slug },
    '/workspaces/{id}/budgets': { id: summary.workspace_id },
    '/workspaces/{id}/budgets/{interval}': { id: summary.workspace_id, interval: 'monthly' },
    '/byok/{id}': { id: summary.byok_id },
    '/guardrails/{id}': { id: summary.guardrail_id },
    '/guardrails/{id}/assignments/keys': { id: summary.guardrail_id },
    '/guardrails/{id}/assignments/members': { id: summary.guardrail_id },
    '/scim/group-mappings/{id}': { id: summary.scim_mapping_id },
  };
  const common: Record<string, string> = {
    hash: world.keyHash,
    author,
    slug: template_.startsWith('/presets/') ? summary.preset_slug : slug,
    version: '1',
    container_id: summary.container_id,
    file_id: summary.container_file_id,
    jobId: summary.video_job_id,
  };
  const values = { ...common, ...byPath[template_] };
  if (template_.startsWith('/files/')) return null; // the demo promotes no document
  let filled = template_;
  for (const [, name] of template_.matchAll(/\{([^}]+)\}/g)) {
    const value = values[name!];
    if (value === undefined) return null;
    filled = filled.replace(`{${name}}`, encodeURIComponent(value));
  }
  const query = (openapi.paths[template_]?.get?.parameters ?? []).filter((p) => p.in === 'query' && p.required);
  const params = new URLSearchParams();
  for (const p of query) {
    if (p.name === 'id' && template_.startsWith('/generation')) params.set('id', summary.generation_id);
    else if (p.name === 'index') params.set('index', '0');
    else return null;
  }
  return params.size ? `${filled}?${params}` : filled;
}

/**
 * GET /export is read apart (exported()): each export appends an audit entry (exports.create),
 * which the audit log's answers would show.
 */
const EXPORT = '/export';

/** The organization's export (GET /export) without the header's and the trailer's times. */
async function exported(server: TestServer, key: string) {
  const res = await fetch(`${server.url}/api/v1${EXPORT}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  const lines = (await res.text())
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const { created_at: _c, ...header } = lines[0]!;
  const { completed_at: _d, ...trailer } = lines.at(-1)!;
  return normalized([header, ...lines.slice(1, -1), trailer], server.url);
}

/** GET operations the demo makes nothing for (a new one fails here until it is named or filled). */
const UNFILLED = [
  '/files/{file_id}',
  '/files/{file_id}/content',
  '/observability/destinations/{id}',
  '/observability/destinations/{id}/status',
  '/scim/sync-jobs/{id}',
];

/**
 * Fields that legitimately differ between two servers over the same data: an error's request id
 * (one per request), and when a key was last used (noted off the request path, at most once a
 * minute, so some of the recording calls' uses land before the backup and some after).
 */
const VOLATILE = new Set(['request_id', 'last_used_at']);

/** An answer without its volatile fields, the server's own address written as <server>. */
function normalized(value: unknown, origin: string): unknown {
  if (typeof value === 'string') return value.replaceAll(origin, '<server>');
  if (Array.isArray(value)) return value.map((v) => normalized(v, origin));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !VOLATILE.has(k))
        .map(([k, v]) => [k, normalized(v, origin)]),
    );
  }
  return value;
}

/** Every GET operation's answer (status and body; a digest of bytes) with each kind of key. */
async function answers(server: TestServer, world: World, keys: Record<string, string>) {
  const recorded: Record<string, unknown> = {};
  const unfilled: string[] = [];
  for (const [template_, item] of Object.entries(openapi.paths)) {
    if (!item.get || template_ === EXPORT) continue;
    const filled = fill(template_, world);
    if (filled === null) {
      unfilled.push(template_);
      continue;
    }
    for (const [kind, key] of Object.entries(keys)) {
      const res = await fetch(`${server.url}/api/v1${filled}`, { headers: { authorization: `Bearer ${key}` } });
      const type = res.headers.get('content-type') ?? '';
      const body = type.startsWith('application/json')
        ? normalized(await res.json(), server.url)
        : {
            bytes: createHash('sha256')
              .update(Buffer.from(await res.arrayBuffer()))
              .digest('hex'),
            type,
          };
      recorded[`${kind} GET ${filled}`] = { status: res.status, body };
    }
  }
  return { recorded, unfilled };
}

interface Scenario {
  name: string;
  path: 'physical' | 'logical';
}

const scenarios: Scenario[] = [
  { name: 'the embedded database (physical) and the local store', path: 'physical' },
  { name: 'a DATABASE_URL database (logical) and an S3 store', path: 'logical' },
];

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

describe.each(scenarios)('backup and restore of $name', ({ path: kind }) => {
  it.skipIf(skipReasons[kind] !== null)(
    `a demo-filled server, backed up while it runs, restored into a fresh data directory: every answer is the same, the later write is absent${skipReasons[kind] ? ` (skipped: ${skipReasons[kind]})` : ''}`,
    async () => {
      const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-backup-test-'));
      cleanups.push(() => fs.rm(scratch, { recursive: true, force: true }));
      await fs.chmod(scratch, 0o711); // the embedded PostgreSQL runs as another user (as root): it must pass through
      const dataA = path.join(scratch, 'a');
      const dataB = path.join(scratch, 'b');
      const out = path.join(scratch, 'backup');
      await fs.mkdir(dataA);
      await fs.mkdir(dataB);

      // Server A, where the demo runs; its configuration is what the CLI reads, as `pnpm start` would.
      let envA: Record<string, string> = { DATA_DIR: dataA };
      let envB: Record<string, string> = { DATA_DIR: dataB };
      let serverA: TestServer;
      let databaseB: Awaited<ReturnType<typeof createEmptyDatabase>> | undefined;
      if (kind === 'physical') {
        serverA = await startTestServer({ adminUrl, template, database: 'embedded', dataDir: dataA });
      } else {
        const s3 = await testS3();
        const [bucketA, bucketB] = [await s3.createBucket(), await s3.createBucket()];
        const databaseA = await createTestDatabase(adminUrl, template);
        databaseB = await createEmptyDatabase(adminUrl);
        envA = { ...envA, DATABASE_URL: databaseA.url, ...s3.env(bucketA) };
        envB = { ...envB, DATABASE_URL: databaseB.url, ...s3.env(bucketB) };
        serverA = await startTestServer({ adminUrl, template, database: databaseA, dataDir: dataA, store: 's3', env: s3.env(bucketA) });
      }
      cleanups.push(() => serverA.close());

      const demo = await switchyard(['demo', '--json'], {
        SWITCHYARD_URL: serverA.url,
        SWITCHYARD_API_KEY: serverA.managementKey,
        SWITCHYARD_PLATFORM_KEY: serverA.platformKey,
      });
      expect(demo, demo.stderr).toMatchObject({ code: 0, stderr: '' });
      const summary = JSON.parse(demo.stdout) as DemoSummary;
      const admin = createSwitchyardClient({ url: serverA.url, apiKey: serverA.managementKey });
      const keyHash = (await admin.keys.list.query({ limit: 1 })).data[0]!.hash;
      const world = { summary, keyHash };
      const keys = { management: serverA.managementKey, regular: summary.key, platform: serverA.platformKey };

      const exportBefore = await exported(serverA, keys.management); // its audit entry goes into the backup
      const before = await answers(serverA, world, keys);
      expect([...before.unfilled].sort()).toEqual([...UNFILLED].sort());
      expect(Object.keys(before.recorded).length).toBeGreaterThan(100);

      // Online: server A keeps running (and answering) while the backup is made.
      const backedUp = await switchyard(['backup', '--out', out, '--json'], envA);
      expect(backedUp, backedUp.stderr).toMatchObject({ code: 0 });
      const { manifest } = JSON.parse(backedUp.stdout) as { manifest: { database: { kind: string; migration: string }; store: { objects: number } } };
      expect(manifest.database.kind).toBe(kind);
      expect(manifest.database.migration).toMatch(/^\d{14}_/);
      expect(manifest.store.objects).toBeGreaterThan(0);
      expect((await serverA.request('/api/v1/key')).status).toBe(200);

      // A backup that fails (here: no database where DATA_DIR says) leaves no directory behind.
      const failedOut = path.join(scratch, 'failed');
      const failed = await switchyard(['backup', '--out', failedOut], { DATA_DIR: path.join(scratch, 'nothing') });
      expect(failed).toMatchObject({ code: 1, stderr: expect.stringContaining('no embedded database') });
      expect(existsSync(failedOut)).toBe(false);

      // A write after the backup, which the restored server must not have.
      await admin.workspaces.create.mutate({ name: 'After the backup', slug: 'after-backup' });
      // A directory that is not a finished backup is refused, and nothing is touched.
      const half = path.join(scratch, 'half');
      await fs.cp(out, half, { recursive: true });
      await fs.rm(path.join(half, 'manifest.json'));
      const refused = await switchyard(['restore', '--from', half], envB);
      expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('has no manifest.json') });
      expect(await fs.readdir(dataB)).toEqual([]);
      // Nor is one whose files do not match their checksums.
      const damaged = path.join(scratch, 'damaged');
      await fs.cp(out, damaged, { recursive: true });
      const storeFile = (await fs.readdir(path.join(damaged, 'store'), { recursive: true, withFileTypes: true })).find((e) => e.isFile())!;
      await fs.appendFile(path.join(storeFile.parentPath, storeFile.name), 'x');
      const mismatch = await switchyard(['restore', '--from', damaged], envB);
      expect(mismatch).toMatchObject({ code: 1, stderr: expect.stringContaining('does not match its checksum') });
      expect(await fs.readdir(dataB)).toEqual([]);
      await fs.rm(damaged, { recursive: true });
      await fs.rm(half, { recursive: true });

      const restored = await switchyard(['restore', '--from', out], envB);
      expect(restored, restored.stderr).toMatchObject({ code: 0 });
      // Restoring again over what is now there is refused without --force.
      const again = await switchyard(['restore', '--from', out], envB);
      expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/not empty|already holds|exists/) });
      // With --force it replaces them: the server below starts on this second restore.
      const forced = await switchyard(['restore', '--from', out, '--force'], envB);
      expect(forced, forced.stderr).toMatchObject({ code: 0 });
      expect((await fs.readdir(dataB)).filter((name) => /\.(restore|replaced)-/.test(name))).toEqual([]);

      const serverB = await startTestServer({
        adminUrl,
        template,
        database: kind === 'physical' ? 'embedded' : databaseB!,
        dataDir: dataB,
        keys: { managementKey: serverA.managementKey, platformKey: serverA.platformKey },
        ...(kind === 'logical' ? { store: 's3' as const, env: { STORAGE_URL: envB.STORAGE_URL! } } : {}),
      });
      cleanups.push(() => serverB.close());
      const after = await answers(serverB, world, keys);
      expect(after.unfilled).toEqual(before.unfilled);
      const differing = Object.entries(before.recorded)
        .filter(([call, answer]) => !isDeepStrictEqual(after.recorded[call], answer))
        .map(([call, answer]) => ({ call, before: answer, after: after.recorded[call] }));
      expect(differing).toEqual([]);
      expect(await exported(serverB, keys.management)).toEqual(exportBefore);

      expect((await serverB.request('/api/v1/workspaces/after-backup')).status).toBe(404);
      expect((await serverA.request('/api/v1/workspaces/after-backup')).status).toBe(200);
      const file = await serverB.request(`/api/v1/containers/${summary.container_id}/files/${summary.container_file_id}/content`);
      expect(file.status).toBe(200);
      expect(await file.text()).toContain('# Weekly report');
    },
    scaled(240_000),
  );
});
