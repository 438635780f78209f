// The organization export (docs/export.md): GET /api/v1/export on the real server
// and PostgreSQL. Every record type with its content, nothing of another organization, no secret;
// who may call it; its audit entry; and, at scale (20,000 generations with content), memory that
// stays flat while it streams and a client that leaves mid-stream stopping the database work.
import { randomUUID } from 'node:crypto';
import { EXPORT_RECORD_TYPES, ExportHeaderSchema, ExportRecordSchema, ExportTrailerSchema, type ExportRecord } from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { demoCatalog, record } from '../fixtures-catalog.js';
import { expectEnvelope, rest } from '../fixtures-admin.js';
import { seedGenerations } from '../fixtures-export.js';
import { ok } from '../fixtures-trpc.js';
import { until, useServer } from '../fixtures.js';
import { scaled } from '@switchyard/db/testing';

const env = useServer('Export other');
const unique = () => randomUUID().slice(0, 8);
const hex = (n: number) => randomUUID().replace(/-/g, '').repeat(3).slice(0, n);

/** What organization A holds (and B's, which A's export must not). */
interface Seeded {
  regular: { key: string; hash: string };
  management: { key: string; hash: string };
  byokSecret: string;
  workspaceId: string;
  memberId: string;
  generationId: string;
  other: { keySecret: string; keyHash: string; generationId: string; byokSecret: string; workspaceId: string; memberId: string };
}
let seeded: Seeded;

async function exportOf(key?: string | null, query = '') {
  const res = await env.server.request(`/api/v1/export${query}`, key === undefined ? {} : { key });
  return { res, text: await res.text() };
}

interface Parsed {
  header: z.infer<typeof ExportHeaderSchema>;
  records: ExportRecord[];
  trailer: z.infer<typeof ExportTrailerSchema>;
}

function parse(text: string): Parsed {
  expect(text.endsWith('\n')).toBe(true);
  const lines = text.slice(0, -1).split('\n');
  const header = ExportHeaderSchema.strict().parse(JSON.parse(lines[0]!));
  const trailer = ExportTrailerSchema.strict().parse(JSON.parse(lines.at(-1)!));
  const records = lines.slice(1, -1).map((line) => ExportRecordSchema.parse(JSON.parse(line)));
  return { header, records, trailer };
}

const ofType = <T extends ExportRecord['type']>(records: ExportRecord[], type: T) =>
  records.filter((r): r is Extract<ExportRecord, { type: T }> => r.type === type);

beforeAll(async () => {
  const { server, other } = env;
  await ok(server, 'models.import', demoCatalog);
  // GET /generation (compared with below) answers 402 in debt; the export is never refused for debt.
  await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 100 });
  const managementHash = (await server.db.apiKey.findFirstOrThrow({ where: { organization_id: server.organizationId, is_management_key: true } })).hash;
  const created = await ok(server, 'keys.create', { name: 'regular' });
  const workspace = (await ok(server, 'workspaces.create', { slug: `ws-${unique()}`, name: 'Second' })).data;
  const member = await ok(server, 'organization.createMember', { email: `m-${unique()}@example.com` });
  await ok(server, 'workspaces.addMembers', { id: workspace.id, user_ids: [member.id] });
  await ok(server, 'keys.create', { name: 'in second', workspace_id: workspace.id });
  await ok(server, 'budgets.set', { workspace_ref: workspace.id, interval: 'monthly', limit_usd: 100 });
  const guardrail = (await ok(server, 'guardrails.create', { name: `g-${unique()}`, workspace_id: workspace.id })).data;
  await ok(server, 'guardrails.assignKeys', { id: guardrail.id, key_hashes: [created.data.hash] });
  await ok(server, 'guardrails.assignMembers', { id: guardrail.id, member_user_ids: [member.id] });
  await ok(server, 'presets.create', { slug: `p-${unique()}`, name: 'P', config: { model: 'openai/gpt-4o' }, system_prompt: 'Be brief.' });
  await ok(server, 'settings.updateRetention', { content_retention_days: 400 });
  const byokSecret = `sk-${hex(40)}`;
  await ok(server, 'byok.create', { provider: 'openai', name: 'mine', key: byokSecret });
  const generationId = await record(server, {
    api_key_hash: created.data.hash,
    usage: 0.01,
    content: { input: { messages: [{ role: 'user', content: 'the prompt of A' }] }, output: { completion: 'the completion of A' } },
  });

  // Organization B: a key, a member, a workspace, a BYOK secret and a generation with content.
  const otherKey = await ok(server, 'keys.create', { name: 'b regular' }, { key: other.managementKey });
  const otherWorkspace = (await ok(server, 'workspaces.create', { slug: `b-${unique()}`, name: 'B second' }, { key: other.managementKey })).data;
  const otherMember = await ok(server, 'organization.createMember', { email: `b-${unique()}@example.com` }, { key: other.managementKey });
  const otherByok = `sk-${hex(40)}`;
  await ok(server, 'byok.create', { provider: 'openai', name: 'theirs', key: otherByok }, { key: other.managementKey });
  const otherGeneration = await record(server, {
    api_key_hash: otherKey.data.hash,
    usage: 0.01,
    content: { input: { messages: [{ role: 'user', content: 'the prompt of B' }] }, output: { completion: 'the completion of B' } },
  });
  seeded = {
    regular: { key: created.key, hash: created.data.hash },
    management: { key: server.managementKey, hash: managementHash },
    byokSecret,
    workspaceId: workspace.id,
    memberId: member.id,
    generationId,
    other: {
      keySecret: otherKey.key,
      keyHash: otherKey.data.hash,
      generationId: otherGeneration,
      byokSecret: otherByok,
      workspaceId: otherWorkspace.id,
      memberId: otherMember.id,
    },
  };
});

