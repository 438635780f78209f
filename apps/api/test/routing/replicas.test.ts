// Several replicas: two server processes (dist/main.js, as `pnpm start` runs it) share one PostgreSQL
// database and one S3 bucket (on the test process's S3 server), and nothing else. They keep what
// they read for CACHE_TTL_MS = 60 s, so whatever one sees of the other's writes within the tests'
// own timeouts came through LISTEN/NOTIFY. The figures are printed, never asserted.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDb, type Db } from '@switchyard/db';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { generateApiKey, generatePlatformKey, hashApiKey } from '../../src/access/key-format.js';
import { createStorage } from '../../src/storage/media.js';
import type { BlobStorage } from '../../src/storage/storage.js';
import { testS3 } from '../../src/testing/test-server.js';
import { demoCatalog } from '../fixtures-catalog.js';
import { until } from '../fixtures.js';
import { fileIdOf, sha256 } from '../fixtures-files.js';
import { trpc as call, type InputOf, type OutputOf, type ProcedurePath } from '../fixtures-trpc.js';
import { start, stop, type Proc } from '../fixtures-process.js';

const managementKey = generateApiKey();
const platformKey = generatePlatformKey();

interface Replica {
  name: string;
  proc: Proc;
  managementKey: string;
  platformKey: string;
  request(pathname: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
}

function replica(name: string, proc: Proc): Replica {
  return {
    name,
    proc,
    managementKey,
    platformKey,
    request(pathname, init = {}) {
      const { key = managementKey, headers, ...rest } = init;
      const authorization: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
      return fetch(`${proc.url}${pathname}`, { ...rest, headers: { ...(headers as Record<string, string>), ...authorization } });
    },
  };
}

/** A procedure call through one replica (a POST, with the management key unless named) that must succeed. */
async function trpc<P extends ProcedurePath>(via: Replica, procedure: P, input: InputOf<P>, key = managementKey): Promise<OutputOf<P>> {
  const res = await call(via, procedure, input, { key });
  expect(res.status, `${procedure} via ${via.name}: ${JSON.stringify(res.error)}`).toBe(200);
  return res.data;
}

/**
 * The platform's own steps (opening containers, writing their files, recording generations,
 * writing the catalog), with the platform key, in one place.
 */
const platform = {
  call: <P extends ProcedurePath>(via: Replica, procedure: P, input: InputOf<P>) => trpc(via, procedure, input, platformKey),
  async openContainer(via: Replica, sessionKey: string, workspaceId: string): Promise<string> {
    const opened = await platform.call(via, 'files.openContainer', { session_key: sessionKey, workspace_id: workspaceId });
    return opened.data.container_id;
  },
  async writeFile(via: Replica, containerId: string, filePath: string, bytes: Buffer): Promise<void> {
    const res = await via.request(`/internal/containers/${containerId}/files/${fileIdOf(filePath)}?organization_id=${tenant.organizationId}`, {
      key: platformKey,
      method: 'PUT',
      body: bytes,
    });
    expect(res.status, `write ${filePath} via ${via.name}`).toBe(201);
  },
};

const figure = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${sorted[sorted.length - 1]!.toFixed(1)} ms (${values.length} rounds)`;
};

/** The bootstrap organization: its id and default workspace. */
const tenant = { organizationId: '', workspaceId: '' };
let database: TestDatabase;
let db: Db;
let storage: BlobStorage;
let a: Replica;
let b: Replica;
const dirs: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
  db = createDb(database.url, { poolMax: 2 });
  const s3 = await testS3();
  const shared = {
    DATABASE_URL: database.url,
    SWITCHYARD_BOOTSTRAP_KEY: managementKey,
    SWITCHYARD_PLATFORM_KEY: platformKey,
    SWITCHYARD_SECRET_KEY: randomBytes(32).toString('hex'),
    CACHE_TTL_MS: '60000',
    DATABASE_POOL_MAX: '5',
    ...s3.env(await s3.createBucket(), 'replicas'),
  };
  storage = await createStorage(loadConfig(shared).storage);
  const procs = await Promise.all(
    ['a', 'b'].map(async (name) => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `switchyard-replica-${name}-`));
      dirs.push(dataDir);
      return replica(name, await start({ ...shared, DATA_DIR: dataDir }));
    }),
  );
  [a, b] = procs as [Replica, Replica];
  const owner = await db.apiKey.findUniqueOrThrow({ where: { hash: hashApiKey(managementKey) } });
  Object.assign(tenant, { organizationId: owner.organization_id, workspaceId: owner.workspace_id });
});

afterAll(async () => {
  await Promise.all([a, b].filter(Boolean).map((r) => stop(r.proc)));
  await db?.$disconnect();
  await database?.drop();
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

describe('two replicas on one database and one bucket', () => {
  it('serve through one what was written and promoted through the other', async () => {
    const containerId = await platform.openContainer(a, 'replicas', tenant.workspaceId);
    const bytes = randomBytes(6 * 1024 * 1024 + 123); // a multipart upload
    await platform.writeFile(a, containerId, 'out/report.bin', bytes);
    const promoted = await b.request(`/api/v1/containers/${containerId}/files/${fileIdOf('out/report.bin')}/promote`, { method: 'POST' });
    expect(promoted.status).toBe(200);
    const document = (await promoted.json()) as { id: string; size_bytes: number };
    expect(document.size_bytes).toBe(bytes.length);
    // The same promotion through the other replica finds the same document.
    const again = await a.request(`/api/v1/containers/${containerId}/files/${fileIdOf('out/report.bin')}/promote`, { method: 'POST' });
    expect(((await again.json()) as { id: string }).id).toBe(document.id);
    for (const via of [a, b]) {
      const res = await via.request(`/api/v1/containers/${containerId}/files/${fileIdOf('out/report.bin')}/content`);
      expect(res.status).toBe(200);
      expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(bytes));
      const part = await via.request(`/api/v1/containers/${containerId}/files/${fileIdOf('out/report.bin')}/content`, {
        headers: { range: 'bytes=5242870-5242889' },
      });
      expect(part.status).toBe(206);
      expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(5_242_870, 5_242_890))).toBe(true);
    }
    // The document's own bytes are in the shared bucket.
    const row = await db.document.findUniqueOrThrow({ where: { id: document.id } });
    const stored = await storage.get(row.storage_key);
    const chunks: Buffer[] = [];
    for await (const chunk of stored.stream) chunks.push(chunk as Buffer);
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(bytes));
  });

  it('keep the workspace quota exact under concurrent promotions spread over both', async () => {
    const workspace = await db.workspace.create({
      data: { organization_id: tenant.organizationId, slug: 'quota-replicas', name: 'Quota', storage_quota_bytes: 100_000 },
    });
    const containerId = await platform.openContainer(b, 'quota-replicas', workspace.id);
    const files = Array.from({ length: 10 }, (_, i) => `f${i}.bin`);
    for (const [i, file] of files.entries()) await platform.writeFile(i % 2 ? a : b, containerId, file, randomBytes(30_000));
    for (let round = 0; round < 3; round++) {
      await db.document.deleteMany({ where: { workspace_id: workspace.id } });
      for await (const entry of storage.list(`documents/${workspace.id}/`)) await storage.delete(entry.key);
      await db.workspace.update({ where: { id: workspace.id }, data: { storage_used_bytes: 0 } });
      const answers = await Promise.all(
        files.map((file, i) => (i % 2 ? a : b).request(`/api/v1/containers/${containerId}/files/${fileIdOf(file)}/promote`, { method: 'POST' })),
      );
      const statuses = answers.map((res) => res.status);
      await Promise.all(answers.map((res) => res.arrayBuffer()));
      // 3 x 30,000 fit in 100,000; a fourth does not.
      expect(statuses.filter((s) => s === 200)).toHaveLength(3);
      expect(statuses.filter((s) => s === 413)).toHaveLength(7);
      const [documents, ws] = await Promise.all([
        db.document.findMany({ where: { workspace_id: workspace.id } }),
        db.workspace.findUniqueOrThrow({ where: { id: workspace.id } }),
      ]);
      expect(documents).toHaveLength(3);
      expect(Number(ws.storage_used_bytes)).toBe(90_000);
      const stored: string[] = [];
      for await (const entry of storage.list(`documents/${workspace.id}/`)) stored.push(entry.key);
      expect(stored.sort()).toEqual(documents.map((d) => d.storage_key).sort());
    }
  });

  it('add up generations recorded through both exactly in GET /key', async () => {
    const created = await trpc(a, 'keys.create', { name: 'recorded on both' });
    const per = 40;
    const usage = 0.000123;
    await Promise.all(
      [a, b].flatMap((via) =>
        Array.from({ length: per }, (_, i) =>
          platform.call(via, 'generations.record', { id: `gen-${via.name}-${i}`, api_key_hash: created.data.hash, model: 'openai/gpt-4o', usage }),
        ),
      ),
    );
    // 80 x 0.000123 = 0.00984, in the database's decimal arithmetic.
    const [row] = await db.$queryRaw<Array<{ usage: string }>>`SELECT usage::text AS usage FROM api_keys WHERE hash = ${created.data.hash}`;
    expect(row!.usage).toBe('0.009840000000');
    for (const via of [a, b]) {
      const res = await via.request('/api/v1/key', { key: created.key });
      const key = ((await res.json()) as { data: { usage: number; usage_daily: number; usage_monthly: number } }).data;
      expect(key, via.name).toMatchObject({ usage: 0.00984, usage_daily: 0.00984, usage_monthly: 0.00984 });
    }
    expect(await db.generation.count({ where: { api_key: { hash: created.data.hash } } })).toBe(2 * per);
  });

  it('show a generation recorded through one in GET /key: at once on that one, within USAGE_CACHE_MS (250 ms) on the other', async () => {
    const created = await trpc(a, 'keys.create', { name: 'usage kept' });
    const usageVia = async (via: Replica) => {
      const res = await via.request('/api/v1/key', { key: created.key });
      return ((await res.json()) as { data: { usage: number } }).data.usage;
    };
    expect([await usageVia(a), await usageVia(b)]).toEqual([0, 0]); // both keep the figures
    await platform.call(a, 'generations.record', { id: 'gen-usage-kept', api_key_hash: created.data.hash, model: 'openai/gpt-4o', usage: 0.5 });
    expect(await usageVia(a)).toBe(0.5);
    await until(async () => (await usageVia(b)) === 0.5);
  });

  it('refuse a key disabled through one on both: at once on that one, as soon as the announcement arrives on the other', async () => {
    const sinceSent: number[] = [];
    const sinceAnswered: number[] = [];
    for (let round = 0; round < 20; round++) {
      const [writer, other] = round % 2 ? [a, b] : [b, a];
      const created = await trpc(writer, 'keys.create', { name: `disabled ${round}` });
      // Both read it (and keep it for 60 s).
      for (const via of [a, b]) expect((await via.request('/api/v1/key', { key: created.key })).status).toBe(200);
      const sent = performance.now();
      await trpc(writer, 'keys.update', { hash: created.data.hash, disabled: true });
      const answered = performance.now();
      expect((await writer.request('/api/v1/key', { key: created.key })).status).toBe(401);
      await until(async () => (await other.request('/api/v1/key', { key: created.key })).status === 401, { everyMs: 2 });
      const refused = performance.now();
      sinceSent.push(refused - sent);
      sinceAnswered.push(refused - answered);
    }
    console.info(
      `a key disabled through one replica was refused by the other ${figure(sinceAnswered)} after the update answered; ${figure(sinceSent)} after it was sent`,
    );
  });

  it('refuse the keys of an organization disabled through one on both', async () => {
    const created = await platform.call(a, 'organizations.create', { name: 'Disabled soon' });
    for (const via of [a, b]) expect((await via.request('/api/v1/key', { key: created.management_key })).status).toBe(200);
    await platform.call(b, 'organizations.disable', { organization_id: created.organization_id });
    expect((await b.request('/api/v1/key', { key: created.management_key })).status).toBe(401);
    await until(async () => (await a.request('/api/v1/key', { key: created.management_key })).status === 401);
  });

  it('agree on the catalog and on members at once', async () => {
    const model = { ...demoCatalog.models[0]!, id: 'acme/replicated', aliases: [], variants: [], endpoints: [] };
    // Both read the catalog first (and keep the snapshot for 60 s).
    for (const via of [a, b]) expect((await via.request('/api/v1/model/acme/replicated')).status).toBe(404);
    await platform.call(a, 'models.upsert', model);
    await until(async () => (await b.request('/api/v1/model/acme/replicated')).status === 200);

    const total = async (via: Replica) => ((await (await via.request('/api/v1/organization/members?limit=1')).json()) as { total_count: number }).total_count;
    const before = await total(b);
    const member = await trpc(a, 'organization.createMember', { email: 'replicated@example.com' });
    await until(async () => (await total(b)) === before + 1);
    await trpc(b, 'organization.removeMember', { user_id: member.id });
    await until(async () => (await total(a)) === before);
  });

  it('reserve exactly across both: with R remaining, 50 concurrent reservations of c spread over them allow floor(R / c)', async () => {
    await platform.call(a, 'models.import', demoCatalog);
    await platform.call(a, 'generations.addCredits', { organization_id: tenant.organizationId, amount: 100 });
    const created = await trpc(a, 'keys.create', { name: 'reserved on both', limit: 1, limit_reset: 'monthly' });
    const ask = (via: Replica) => platform.call(via, 'routing.authorize', { api_key_hash: created.data.hash, model: 'openai/gpt-4o', estimated_cost: 0.03 });
    const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => ask(i % 2 ? a : b)));
    expect(decisions.filter((d) => d.data.allowed)).toHaveLength(Math.floor(1 / 0.03));
  });

  it('refuse a guardrail change made through one on the other, once the announcement arrives', async () => {
    const created = await trpc(a, 'keys.create', { name: 'governed on both' });
    const ask = async (via: Replica) => (await platform.call(via, 'routing.authorize', { api_key_hash: created.data.hash, model: 'openai/gpt-4o' })).data;
    for (const via of [a, b]) expect((await ask(via)).allowed, via.name).toBe(true); // both keep the guardrails for 60 s
    const guardrail = await trpc(a, 'guardrails.create', { name: 'replicated', ignored_models: ['openai/gpt-4o'] });
    await trpc(a, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [created.data.hash] });
    expect(await ask(a)).toMatchObject({ allowed: false, code: 'model_not_allowed' });
    await until(async () => !(await ask(b)).allowed, { what: 'the other replica to apply the guardrail' });
    // And a key disabled through the other: refused on the first.
    await trpc(b, 'keys.update', { hash: created.data.hash, disabled: true });
    await until(
      async () => {
        const decision = await ask(a);
        return !decision.allowed && decision.code === 'key_disabled';
      },
      { what: 'the key disabled through the other replica to be refused' },
    );
  });
});
