// `pnpm bench`: starts the real server (apps/api/dist/main.js, in its own process) over a fresh
// embedded PostgreSQL, seeds an organization with set-based SQL, and drives every scenario (bench/README.md)
// with autocannon (or, for recording, with @switchyard/client) beside two floors measured
// in the same run: a bare node:http server and an express app answering the same bytes; for the
// reads and POST /keys that make one statement per answer, a third: the express app making that
// statement before answering.
// It reports figures; it never fails on them. It exits non-zero only when the harness breaks.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  activityDays,
  activityQuery,
  createKeyQuery,
  generationQuery,
  guardrailsPageQuery,
  keysPageQuery,
  MemberOrderCache,
  membersByIdQuery,
  reservationOf,
  reservationQuery,
  reserveQuery,
} from './floor-statements.js';
import { NODE_FLAGS, START_ENV } from '@switchyard/api/node-flags';
import { createSwitchyardClient } from '@switchyard/client';
import {
  createDb,
  freePort,
  migrate,
  orderedValues,
  provisionDatabase,
  type DatabaseHandle,
  type Db,
  type Statement,
  type StatementValues,
} from '@switchyard/db';
import {
  budgetReport,
  MEMBERS_DEEP,
  MEMBERS_FIRST,
  printTable,
  type FloorMode,
  type Floors,
  type Measurement,
  type ScenarioResult,
  type SizeRun,
  type TopStatement,
} from './report.js';
import { CONSOLE_JS_BUDGET_BYTES, consoleBundle } from './console-bundle.js';
import { compareToBaseline, guardReport, ratiosOf, type Baseline } from './baseline.js';
import { runFairness } from './fairness.js';
import { runAuthorizers, runAutocannon, runBatchRecorders, runDownloads, runRecorders, runUploads, type LoadSpec } from './load.js';
import { readRss, sampleRss, scriptPath, startChild, stopAllChildren, stopChild, waitForMessage, waitUntil } from './processes.js';
import type { StatementFile } from './floor.js';
import { seed, seededGenerationId, SIZES } from './seed.js';

const USAGE = `pnpm bench [options]
  --size small|large|both   seed size (default small; both runs small, then large, each on a fresh database)
  --duration <s>            seconds of load per scenario and per floor (default 10)
  --warmup <s>              seconds of unmeasured load before each measurement (default 1)
  --connections <n>         autocannon connections (default 32)
  --callers <n>             concurrent callers (sharing one @switchyard/client) when recording (default 16)
  --pending <n>             recordings each caller keeps waiting for their answers, batch recorder (default 128)
  --file-mib <n>            size of the downloaded container file in MiB (default 100)
  --downloads <n>           downloads per connection in the download scenario (default 2; node:http client)
  --uploads <n>             concurrent uploads in the upload scenario, one --file-mib file each (default 2)
  --log-level <level>       the server's LOG_LEVEL (default info, as deployed; its log goes to a file)
  --only <a,b>              run only the scenarios whose names contain one of these words
  --cpu-prof <dir>          run the server under node --cpu-prof; its .cpuprofile lands in <dir> when it stops
  --explain                 after each reserving routing scenario, one reservation statement under auto_explain
                            (ANALYZE, BUFFERS, nested statements), its plans written beside the results file
  --write-baseline          write this run's CPU per answer over its floors to bench/baseline.json (the guard's baseline;
                            do it on purpose, from a run on a quiet machine)
  --smoke                   small size, 1 s per scenario, no warm-up, an 8 MiB file: checks the harness
  --help`;

interface Options {
  sizes: ('small' | 'large')[];
  duration: number;
  warmup: number;
  connections: number;
  callers: number;
  pending: number;
  fileMiB: number;
  downloads: number;
  uploads: number;
  logLevel: string;
  only: string[];
  smoke: boolean;
  cpuProf: string | undefined;
  explain: boolean;
  writeBaseline: boolean;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: 'small' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string', default: '32' },
      callers: { type: 'string', default: '16' },
      pending: { type: 'string', default: '128' },
      'file-mib': { type: 'string' },
      downloads: { type: 'string', default: '2' },
      uploads: { type: 'string', default: '2' },
      'log-level': { type: 'string', default: 'info' },
      only: { type: 'string', default: '' },
      smoke: { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
      explain: { type: 'boolean', default: false },
      'write-baseline': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const number = (name: string, text: string, min: number) => {
    const n = Number(text);
    if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number >= ${min} (got ${text})`);
    return n;
  };
  const smoke = values.smoke;
  const size = smoke ? 'small' : values.size;
  if (size !== 'small' && size !== 'large' && size !== 'both') throw new UsageError(`--size must be small, large or both (got ${size})`);
  return {
    sizes: size === 'both' ? ['small', 'large'] : [size],
    duration: number('duration', values.duration ?? (smoke ? '1' : '10'), 1),
    warmup: number('warmup', values.warmup ?? (smoke ? '0' : '1'), 0),
    connections: number('connections', values.connections, 1),
    callers: number('callers', values.callers, 1),
    pending: number('pending', values.pending, 1),
    fileMiB: number('file-mib', values['file-mib'] ?? (smoke ? '8' : '100'), 1),
    downloads: number('downloads', values.downloads, 1),
    uploads: number('uploads', values.uploads, 1),
    logLevel: values['log-level'],
    only: values.only
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    smoke,
    cpuProf: values['cpu-prof'] === undefined ? undefined : path.resolve(values['cpu-prof']),
    explain: values.explain,
    writeBaseline: values['write-baseline'],
  };
}

class UsageError extends Error {}

const log = (line: string) => console.log(line);
const apiMain = fileURLToPath(new URL('./main.js', import.meta.resolve('@switchyard/api')));
const demoCatalog = fileURLToPath(new URL('../../demo/catalog.json', import.meta.url));
const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));
const consoleDist = fileURLToPath(new URL('../../apps/console/dist/', import.meta.url));
const baselineFile = fileURLToPath(new URL('../baseline.json', import.meta.url));
/** The statements printed per scenario from pg_stat_statements (the results file keeps TOP_KEPT). */
const TOP_PRINTED = 5;
const TOP_KEPT = 15;
/**
 * The bench's PostgreSQL loads pg_stat_statements (only a start can), counting the statements
 * nested in functions too (routing_reserve(), routing_spend()): the profile of each scenario's
 * database work.
 */
const POSTGRES_SETTINGS = { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' };
/** The fairness scenario (bench/src/fairness.ts). */
const FAIRNESS_NAME = "fairness: another organization's GET /key while one runs its analytics share";

/** The server's DATABASE_POOL_MAX (its default), and the database floor's pool. */
const POOL_MAX = 20;
/** The server's RESERVATION_TTL_MS (its default), which the database floor's reservations hold too. */
const RESERVATION_TTL_MS = 600_000;
/** The routing key's limit, its workspace's monthly budget and its guardrail's limit (USD): never reached in a run. */
const ROUTING_LIMIT_USD = 1_000_000;
/** What each reserving decision holds, and what its generation then costs (USD). */
const ROUTING_COST_USD = 0.0001;
const ROUTING_MODEL = 'openai/gpt-4o';

/** The server, its database and the organization the scenarios read. */
interface Stack {
  url: string;
  pid: number;
  /** The embedded PostgreSQL's postmaster (its backends are its children). */
  dbPid: number | undefined;
  managementKey: string;
  /** The platform's key: catalog import, recording, opening containers and writing their files. */
  platformKey: string;
  organizationId: string;
  workspaceId: string;
  regularKey: string;
  regularKeyHash: string;
  /** The member the regular key acts for (its creator). */
  regularUserId: string;
  regularKeyId: string;
  databaseUrl: string;
  db: Db;
}

async function startStack(tmp: string, opts: Options, cleanups: (() => Promise<void>)[]): Promise<Stack> {
  const dataDir = path.join(tmp, 'data');
  log(`database: fresh embedded PostgreSQL in ${dataDir}`);
  const database: DatabaseHandle = await provisionDatabase({ dataDir, settings: POSTGRES_SETTINGS });
  cleanups.push(() => database.close());
  await migrate(database.url);

  const port = await freePort();
  const managementKey = `sk-sy-v1-${randomBytes(32).toString('hex')}`;
  const platformKey = `sk-sy-platform-v1-${randomBytes(32).toString('hex')}`;
  const server = startChild(
    apiMain,
    [],
    {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      DATABASE_POOL_MAX: String(POOL_MAX),
      LOG_LEVEL: opts.logLevel,
      SWITCHYARD_BOOTSTRAP_KEY: managementKey,
      SWITCHYARD_PLATFORM_KEY: platformKey,
      RESERVATION_TTL_MS: String(RESERVATION_TTL_MS),
      // The alerts scenarios' webhook receivers listen on loopback.
      UPSTREAM_ALLOWED_HOSTS: '127.0.0.1',
      ...START_ENV,
    },
    path.join(tmp, 'server.log'),
    [...NODE_FLAGS, ...(opts.cpuProf === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProf}`])],
  );
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(server, 'the server', async () => (await fetch(`${url}/readyz`)).ok, 60_000);
  log(`server: ${apiMain} (pid ${server.pid}) on ${url}, log in ${path.join(tmp, 'server.log')}`);
  cleanups.push(() => stopChild(server));

  const admin = createSwitchyardClient({ url, apiKey: managementKey });
  const platform = createSwitchyardClient({ url, apiKey: platformKey });
  const catalog = JSON.parse(await fsp.readFile(demoCatalog, 'utf8')) as Parameters<typeof platform.models.import.mutate>[0];
  await platform.models.import.mutate(catalog);
  const created = await admin.keys.create.mutate({ name: 'bench reader' });
  const regularKey = created.key;
  const regularUserId = created.data.creator_user_id;
  if (!regularUserId) throw new Error('the bench key has no creator');
  const db = createDb(database.url, { poolMax: 4 });
  cleanups.push(() => db.$disconnect());
  await db.$executeRawUnsafe('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const regularKeyId = (await db.apiKey.findUniqueOrThrow({ where: { hash: created.data.hash }, select: { id: true } })).id;
  return {
    url,
    pid: server.pid!,
    dbPid: postmasterPid(dataDir),
    managementKey,
    platformKey,
    organizationId: (await admin.keys.current.query()).data.organization_id!,
    workspaceId: created.data.workspace_id,
    regularKey,
    regularKeyHash: created.data.hash,
    regularUserId,
    regularKeyId,
    databaseUrl: database.url,
    db,
  };
}