describe('GET /api/v1/export', () => {
  it('streams a header, every record type in the API shapes with content, and a trailer with the counts', async () => {
    const { res, text } = await exportOf();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="?switchyard-export-[\w-]+\.jsonl"?$/);
    const { header, records, trailer } = parse(text);
    expect(header).toMatchObject({ type: 'export', format: 'switchyard.export', version: 1, organization_id: env.server.organizationId });
    for (const type of EXPORT_RECORD_TYPES) {
      expect(trailer.counts[type], type).toBe(ofType(records, type).length);
      expect(trailer.counts[type], `at least one ${type}`).toBeGreaterThan(0);
    }
    // In the documented order: all of one type, then the next.
    const order = records.map((r) => EXPORT_RECORD_TYPES.indexOf(r.type));
    expect(order).toEqual([...order].sort((a, b) => a - b));

    // The same records the API answers with.
    const workspace = ofType(records, 'workspace').find((w) => w.id === seeded.workspaceId)!;
    const { type: _w, ...workspaceFields } = workspace;
    expect({ data: workspaceFields }).toEqual((await rest(env.server, `/workspaces/${seeded.workspaceId}`)).body);
    const key = ofType(records, 'key').find((k) => k.hash === seeded.regular.hash)!;
    const { type: _k, ...keyFields } = key;
    expect({ data: keyFields }).toEqual((await rest(env.server, `/keys/${seeded.regular.hash}`)).body);
    expect(ofType(records, 'member').map((m) => m.id)).toContain(seeded.memberId);
    expect(ofType(records, 'workspace_member').some((m) => m.workspace_id === seeded.workspaceId && m.user_id === seeded.memberId)).toBe(true);
    expect(ofType(records, 'preset')[0]!.versions[0]).toMatchObject({ version: 1, system_prompt: 'Be brief.' });
    expect(ofType(records, 'budget')).toEqual([expect.objectContaining({ workspace_id: seeded.workspaceId, limit_usd: 100, reset_interval: 'monthly' })]);
    expect(ofType(records, 'guardrail_key_assignment')[0]).toMatchObject({ key_hash: seeded.regular.hash });
    const [settings] = ofType(records, 'settings');
    const { type: _s, content_retention_days, ...alerts } = settings!;
    expect(content_retention_days).toBe(400);
    expect({ data: alerts }).toEqual(await ok(env.server, 'settings.alerts', undefined, { query: true }));

    const generation = ofType(records, 'generation').find((g) => g.id === seeded.generationId)!;
    const { type: _g, content, ...generationFields } = generation;
    expect({ data: generationFields }).toEqual((await rest(env.server, `/generation?id=${seeded.generationId}`)).body);
    expect(content).toEqual({
      input: { messages: [{ role: 'user', content: 'the prompt of A' }] },
      output: { completion: 'the completion of A', reasoning: null },
      error: null,
    });
  });

  it('holds nothing of another organization, and no secret of any kind', async () => {
    const { text } = await exportOf();
    const { other } = seeded;
    for (const foreign of [
      env.other.organizationId,
      env.other.workspaceId,
      env.other.managementKey,
      other.keySecret,
      other.keyHash,
      other.generationId,
      other.byokSecret,
      other.workspaceId,
      other.memberId,
      'the prompt of B',
      'the completion of B',
    ]) {
      expect(text.includes(foreign), foreign).toBe(false);
    }
    // A's own secrets: its keys' and its BYOK credential's. Hashes are the keys' public ids.
    for (const secret of [seeded.regular.key, seeded.management.key, env.server.platformKey, seeded.byokSecret]) expect(text.includes(secret)).toBe(false);
    // A key's current secret's hash is its public id (`hash`); a rotated-out secret's hash is in no record.
    await ok(env.server, 'keys.rotate', { hash: seeded.regular.hash, grace_period_seconds: 60 });
    const rotated = (await exportOf()).text;
    const secrets = await env.server.db.apiKeySecret.findMany({
      where: { api_key: { organization_id: env.server.organizationId } },
      include: { api_key: true },
    });
    const previous = secrets.filter((s) => s.secret_hash !== s.api_key.hash);
    expect(previous.length).toBeGreaterThan(0);
    for (const row of previous) expect(rotated.includes(row.secret_hash), 'a rotated-out secret hash').toBe(false);
    // B's own export holds its generation, and nothing of A.
    const theirs = parse((await exportOf(env.other.managementKey)).text);
    expect(theirs.header.organization_id).toBe(env.other.organizationId);
    expect(ofType(theirs.records, 'generation').map((g) => g.id)).toEqual([other.generationId]);
    expect(JSON.stringify(theirs)).not.toContain(env.server.organizationId);
    expect(JSON.stringify(theirs)).not.toContain(seeded.generationId);
  });

  it('401 without a key; 403 for a regular key, the platform key and a scoped key without export:read; a key holding it exports', async () => {
    expectEnvelope(await asJson(exportOf(null)), 401);
    expectEnvelope(await asJson(exportOf(seeded.regular.key)), 403);
    expectEnvelope(await asJson(exportOf(env.server.platformKey)), 403);
    const lacking = await ok(env.server, 'keys.create', {
      name: 'scoped',
      is_management_key: true,
      scopes: ['keys:read', 'workspaces:read', 'analytics:read'],
    });
    const refused = await asJson(exportOf(lacking.key));
    expect(refused).toMatchObject({
      status: 403,
      body: {
        error: {
          code: 403,
          message: 'Only management keys can perform this operation',
          metadata: { reason: 'this key lacks the scope export:read, which this operation needs' },
        },
      },
    });
    const holding = await ok(env.server, 'keys.create', { name: 'exporter', is_management_key: true, scopes: ['export:read'] });
    const { res, text } = await exportOf(holding.key);
    expect(res.status).toBe(200);
    expect(parse(text).header.organization_id).toBe(env.server.organizationId);
  });

  it('400 for any query parameter (it takes none)', async () => {
    expectEnvelope(await asJson(exportOf(undefined, '?workspace_id=default')), 400);
    expectEnvelope(await asJson(exportOf(undefined, '?a=%00')), 400);
  });

  it('is audited as exports.create: who exported, with the counts', async () => {
    const { res, text } = await exportOf();
    const requestId = res.headers.get('x-request-id');
    const { trailer } = parse(text);
    let entry: { actor_key_hash: string | null; action: string; target_id: string | null; changes: unknown } | null = null;
    await until(
      async () => {
        entry = await env.server.db.auditLog.findFirst({ where: { request_id: requestId, action: 'exports.create' } });
        return entry !== null;
      },
      { what: "the export's audit entry" },
    );
    expect(entry).toMatchObject({
      actor_key_hash: seeded.management.hash,
      target_id: env.server.organizationId,
      changes: { completed: true, counts: trailer.counts },
    });
  });
});