/** The pid in the embedded cluster's postmaster.pid (its first line); undefined if unreadable. */
function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, 'postgres', 'cluster', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function seedStack(stack: Stack, size: 'small' | 'large'): Promise<{ seconds: number }> {
  const [target] = await stack.db.$queryRaw<{ organizationId: string; workspaceId: string; ownerUserId: string; benchKeyId: string }[]>`
    SELECT k.organization_id AS "organizationId", k.workspace_id::text AS "workspaceId", k.creator_user_id AS "ownerUserId",
           k.id::text AS "benchKeyId"
    FROM api_keys k WHERE k.hash = ${stack.regularKeyHash}`;
  if (!target) throw new Error('the bench key is missing from api_keys');
  log(`seeding the ${size} size (${JSON.stringify(SIZES[size])})`);
  const started = performance.now();
  await seed(stack.db, target, SIZES[size], log);
  const seconds = (performance.now() - started) / 1000;
  log(`  seeded in ${seconds.toFixed(1)} s`);
  return { seconds };
}

/** Writes a file of `mib` MiB of random bytes, uploads it as a container file, returns its download path. */
async function uploadContainerFile(stack: Stack, tmp: string, mib: number): Promise<{ path: string; file: string }> {
  const file = path.join(tmp, 'container-file.bin');
  const out = fs.createWriteStream(file);
  const chunk = randomBytes(1024 * 1024);
  for (let i = 0; i < mib; i++) if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));

  const platform = createSwitchyardClient({ url: stack.url, apiKey: stack.platformKey });
  const { data: container } = await platform.files.openContainer.mutate({ session_key: 'bench-session', workspace_id: stack.workspaceId });
  const fileId = `cfile_${Buffer.from('outputs/bench.bin').toString('base64url')}`;
  const { port } = new URL(stack.url);
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: `/internal/containers/${container.container_id}/files/${fileId}?organization_id=${stack.organizationId}`,
        headers: {
          authorization: `Bearer ${stack.platformKey}`,
          'content-type': 'application/octet-stream',
          'content-length': String(mib * 1024 * 1024),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    fs.createReadStream(file).pipe(req);
  });
  if (status !== 201) throw new Error(`uploading the container file answered ${status}`);
  return { path: `/api/v1/containers/${container.container_id}/files/${fileId}/content`, file };
}

/**
 * Writes the file the upload scenario sends: `mib` MiB of CSV (text, so the server checks UTF-8 to
 * its last byte: its most expensive type), exactly `mib` MiB long.
 */