async function asJson(answer: Promise<{ res: Response; text: string }>) {
  const { res, text } = await answer;
  return { status: res.status, body: JSON.parse(text) as unknown };
}

describe('a client that leaves mid-stream', () => {
  /** About 4 KB of content each: 20 MB in all, far more than the sockets' buffers hold. */
  const COUNT = 5_000;

  beforeAll(async () => {
    const key = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: seeded.regular.hash } });
    await seedGenerations(
      env.server.db,
      { organizationId: env.server.organizationId, workspaceId: key.workspace_id, keyId: key.id, userId: key.creator_user_id },
      COUNT,
    );
  }, scaled(120_000));

  it(
    'stops the reads: no query left running, the audit entry says where it stopped',
    async () => {
      const abort = new AbortController();
      const res = await env.server.request('/api/v1/export', { signal: abort.signal });
      const requestId = res.headers.get('x-request-id');
      const reader = res.body!.getReader();
      let received = 0;
      while (received < 1024 * 1024) received += (await reader.read()).value?.length ?? 0;
      abort.abort();
      let changes: { completed: boolean; counts: Record<string, number> } | null = null;
      await until(
        async () => {
          const entry = await env.server.db.auditLog.findFirst({ where: { request_id: requestId, action: 'exports.create' } });
          changes = entry?.changes as typeof changes;
          return entry !== null;
        },
        { what: "the cut export's audit entry" },
      );
      expect(changes).toMatchObject({ completed: false });
      expect(changes!.counts.generation).toBeLessThan(COUNT);
      // No connection is left reading generations for nobody.
      await until(
        async () => {
          const [{ n }] = await env.server.db.$queryRaw<[{ n: bigint }]>`
          SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle' AND query LIKE '%generations%'`;
          return n === 0n;
        },
        { what: 'no query on generations left running' },
      );
      // And the next export is whole.
      const { trailer } = parse((await exportOf()).text);
      expect(trailer.counts.generation).toBeGreaterThan(COUNT);
    },
    scaled(60_000),
  );
});