async function writeUploadFile(tmp: string, mib: number): Promise<{ file: string; bytes: number }> {
  const file = path.join(tmp, 'upload.csv');
  const bytes = mib * 1024 * 1024;
  const out = fs.createWriteStream(file);
  const header = 'id,value,checksum\n';
  out.write(header);
  let written = header.length;
  const rows: string[] = [];
  for (let i = 0; i < 16_384; i++) rows.push(`${i},${randomBytes(12).toString('hex')},${randomBytes(4).toString('hex')}\n`);
  const block = Buffer.from(rows.join(''));
  while (written < bytes) {
    const chunk = block.subarray(0, Math.min(block.length, bytes - written));
    written += chunk.length;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return { file, bytes };
}

interface Scenario {
  name: string;
  kind: ScenarioResult['kind'];
  spec: LoadSpec;
  /** The statement (and values) the server makes per answer, for the database floor. */
  statement?: Omit<StatementFile, 'databaseUrl' | 'poolMax'>;
  /**
   * Recording only: records for keys of their own with small limits, so that each crosses
   * 50, 80 and 100 percent during the run (three limit.threshold_crossed alerts a key), with no
   * destination, a webhook destination whose receiver answers, or one whose receiver never answers;
   * or (traces) with the workspace's broadcast on and an otel-collector destination that answers,
   * so that every recording also emits a generation trace that is delivered.
   */
  alerts?: AlertsTarget;
  /** Made before the scenario's floors and its run; what it returns undoes it after them. */
  prepare?: () => Promise<() => Promise<void>>;
}

type AlertsTarget = 'none' | 'live' | 'dead' | 'traces';

/** The key routing.authorize decides for (routing scenarios only). */
interface Extras {
  stack: Stack;
  size: string;
  routingKeyHash?: string;
  /** The file the upload scenario sends (written when that scenario runs). */
  upload?: { file: string; bytes: number };
  /** The webhook receivers of the alerts scenarios (started with the first of them). */
  receivers?: Receivers;
  /** The keys an alerts scenario records for (made before it runs). */
  alertKeys?: string[];
}

/** The last n days up to now, as the analytics query takes a range (ISO 8601 with seconds). */
function lastDays(days: number) {
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { start: iso(Date.now() - days * 86_400_000), end: iso(Date.now()) };
}

/**
 * A scenario's statement for the database floor, from the service's own statement and values: the
 * values (by name for a named statement) in $1.. order, as the floor sends the text through plain pg.
 */
const floorStatement = (
  query: { statement: Statement; values: StatementValues },
  extra: Pick<NonNullable<Scenario['statement']>, 'vary' | 'fresh' | 'release'> = {},
) => ({
  text: query.statement.text,
  values: [...orderedValues(query.statement, query.values)],
  ...extra,
});

/** `memberIds`: the organization's member order, as the server keeps it (MemberOrderCache). */
function scenarios(stack: Stack, size: 'small' | 'large', download: { path: string }, opts: Options, memberIds: string[] | null): Scenario[] {
  const regular = { authorization: `Bearer ${stack.regularKey}` };
  const management = { authorization: `Bearer ${stack.managementKey}` };
  const platform = { authorization: `Bearer ${stack.platformKey}` };
  // The heaviest analytics query: a scenario of its own, and the fairness scenario's load.
  const hourlyP99ByProvider: LoadSpec = {
    method: 'POST',
    path: '/api/v1/analytics/query',
    headers: { ...management, 'content-type': 'application/json' },
    body: JSON.stringify({
      metrics: ['p99_latency'],
      dimensions: ['provider'],
      granularity: 'hour',
      time_range: lastDays(7),
      filters: [{ field: 'workspace', operator: 'eq', value: stack.workspaceId }],
    }),
  };
  const generations = SIZES[size].generations;
  const randomGeneration = () => seededGenerationId(1 + Math.floor(Math.random() * generations));
  const firstGeneration = seededGenerationId(1);
  const generationStatement = generationQuery(
    { organizationId: stack.organizationId, managementKey: false, workspaceId: stack.workspaceId, userId: stack.regularUserId, keyId: stack.regularKeyId },
    firstGeneration,
  );
  const now = new Date();
  const keysStatement = keysPageQuery(stack.organizationId, null, { limit: 100 }, now);
  // The page of members a path asks for: the slice of the order the server reads by id.
  const membersStatement = (path: string) => {
    const query = new URL(path, stack.url).searchParams;
    const offset = Number(query.get('offset'));
    return memberIds ? floorStatement(membersByIdQuery(stack.organizationId, memberIds.slice(offset, offset + Number(query.get('limit'))))) : undefined;
  };
  const newKey = { name: 'bench key', limit: 10, limit_reset: 'monthly' as const };
  // The management key's user created the regular key, so it is the creator POST /keys records.
  // POST /keys' statement appends its audit entry: the floor writes one too.
  const benchAudit = {
    actor: { kind: 'management_key' as const, keyHash: null, label: 'bench', userId: stack.regularUserId, organizationId: stack.organizationId },
    requestId: null,
    clientAddress: '127.0.0.1',
    at: now,
  };
  const insertKey = (secret: string) =>
    createKeyQuery(stack.organizationId, null, stack.regularUserId, newKey, { id: randomUUID(), secret }, now, benchAudit, 'keys.create');
  const [insertA, insertB] = [insertKey(`sk-sy-v1-${'a'.repeat(64)}`), insertKey(`sk-sy-v1-${'b'.repeat(64)}`)];
  const categories = ['latency', 'incoherence', 'incorrect_response', 'formatting', 'billing', 'api_error', 'other'];
  const list: Scenario[] = [
    { name: 'GET /key', kind: 'read', spec: { method: 'GET', path: '/api/v1/key', headers: regular } },
    { name: 'GET /model/{author}/{slug}', kind: 'read', spec: { method: 'GET', path: '/api/v1/model/openai/gpt-4o', headers: regular } },
    { name: 'GET /embeddings/models', kind: 'read', spec: { method: 'GET', path: '/api/v1/embeddings/models', headers: regular } },
    {
      name: 'GET /generation?id=',
      kind: 'read',
      spec: {
        method: 'GET',
        path: `/api/v1/generation?id=${firstGeneration}`,
        headers: regular,
        vary: () => ({ path: `/api/v1/generation?id=${randomGeneration()}` }),
      },
      statement: floorStatement(generationStatement, { vary: { value: firstGeneration, param: 'id' } }),
    },
    {
      name: 'GET /guardrails',
      kind: 'read',
      spec: { method: 'GET', path: '/api/v1/guardrails', headers: regular },
      // The default page: offset 0, limit 50 (ListGuardrailsInputSchema's defaults).
      statement: floorStatement(guardrailsPageQuery(stack.organizationId, null, { offset: 0, limit: 50 })),
    },
    {
      name: 'GET /organization/members?limit=100&offset=4000',
      kind: 'read',
      spec: { method: 'GET', path: '/api/v1/organization/members?limit=100&offset=4000', headers: management },
      statement: membersStatement('/api/v1/organization/members?limit=100&offset=4000'),
    },
    // The large size's organization has 100,000 members: the first page and the last but one.
    ...(size === 'large'
      ? [MEMBERS_FIRST, MEMBERS_DEEP].map(
          (name): Scenario => ({
            name,
            kind: 'read',
            spec: { method: 'GET', path: `/api/v1${name.slice('GET '.length)}`, headers: management },
            statement: membersStatement(`/api/v1${name.slice('GET '.length)}`),
          }),
        )
      : []),
    // Reads the 30-day rollups, never generations: its cost should not move from small to large.
    {
      name: 'GET /activity',
      kind: 'read',
      spec: { method: 'GET', path: '/api/v1/activity', headers: management },
      statement: floorStatement(activityQuery(stack.organizationId, activityDays(now), { workspaceId: null, keyId: null, userId: null, byWorkspace: false })),
    },
    {
      // The default workspace holds the seeded keys (10,000 at the large size), each with usage read
      // from the daily rollups.
      name: 'GET /keys?limit=100',
      kind: 'read',
      spec: { method: 'GET', path: '/api/v1/keys?limit=100', headers: management },
      statement: floorStatement(keysStatement),
    },
    {
      name: 'POST /keys',
      kind: 'write',
      spec: {
        method: 'POST',
        path: '/api/v1/keys',
        headers: { ...management, 'content-type': 'application/json' },
        body: JSON.stringify(newKey),
      },
      // The values that differ between two keys (id, hash, label) are new for every request.
      statement: floorStatement(insertA, { fresh: Object.entries(insertA.values).flatMap(([name, v]) => (v !== insertB.values[name] ? [v] : [])) }),
    },
    {
      // Renames the regular key (a new name every request, so every request changes the row and
      // announces it): what an admin's edit costs, audit entry included.
      name: 'PATCH /keys/{hash}',
      kind: 'write',
      spec: {
        method: 'PATCH',
        path: `/api/v1/keys/${stack.regularKeyHash}`,
        headers: { ...management, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench reader' }),
        vary: () => ({ body: JSON.stringify({ name: `bench reader ${randomUUID().slice(0, 8)}` }) }),
      },
    },
    {
      name: 'POST /generation/feedback',
      kind: 'write',
      spec: {
        method: 'POST',
        path: '/api/v1/generation/feedback',
        headers: { ...management, 'content-type': 'application/json' },
        body: JSON.stringify({ generation_id: seededGenerationId(1), category: 'other', comment: 'bench' }),
        vary: () => ({
          body: JSON.stringify({
            generation_id: randomGeneration(),
            category: categories[Math.floor(Math.random() * categories.length)],
            comment: 'Seen while benchmarking.',
          }),
        }),
      },
    },
    {
      name: 'POST /analytics/query: spend and requests by model per day, 30 days',
      kind: 'read',
      spec: {
        method: 'POST',
        path: '/api/v1/analytics/query',
        headers: { ...management, 'content-type': 'application/json' },
        body: JSON.stringify({ metrics: ['total_usage', 'request_count'], dimensions: ['model'], granularity: 'day', time_range: lastDays(30) }),
      },
    },
    {
      name: 'POST /analytics/query: p99 latency by provider per hour, 7 days, one workspace',
      kind: 'read',
      spec: hourlyP99ByProvider,
    },
    {
      // Fairness: GET /key of another organization while this one runs the query above, two at a
      // time (its share of ANALYTICS_CONCURRENCY), against the same GET /key beside a CPU-bound
      // process (bench/src/fairness.ts). spec: the analytics query.
      name: FAIRNESS_NAME,
      kind: 'fairness',
      spec: hourlyP99ByProvider,
    },
    {
      name: `record generations (${opts.callers} client callers)`,
      kind: 'record',
      spec: { method: 'POST', path: '/trpc/generations.record?batch=1', headers: { ...platform, 'content-type': 'application/json' } },
    },
    {
      // Only the database floor: the others answer one fixed body, and the recorder needs one result
      // per generation it sent.
      name: `record generations through the batch recorder (${opts.callers} callers x ${opts.pending} pending)`,
      kind: 'record-batch',
      spec: { method: 'POST', path: '/trpc/generations.recordBatch', headers: { ...platform, 'content-type': 'application/json' } },
    },
    ...(['none', 'live', 'dead', 'traces'] as const).flatMap((alerts): Scenario[] => [
      {
        name: `record generations (${opts.callers} client callers), ${ALERTS_NAME[alerts]}`,
        kind: 'record',
        spec: { method: 'POST', path: '/trpc/generations.record?batch=1', headers: { ...platform, 'content-type': 'application/json' } },
        alerts,
      },
      {
        name: `record generations through the batch recorder (${opts.callers} callers x ${opts.pending} pending), ${ALERTS_NAME[alerts]}`,
        kind: 'record-batch',
        spec: { method: 'POST', path: '/trpc/generations.recordBatch', headers: { ...platform, 'content-type': 'application/json' } },
        alerts,
      },
    ]),
    {
      name: `GET container file (${opts.fileMiB} MiB)`,
      kind: 'download',
      spec: { method: 'GET', path: download.path, headers: regular },
    },
    {
      // Measured without floors or a probe: every answer is checked (200, the File record's size).
      name: `POST /files upload (${opts.fileMiB} MiB, ${opts.uploads} at a time)`,
      kind: 'upload',
      spec: { method: 'POST', path: '/api/v1/files', headers: regular },
    },
  ];
  return list.filter((scenario) => selected(opts, scenario.name));
}

/** The routing scenarios' names (matched by --only before their key is made). */
const routingNames = (opts: Options) => ({
  free: `routing.authorize, no reservation (${opts.connections} client callers)`,
  settled: `routing.authorize with a reservation, settled through the batch recorder (${opts.connections} client callers)`,
  crowded: `routing.authorize with a reservation beside ${OPEN_RESERVATIONS.toLocaleString('en-US')} open reservations, settled through the batch recorder (${opts.connections} client callers, large size only)`,
});

/** The open reservations of the crowded routing scenario (large size): other keys' requests under way. */
const OPEN_RESERVATIONS = 10_000;

/**
 * Makes OPEN_RESERVATIONS open reservations of the organization, spread over its seeded keys, each
 * holding a millionth of a dollar for an hour (the limits stay far away), as a busy organization's
 * routers have; returns what deletes them.
 */
async function openReservations(stack: Stack): Promise<() => Promise<void>> {
  const started = performance.now();
  const made = await stack.db.$executeRawUnsafe(
    `INSERT INTO spend_reservations (id, organization_id, workspace_id, api_key_id, amount, created_at, expires_at)
     SELECT gen_random_uuid(), k.organization_id, k.workspace_id, k.id, 0.000001, now(), now() + interval '1 hour'
       FROM generate_series(1, $2::int) AS i
       JOIN (SELECT id, organization_id, workspace_id, row_number() OVER (ORDER BY id) - 1 AS n, count(*) OVER () AS keys
               FROM api_keys WHERE organization_id = $1 AND name LIKE 'bench key %') k ON k.n = i % k.keys`,
    stack.organizationId,
    OPEN_RESERVATIONS,
  );
  log(`  ${made.toLocaleString('en-US')} open reservations made in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return async () => {
    await stack.db.$executeRawUnsafe(`DELETE FROM spend_reservations WHERE organization_id = $1 AND amount = 0.000001`, stack.organizationId);
  };
}

const selected = (opts: Options, name: string) => !opts.only.length || opts.only.some((word) => name.toLowerCase().includes(word.toLowerCase()));

/**
 * The key routing.authorize decides for, made through @switchyard/client once the other scenarios
 * ran (so that they read what they always read): a regular key of the seeded default workspace with
 * a monthly limit, that workspace's monthly budget, and a guardrail with a monthly limit and a
 * provider list assigned to the key, so that every rule runs: the key, the model, the guardrail's
 * lists and limit, the key's limit, the budget (over every key of the workspace) and the credit
 * balance. The limits are never reached.
 */
async function routingKey(stack: Stack): Promise<string> {
  const admin = createSwitchyardClient({ url: stack.url, apiKey: stack.managementKey });
  const created = await admin.keys.create.mutate({ name: 'bench router', limit: ROUTING_LIMIT_USD, limit_reset: 'monthly' });
  await admin.budgets.set.mutate({ workspace_ref: stack.workspaceId, interval: 'monthly', limit_usd: ROUTING_LIMIT_USD });
  const guardrail = await admin.guardrails.create.mutate({
    name: 'bench routing',
    limit_usd: ROUTING_LIMIT_USD,
    reset_interval: 'monthly',
    allowed_providers: ['openai', 'azure'],
  });
  await admin.guardrails.assignKeys.mutate({ id: guardrail.data.id, key_hashes: [created.data.hash] });
  return created.data.hash;
}

/** The routing scenarios (the budget's lines R1 to R3), for the key `keyHash`. */
async function routingScenarios(stack: Stack, keyHash: string, opts: Options, size: 'small' | 'large'): Promise<Scenario[]> {
  const platform = { authorization: `Bearer ${stack.platformKey}` };
  const spec = { method: 'POST' as const, path: '/trpc/routing.authorize?batch=1', headers: { ...platform, 'content-type': 'application/json' } };
  const names = routingNames(opts);
  // The statements the server makes for reserving decisions: each a new reservation, made through
  // the server's ReservationQueue (those waiting together go in one statement), which the floor
  // lets go of in batches (release), as settling does.
  const reservation = await reservationOf(stack.db, keyHash, {
    id: randomUUID(),
    cost: ROUTING_COST_USD,
    paid: true,
    now: new Date(),
    ttlMs: RESERVATION_TTL_MS,
  });
  const alone = reserveQuery(reservation.id, reservation.key, reservation.amount, reservation.checks, reservation.now, reservation.ttlMs);
  const { id: _id, now: _now, ...inputs } = reservation;
  const statement = {
    ...floorStatement(alone),
    reserve: { ...inputs, release: 'DELETE FROM spend_reservations WHERE id = ANY($1::uuid[])' },
  };
  return [
    { name: names.free, kind: 'authorize', spec },
    { name: names.settled, kind: 'authorize-settle', spec, statement },
    ...(size === 'large' ? [{ name: names.crowded, kind: 'authorize-settle', spec, statement, prepare: () => openReservations(stack) }] : []),
  ].filter((scenario) => selected(opts, scenario.name)) as Scenario[];
}

/**
 * One reservation statement of the routing key, as the server makes it, under auto_explain
 * (ANALYZE, BUFFERS, every statement nested in routing_reserve() and routing_spend()), in a
 * transaction rolled back: the plans, as the database's notices, into `file`.
 */
async function explainReservation(stack: Stack, keyHash: string, file: string): Promise<void> {
  const reserve = await reservationQuery(stack.db, keyHash, {
    id: randomUUID(),
    cost: ROUTING_COST_USD,
    paid: true,
    now: new Date(),
    ttlMs: RESERVATION_TTL_MS,
  });
  const { text, values } = floorStatement(reserve);
  const requireFromDb = createRequire(import.meta.resolve('@switchyard/db'));
  const pg = requireFromDb('pg') as {
    Client: new (options: {
      connectionString: string;
    }) => {
      connect(): Promise<void>;
      query(text: string, values?: unknown[]): Promise<unknown>;
      on(event: 'notice', listener: (notice: { message?: string }) => void): void;
      end(): Promise<void>;
    };
  };
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  const notices: string[] = [];
  client.on('notice', (notice) => notices.push(notice.message ?? ''));
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`LOAD 'auto_explain'`);
    for (const setting of ['log_min_duration = 0', 'log_analyze = on', 'log_buffers = on', 'log_nested_statements = on', "log_level = 'notice'"]) {
      await client.query(`SET LOCAL auto_explain.${setting}`);
    }
    // Twice: the first call plans (generic plans are made on first use); the second is what each decision pays.
    await client.query(text, values);
    notices.length = 0;
    const started = performance.now();
    await client.query(
      text,
      values.map((v) => (v === reserve.values.reservation_id ? randomUUID() : v)),
    );
    const ms = performance.now() - started;
    await client.query('ROLLBACK');
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await fsp.writeFile(file, `-- ${ms.toFixed(2)} ms under auto_explain (its own instrumentation included)\n\n${notices.join('\n\n')}\n`);
  } finally {
    await client.end();
  }
}

/** routing.authorize's input in a routing scenario: estimated_cost 0 holds nothing. */
const authorizeInput = (keyHash: string, kind: ScenarioResult['kind']) => () => ({
  api_key_hash: keyHash,
  model: ROUTING_MODEL,
  estimated_cost: kind === 'authorize-settle' ? ROUTING_COST_USD : 0,
});

/** The generation that settles a reservation: it cost what was held. */
function settlingRecord(keyHash: string, size: string) {
  return (reservationId: string) => ({
    id: `gen-route-${size}-${++recordSequence}`,
    api_key_hash: keyHash,
    reservation_id: reservationId,
    model: ROUTING_MODEL,
    provider_name: 'OpenAI',
    finish_reason: 'stop',
    latency: 850,
    generation_time: 700,
    tokens_prompt: 120,
    tokens_completion: 80,
    total_cost: ROUTING_COST_USD,
    usage: ROUTING_COST_USD,
  });
}

/**
 * The probe decision (the floors' answer) must be an allowed one; what it reserved is let go of, so
 * that nothing stays held.
 */
async function checkDecision(stack: Stack, bodyFile: string, name: string): Promise<void> {
  const [item] = JSON.parse(await fsp.readFile(bodyFile, 'utf8')) as { result?: { data: { data: { allowed: boolean; reservation_id?: string | null } } } }[];
  const decision = item?.result?.data.data;
  if (!decision?.allowed) throw new Error(`${name}: the probe decision was not allowed: ${JSON.stringify(item)}`);
  if (decision.reservation_id) {
    const platform = createSwitchyardClient({ url: stack.url, apiKey: stack.platformKey });
    await platform.routing.release.mutate({ reservation_id: decision.reservation_id });
  }
}

/** One request as the load will send it: the answer's status, bytes and type (the floors' body). */
async function captureAnswer(url: string, spec: LoadSpec, bodyFile: string | null): Promise<{ status: number; contentType: string; bytes: number }> {
  const res = await fetch(`${url}${spec.path}`, { method: spec.method, headers: spec.headers, body: spec.body ?? null });
  const contentType = res.headers.get('content-type') ?? 'application/octet-stream';
  if (bodyFile === null) {
    // The download: count its bytes without holding them; the floors serve the uploaded file itself.
    let bytes = 0;
    for await (const chunk of res.body ?? []) bytes += (chunk as Uint8Array).length;
    return { status: res.status, contentType, bytes };
  }
  const body = Buffer.from(await res.arrayBuffer());
  await fsp.writeFile(bodyFile, body);
  return { status: res.status, contentType, bytes: body.length };
}

let recordSequence = 0;
function recordInput(stack: Stack, size: string) {
  return (caller: number) => ({
    id: `gen-rec-${size}-${caller}-${++recordSequence}`,
    api_key_hash: stack.regularKeyHash,
    model: 'openai/gpt-4o-mini',
    provider_name: 'OpenAI',
    finish_reason: 'stop',
    latency: 850,
    generation_time: 700,
    tokens_prompt: 120,
    tokens_completion: 80,
    total_cost: 0.0001,
    usage: 0.0001,
    content: { input: { messages: [{ role: 'user', content: 'Say hello.' }] }, output: { completion: 'Hello!' } },
  });
}

/** What the alerts variants' names say of their destination. */
const ALERTS_NAME: Record<AlertsTarget, string> = {
  none: 'keys crossing their limits, no destination',
  live: 'keys crossing their limits, a webhook receiver that answers',
  dead: 'keys crossing their limits, a webhook receiver that never answers',
  traces: "keys crossing their limits, every generation's trace to an otel-collector that answers",
};

/** The receiver a variant's destination points at. */
const receiverOf = (receivers: Receivers, target: Exclude<AlertsTarget, 'none'>) => receivers[target === 'dead' ? 'dead' : 'live'];

/** Recording for the alerts variants: caller n records for key n (one key a caller). */
function alertsInput(stack: Stack, size: string, keyHashes: readonly string[]) {
  const plain = recordInput(stack, size);
  return (caller: number) => ({ ...plain(caller), api_key_hash: keyHashes[caller % keyHashes.length]! });
}

/**
 * Two webhook receivers in this process, on loopback (the server reaches them through
 * UPSTREAM_ALLOWED_HOSTS): `live` answers 204 to each delivery and counts them; `dead` accepts the
 * connection, reads the request and never answers (each attempt holds a delivery slot until
 * DELIVERY_TIMEOUT_MS).
 */
interface Receiver {
  url: string;
  received: number;
  /** Closes the connections it holds (the dead receiver's attempts then fail at once). */
  reset(): void;
}

interface Receivers {
  live: Receiver;
  dead: Receiver;
}

async function startReceivers(cleanups: (() => Promise<void>)[]): Promise<Receivers> {
  const start = async (answer: boolean) => {
    const receiver: Receiver = { url: '', received: 0, reset: () => server.closeAllConnections() };
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        receiver.received++;
        if (answer) res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/alerts`;
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    return receiver;
  };
  return { live: await start(true), dead: await start(false) };
}

interface AlertsRun {
  target: AlertsTarget;
  keyHashes: string[];
  destinationId: string | null;
  receivedBefore: number;
}

/**
 * Before an alerts variant: one key a caller in the recording workspace, each with a monthly limit
 * its caller's recordings pass early in the warm-up (0.001 USD for single calls, 0.01 USD for the
 * batch recorder: 10 and 100 recordings of 0.0001 USD), and (live, dead) a webhook destination of
 * that workspace pointing at the receiver. Every variant makes keys of its own: a crossing fires
 * once a window.
 */
async function prepareAlerts(stack: Stack, receivers: Receivers, target: AlertsTarget, callers: number, limitUsd: number): Promise<AlertsRun> {
  const admin = createSwitchyardClient({ url: stack.url, apiKey: stack.managementKey });
  const keyHashes: string[] = [];
  for (let i = 0; i < callers; i++) {
    const made = await admin.keys.create.mutate({ name: `bench alerts ${target} ${i}`, limit: limitUsd, limit_reset: 'monthly' });
    keyHashes.push(made.data.hash);
  }
  let destinationId: string | null = null;
  if (target === 'traces') {
    await admin.workspaces.update.mutate({ id: stack.workspaceId, is_observability_broadcast_enabled: true });
    const made = await admin.destinations.create.mutate({
      type: 'otel-collector',
      name: 'bench traces collector',
      config: { endpoint: receivers.live.url },
      workspace_id: stack.workspaceId,
    });
    destinationId = made.data.id;
  } else if (target !== 'none') {
    const made = await admin.destinations.create.mutate({
      type: 'webhook',
      name: `bench ${target} receiver`,
      config: { url: receivers[target].url },
      workspace_id: stack.workspaceId,
    });
    destinationId = made.data.id;
  }
  return { target, keyHashes, destinationId, receivedBefore: target === 'none' ? 0 : receiverOf(receivers, target).received };
}

/** After an alerts variant: what it emitted and delivered; its destination is deleted (its retries stop). */
async function finishAlerts(stack: Stack, receivers: Receivers, run: AlertsRun): Promise<string> {
  const alerts = await stack.db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM events e JOIN api_keys k ON k.id::text = e.payload->>'id'
     WHERE e.organization_id = ${stack.organizationId} AND e.type = 'limit.threshold_crossed'
       AND e.payload->>'kind' = 'key' AND k.hash = ANY(${run.keyHashes})`;
  let delivery = 'no destination';
  if (run.destinationId) {
    const byStatus = await stack.db.eventDelivery.groupBy({ by: ['status'], where: { destination_id: run.destinationId }, _count: true });
    const counts = byStatus.map((row) => `${row._count} ${row.status}`).join(', ') || 'none';
    const receiver = receiverOf(receivers, run.target as Exclude<AlertsTarget, 'none'>);
    delivery = `deliveries ${counts}; the receiver got ${receiver.received - run.receivedBefore} requests`;
    const admin = createSwitchyardClient({ url: stack.url, apiKey: stack.managementKey });
    await admin.destinations.delete.mutate({ id: run.destinationId });
    if (run.target === 'traces') await admin.workspaces.update.mutate({ id: stack.workspaceId, is_observability_broadcast_enabled: false });
    // Attempts still waiting on the dead receiver end now, not in the next scenario.
    receiver.reset();
  }
  return `${alerts[0]?.n ?? 0} limit.threshold_crossed alerts emitted for its ${run.keyHashes.length} keys; ${delivery}`;
}

async function keyUsage(stack: Stack): Promise<number> {
  const res = await fetch(`${stack.url}/api/v1/key`, { headers: { authorization: `Bearer ${stack.regularKey}` } });
  if (!res.ok) throw new Error(`GET /key answered ${res.status}`);
  return ((await res.json()) as { data: { usage: number } }).data.usage;
}

/** The organization's recorded spend, ever (GET /credits total_usage). */
async function organizationUsage(stack: Stack): Promise<number> {
  const res = await fetch(`${stack.url}/api/v1/credits`, { headers: { authorization: `Bearer ${stack.managementKey}` } });
  if (!res.ok) throw new Error(`GET /credits answered ${res.status}`);
  return ((await res.json()) as { data: { total_usage: number } }).data.total_usage;
}

/** Milliseconds until `spend` (GET /key's usage, or GET /credits') shows `expected` (null: not within 5 s). */
async function spendVisibleAfter(spend: () => Promise<number>, expected: number): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < 5_000) {
    if (Math.abs((await spend()) - expected) < 1e-6) return Math.round(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return null;
}

/** A recorded generation's row as the recorder wrote it: its non-null columns (the recording floor's template). */
async function recordedRow(stack: Stack, id: string): Promise<Record<string, unknown>> {
  const [found] = await stack.db.$queryRaw<
    { row: Record<string, unknown> }[]
  >`SELECT jsonb_strip_nulls(to_jsonb(g)) AS row FROM generations g WHERE id = ${id}`;
  if (!found) throw new Error(`the probe generation ${id} was not recorded`);
  return found.row;
}

/** The database's statements by total time since the last reset (pg_stat_statements), the most first. */
async function statementsByTime(stack: Stack): Promise<TopStatement[]> {
  const rows = await stack.db.$queryRawUnsafe<{ query: string; calls: number; mean: number; total: number }[]>(
    `SELECT query, calls::float8 AS calls, mean_exec_time AS mean, total_exec_time AS total
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time DESC LIMIT ${TOP_KEPT}`,
  );
  return rows.map((r) => ({ query: r.query, calls: r.calls, meanMs: r.mean, totalMs: r.total }));
}

function printStatements(top: readonly TopStatement[]): void {
  if (top.length === 0) return;
  log(`  its database statements by total time (pg_stat_statements, warm-up included): calls, mean ms, total ms, statement`);
  for (const t of top.slice(0, TOP_PRINTED)) {
    const text = t.query.replace(/\s+/g, ' ').trim();
    log(
      `    ${String(t.calls).padStart(8)} ${t.meanMs.toFixed(3).padStart(9)} ${t.totalMs.toFixed(0).padStart(8)}  ${text.length > 110 ? `${text.slice(0, 107)}...` : text}`,
    );
  }
}

/** Drives `scenario` against `target` (the server or a floor), whose process is `pid`. */
async function measure(
  scenario: Scenario,
  target: { url: string; pid: number | undefined; dbPid?: number | undefined },
  opts: Options,
  extras: Extras,
): Promise<Measurement> {
  const { url, pid, dbPid } = target;
  if (scenario.kind === 'authorize' || scenario.kind === 'authorize-settle') {
    const keyHash = extras.routingKeyHash!;
    // Only the server records: the floors answer every call the captured decision.
    const settles = scenario.kind === 'authorize-settle' && url === extras.stack.url;
    return runAuthorizers(
      { url, apiKey: extras.stack.platformKey, callers: opts.connections, duration: opts.duration, warmup: opts.warmup, pid, dbPid },
      authorizeInput(keyHash, scenario.kind),
      settles ? settlingRecord(keyHash, extras.size) : undefined,
    );
  }
  const input = scenario.alerts ? alertsInput(extras.stack, extras.size, extras.alertKeys!) : recordInput(extras.stack, extras.size);
  if (scenario.kind === 'record-batch') {
    return runBatchRecorders(
      { url, apiKey: extras.stack.platformKey, callers: opts.callers, pending: opts.pending, duration: opts.duration, warmup: opts.warmup, pid, dbPid },
      input,
    );
  }
  if (scenario.kind === 'record') {
    return runRecorders({ url, apiKey: extras.stack.platformKey, callers: opts.callers, duration: opts.duration, warmup: opts.warmup, pid, dbPid }, input);
  }
  if (scenario.kind === 'upload') {
    const upload = extras.upload!;
    return runUploads({
      url,
      pid,
      dbPid,
      spec: scenario.spec,
      file: upload.file,
      fileBytes: upload.bytes,
      connections: opts.uploads,
      perConnection: 1,
      timeoutMs: 300_000,
    });
  }
  if (scenario.kind === 'download') {
    return runDownloads({
      url,
      pid,
      spec: scenario.spec,
      connections: opts.connections,
      perConnection: opts.downloads,
      expectedBytes: opts.fileMiB * 1024 * 1024,
      timeoutMs: 300_000,
    });
  }
  return runAutocannon({ url, pid, dbPid, spec: scenario.spec, connections: opts.connections, warmup: opts.warmup, duration: opts.duration, timeout: 10 });
}

async function startFloor(mode: FloorMode, bodyFile: string, contentType: string, tmp: string, statementFile?: string) {
  const port = await freePort();
  const child = startChild(
    scriptPath('./floor.js'),
    [mode, String(port), bodyFile, contentType, ...(statementFile ? [statementFile] : [])],
    { PATH: process.env.PATH ?? '' },
    path.join(tmp, `floor-${mode}.log`),
  );
  await waitForMessage(child, 'ready', 30_000);
  return { child, url: `http://127.0.0.1:${port}` };
}

async function runSize(size: 'small' | 'large', opts: Options): Promise<SizeRun> {
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'switchyard-bench-'));
  // Traversable (not listable) by others: as root, PostgreSQL runs as the postgres user.
  await fsp.chmod(tmp, 0o711);
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const stack = await startStack(tmp, opts, cleanups);
    const { seconds } = await seedStack(stack, size);
    const download = await uploadContainerFile(stack, tmp, opts.fileMiB);
    const rssAtRest = readRss(stack.pid);
    log(`server RSS at rest after seeding: ${rssAtRest === null ? '?' : `${(rssAtRest / 1e6).toFixed(0)} MB`}`);
    const results: ScenarioResult[] = [];
    log(`\n${size} size: ${opts.connections} connections, ${opts.duration} s per run${opts.warmup ? ` after ${opts.warmup} s of warm-up` : ''}`);
    const memberIds = await new MemberOrderCache(60_000).ids(stack.db, stack.organizationId);
    const extras: Extras = { stack, size };
    // The routing scenarios come last: their key, budget and guardrail are made once the others ran.
    async function* all(): AsyncGenerator<Scenario> {
      yield* scenarios(stack, size, download, opts, memberIds);
      if (Object.values(routingNames(opts)).some((name) => selected(opts, name))) {
        extras.routingKeyHash = await routingKey(stack);
        yield* await routingScenarios(stack, extras.routingKeyHash, opts, size);
      }
    }
    for await (const scenario of all()) {
      if (scenario.kind === 'fairness') {
        const rss = sampleRss(stack.pid);
        const run = await runFairness({ url: stack.url, pid: stack.pid, dbPid: stack.dbPid, platformKey: stack.platformKey }, scenario.spec, opts);
        const peakRss = rss.stop();
        const result: ScenarioResult = {
          name: scenario.name,
          kind: scenario.kind,
          answerBytes: 0,
          ...run.measured,
          peakRssBytes: peakRss,
          floors: null,
          fairness: { floor: run.floor, analytics: run.analytics },
        };
        results.push(result);
        printTable([result], results.length === 1);
        log(
          `  its floor (beside a CPU-bound process): ${run.floor.requestsPerSecond.toFixed(0)} req/s, p99 ${run.floor.p99Ms} ms; analytics meanwhile: ${run.analytics.requestsPerSecond.toFixed(1)} answers/s, p99 ${run.analytics.p99Ms} ms, ${JSON.stringify(run.analytics.statusCodes)}`,
        );
        continue;
      }
      if (scenario.kind === 'upload') extras.upload ??= await writeUploadFile(tmp, opts.fileMiB);
      const undo = scenario.prepare ? await scenario.prepare() : undefined;
      const bodyFile = scenario.kind === 'download' ? null : path.join(tmp, 'answer.bin');
      const probe = recordInput(stack, `${size}-probe`)(0);
      const routing = scenario.kind === 'authorize' || scenario.kind === 'authorize-settle';
      // The upload sends no probe (each one stores a file): its measurement checks every answer.
      const answer =
        scenario.kind === 'upload'
          ? { status: 200, contentType: 'application/json', bytes: 0 }
          : scenario.kind === 'record'
            ? await captureAnswer(stack.url, { ...scenario.spec, body: JSON.stringify({ 0: probe }) }, bodyFile)
            : scenario.kind === 'record-batch'
              ? await captureAnswer(stack.url, { ...scenario.spec, body: JSON.stringify({ generations: [probe] }) }, bodyFile)
              : routing
                ? await captureAnswer(
                    stack.url,
                    { ...scenario.spec, body: JSON.stringify({ 0: authorizeInput(extras.routingKeyHash!, scenario.kind)() }) },
                    bodyFile,
                  )
                : await captureAnswer(stack.url, scenario.spec.vary ? { ...scenario.spec, ...scenario.spec.vary() } : scenario.spec, bodyFile);
      if (answer.status < 200 || answer.status >= 300) log(`  note: ${scenario.name} answered ${answer.status} to its probe request`);
      if (routing) await checkDecision(stack, bodyFile!, scenario.name);
      // The alerts variants are compared with the plain recording scenarios, not with floors.
      const floors: Floors | null = scenario.kind === 'upload' || scenario.alerts ? null : {};
      const recording = scenario.kind === 'record' || scenario.kind === 'record-batch';
      // The recording floor writes the probe's own row again and again (new ids, created now).
      const statement = recording && floors ? { record: { row: await recordedRow(stack, probe.id), content: probe.content } } : scenario.statement;
      let statementFile: string | undefined;
      if (statement) {
        statementFile = path.join(tmp, 'statement.json');
        await fsp.writeFile(statementFile, JSON.stringify({ databaseUrl: stack.databaseUrl, poolMax: POOL_MAX, ...statement }));
      }
      const modes: FloorMode[] = !floors
        ? []
        : scenario.kind === 'record-batch'
          ? ['database']
          : ['node', 'express', ...(statementFile ? (['database'] as const) : [])];
      for (const mode of modes) {
        const floor = await startFloor(mode, bodyFile ?? download.file, answer.contentType, tmp, mode === 'database' ? statementFile : undefined);
        try {
          // The database floor's statements are the database's work too.
          const dbPid = mode === 'database' ? stack.dbPid : undefined;
          floors![mode] = await measure(scenario, { url: floor.url, pid: floor.child.pid, dbPid }, opts, extras);
        } finally {
          await stopChild(floor.child);
        }
        // What the floor reserved and had not let go of yet (nothing else holds any now).
        if (mode === 'database' && scenario.kind === 'authorize-settle') {
          await stack.db.$executeRaw`DELETE FROM spend_reservations WHERE organization_id = ${stack.organizationId} AND amount <> 0.000001`;
        }
      }
      let alerts: AlertsRun | undefined;
      if (scenario.alerts) {
        extras.receivers ??= await startReceivers(cleanups);
        alerts = await prepareAlerts(stack, extras.receivers, scenario.alerts, opts.callers, scenario.kind === 'record-batch' ? 0.01 : 0.001);
        extras.alertKeys = alerts.keyHashes;
      }
      // GET /key of the recording key; the alerts variants record for many keys: the organization's GET /credits.
      const spendOf = alerts ? () => organizationUsage(stack) : () => keyUsage(stack);
      const usageBefore = recording ? await spendOf() : 0;
      await stack.db.$executeRawUnsafe('SELECT pg_stat_statements_reset()');
      const rss = sampleRss(stack.pid);
      const measured = await measure(scenario, { url: stack.url, pid: stack.pid, dbPid: stack.dbPid }, opts, extras);
      const peakRss = rss.stop();
      const topStatements = await statementsByTime(stack);
      if (opts.explain && scenario.kind === 'authorize-settle') {
        const file = path.join(resultsDir, `explain-${size}-${scenario.name === routingNames(opts).crowded ? 'crowded' : 'settled'}.txt`);
        await explainReservation(stack, extras.routingKeyHash!, file);
        log(`  its reservation statement under auto_explain: ${path.relative(process.cwd(), file)}`);
      }
      await undo?.();
      let visibleMs: number | null | undefined;
      if (recording) {
        visibleMs = await spendVisibleAfter(spendOf, usageBefore + (measured.recorded ?? 0) * 0.0001);
      }
      if (alerts) log(`  ${scenario.name}: ${await finishAlerts(stack, extras.receivers!, alerts)}`);
      const result: ScenarioResult = {
        name: scenario.name,
        kind: scenario.kind,
        answerBytes: answer.bytes,
        ...measured,
        peakRssBytes: peakRss,
        floors,
        topStatements,
        ...(visibleMs !== undefined ? { spendVisibleMs: visibleMs } : {}),
      };
      results.push(result);
      printTable([result], results.length === 1);
      printStatements(topStatements);
    }
    return { size, seedSeconds: seconds, seed: SIZES[size], serverRssAtRestBytes: rssAtRest, serverRssAtEndBytes: readRss(stack.pid), scenarios: results };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: Error) => log(`cleanup: ${error.message}`));
    await fsp.rm(tmp, { recursive: true, force: true });
  }
}

async function main() {
  const opts = options();
  // Bounded: every run stops by itself; this is the backstop if something hangs.
  const perSize = 10 * 60 + 11 * 3 * (opts.warmup + opts.duration + 15) + 600;
  const watchdog = setTimeout(
    () => {
      console.error(`bench: gave up after ${perSize * opts.sizes.length} s (the harness hung)`);
      void stopAllChildren(2_000).finally(() => process.exit(1));
    },
    perSize * opts.sizes.length * 1000,
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void stopAllChildren(2_000).finally(() => process.exit(130)));
  }

  const started = new Date();
  const loadBefore = os.loadavg();
  if (loadBefore[0]! > os.cpus().length * 0.5) {
    log(`note: the machine is already busy (load average ${loadBefore[0]!.toFixed(1)} on ${os.cpus().length} cores): figures will be low and noisy`);
  }
  const runs: SizeRun[] = [];
  for (const size of opts.sizes) runs.push(await runSize(size, opts));
  const budget = budgetReport(runs);
  // The console's initial JavaScript (the console issue's line), measured from its build.
  const bundle = consoleBundle(consoleDist);
  budget.push({
    item: `console: initial JavaScript <= ${CONSOLE_JS_BUDGET_BYTES / 1024} KB gzipped`,
    met: bundle ? bundle.gzipBytes <= CONSOLE_JS_BUDGET_BYTES : null,
    detail: bundle
      ? `${(bundle.gzipBytes / 1024).toFixed(1)} KB gzipped (${bundle.files.map((f) => `${f.file} ${(f.bytes / 1024).toFixed(1)} KB, ${(f.gzipBytes / 1024).toFixed(1)} KB gzipped`).join('; ')})`
      : 'the console is not built (apps/console/dist)',
  });
  log('\nbudget of issues 17 and 36 (reported, never enforced):');
  for (const line of budget) log(`  ${line.met === null ? 'n/a ' : line.met ? 'met ' : 'MISS'}  ${line.item}: ${line.detail}`);

  // The regression guard (reported, never enforced): this run's CPU multiples beside the baseline's.
  const ratios = ratiosOf(runs);
  const baseline = fs.existsSync(baselineFile) ? (JSON.parse(await fsp.readFile(baselineFile, 'utf8')) as Baseline) : null;
  const [guardHead, ...guardLines] = guardReport(compareToBaseline(ratios, baseline), baseline);
  log(`\nregression guard: ${guardHead}`);
  for (const line of guardLines) log(`  ${line}`);
  if (opts.writeBaseline) {
    const written: Baseline = { started: started.toISOString(), loadAverage: loadBefore, scenarios: ratios };
    await fsp.writeFile(baselineFile, `${JSON.stringify(written, null, 2)}\n`);
    log(`baseline written to ${path.relative(process.cwd(), baselineFile)}`);
  }

  await fsp.mkdir(resultsDir, { recursive: true });
  const file = path.join(
    resultsDir,
    `${started
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z')}.json`,
  );
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? null,
    memoryBytes: os.totalmem(),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverageBefore: loadBefore,
    loadAverageAfter: os.loadavg(),
  };
  await fsp.writeFile(file, `${JSON.stringify({ started: started.toISOString(), machine, options: opts, runs, budget }, null, 2)}\n`);
  log(`\nfigures written to ${path.relative(process.cwd(), file)}`);
  clearTimeout(watchdog);
}

main().catch(async (error: unknown) => {
  console.error(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error);
  await stopAllChildren(2_000);
  process.exit(error instanceof UsageError ? 2 : 1);
});
