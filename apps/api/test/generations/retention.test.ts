// Retention of stored generation content (docs/operations.md#retention): the
// organization's own setting (settings.retention / settings.updateRetention, and the platform's
// organizations.settings), and the periodic sweep on the real server: content of generations older
// than the organization's retention goes, their records and spend stay, other organizations are
// untouched.
import { OrganizationRetentionOutputSchema } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hashApiKey } from '../../src/access/key-format.js';
import { sweepOrganizationContent } from '../../src/modules/settings/retention-queries.js';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { createOrganization, until, type OrgFixture } from '../fixtures.js';
import { createKey, record } from '../fixtures-catalog.js';
import { ok, trpcRaw } from '../fixtures-trpc.js';

const DAY = 86_400_000;
let server: TestServer;

beforeAll(async () => {
  // The sweep runs every 200 ms here (one hour by default).
  server = await startTestServer({
    adminUrl: inject('pgAdminUrl'),
    template: inject('pgTemplate'),
    env: { CONTENT_RETENTION_SWEEP_INTERVAL_MS: '200' },
  });
});
afterAll(async () => {
  await server?.close();
});

const CONTENT = { input: { messages: [{ role: 'user', content: 'Remember me?' }] }, output: { completion: 'For a while.' } };

/** A generation of `org`'s management key, made `daysAgo` days ago, with content. */
const recordAged = (org: OrgFixture, daysAgo: number, usage = 0.5) =>
  record(server, {
    api_key_hash: hashApiKey(org.managementKey),
    created_at: new Date(Date.now() - daysAgo * DAY).toISOString(),
    usage,
    content: CONTENT,
  });

const contentAnswer = async (id: string, key: string) => (await server.request(`/api/v1/generation/content?id=${encodeURIComponent(id)}`, { key })).status;
const generationAnswer = async (id: string, key: string) => {
  const res = await server.request(`/api/v1/generation?id=${encodeURIComponent(id)}`, { key });
  return { status: res.status, body: (await res.json()) as { data: { id: string; usage: number; created_at: string } } };
};
const stored = (ids: string[]) => server.db.generationContent.count({ where: { generation_id: { in: ids } } });

describe('settings.retention and settings.updateRetention', () => {
  it('answers null (keep everything) until set; sets, resets; the platform sees and sets the same field', async () => {
    const org = await createOrganization(server.db, 'Retention settings');
    const as = { key: org.managementKey };
    const shown = await trpcRaw(server, 'settings.retention', undefined, { ...as, query: true });
    expect(shown.status).toBe(200);
    expect(OrganizationRetentionOutputSchema.strict().parse(shown.data)).toEqual({ data: { content_retention_days: null, updated_at: null } });

    const set = await trpcRaw(server, 'settings.updateRetention', { content_retention_days: 30 }, as);
    expect(set.status).toBe(200);
    const body = OrganizationRetentionOutputSchema.strict().parse(set.data);
    expect(body.data.content_retention_days).toBe(30);
    expect(body.data.updated_at).not.toBeNull();
    expect((await trpcRaw(server, 'settings.retention', undefined, { ...as, query: true })).data).toMatchObject({ data: { content_retention_days: 30 } });

    // The platform reads and sets it in organizations.settings, beside the other fields.
    const platform = await ok(server, 'organizations.settings', { organization_id: org.organizationId }, { query: true });
    expect(platform.data).toMatchObject({ content_retention_days: 30, alert_thresholds: [50, 80, 100], free_model_requests_per_minute: null });
    await ok(server, 'organizations.updateSettings', { organization_id: org.organizationId, content_retention_days: 7 });
    expect((await trpcRaw(server, 'settings.retention', undefined, { ...as, query: true })).data).toMatchObject({ data: { content_retention_days: 7 } });
    // Another field through the platform leaves it unchanged.
    await ok(server, 'organizations.updateSettings', { organization_id: org.organizationId, free_model_requests_per_minute: 9 });
    expect((await trpcRaw(server, 'settings.retention', undefined, { ...as, query: true })).data).toMatchObject({ data: { content_retention_days: 7 } });

    // null: keep everything again.
    expect((await trpcRaw(server, 'settings.updateRetention', { content_retention_days: null }, as)).data).toMatchObject({
      data: { content_retention_days: null },
    });
    // The write is audited, with what changed.
    const entries = await server.db.auditLog.findMany({
      where: { action: 'settings.updateRetention', target_id: org.organizationId },
      orderBy: { created_at: 'asc' },
    });
    expect(entries.map((e) => e.changes)).toEqual([
      { before: { content_retention_days: null }, after: { content_retention_days: 30 } },
      { before: { content_retention_days: 7 }, after: { content_retention_days: null } },
    ]);
    // Each organization its own: the server's organization has no row.
    expect((await trpcRaw(server, 'settings.retention', undefined, { query: true })).data).toMatchObject({ data: { content_retention_days: null } });
  });

  it('400 in the error envelope for days out of 1..3650, fractions, text, or a missing field; nothing changes', async () => {
    const org = await createOrganization(server.db, 'Retention bounds');
    for (const input of [
      { content_retention_days: 0 },
      { content_retention_days: -1 },
      { content_retention_days: 3651 },
      { content_retention_days: 1.5 },
      { content_retention_days: '30' },
      {},
      undefined,
    ]) {
      const answer = await trpcRaw(server, 'settings.updateRetention', input, { key: org.managementKey });
      expect(answer.status, JSON.stringify(input)).toBe(400);
      expect(answer.error?.message).toBeTruthy();
    }
    for (const content_retention_days of [0, 3651]) {
      const answer = await trpcRaw(server, 'organizations.updateSettings', { organization_id: org.organizationId, content_retention_days });
      expect(answer.status).toBe(400);
    }
    expect(await server.db.organizationSettings.findUnique({ where: { organization_id: org.organizationId } })).toBeNull();
    // The bounds themselves are allowed.
    for (const content_retention_days of [1, 3650]) {
      expect((await trpcRaw(server, 'settings.updateRetention', { content_retention_days }, { key: org.managementKey })).status).toBe(200);
    }
  });

  it('401 without a key; 403 for a regular key, a platform key and a management key without the analytics scope', async () => {
    const regular = await createKey(server);
    const budgets = await createKey(server, { is_management_key: true, scopes: ['budgets:write'] });
    const readOnly = await createKey(server, { is_management_key: true, scopes: ['analytics:read'] });
    const writer = await createKey(server, { is_management_key: true, scopes: ['analytics:write'] });
    for (const path of ['settings.retention', 'settings.updateRetention'] as const) {
      const query = path === 'settings.retention';
      const input = query ? undefined : { content_retention_days: 30 };
      expect((await trpcRaw(server, path, input, { key: null, query })).status).toBe(401);
      expect((await trpcRaw(server, path, input, { key: regular.key, query })).status).toBe(403);
      expect((await trpcRaw(server, path, input, { key: server.platformKey, query })).status).toBe(403);
      const scoped = await trpcRaw(server, path, input, { key: budgets.key, query });
      expect(scoped.status).toBe(403);
      expect(scoped.error?.data.metadata?.reason).toContain(query ? 'analytics:read' : 'analytics:write');
    }
    expect((await trpcRaw(server, 'settings.retention', undefined, { key: readOnly.key, query: true })).status).toBe(200);
    expect((await trpcRaw(server, 'settings.updateRetention', { content_retention_days: 30 }, { key: readOnly.key })).status).toBe(403);
    expect((await trpcRaw(server, 'settings.updateRetention', { content_retention_days: null }, { key: writer.key })).status).toBe(200);
    // organizations.settings stays the platform's: 403 for a management key.
    expect(
      (
        await trpcRaw(
          server,
          'organizations.updateSettings',
          { organization_id: server.organizationId, content_retention_days: 1 },
          { key: server.managementKey },
        )
      ).status,
    ).toBe(403);
  });
});

describe('the content retention sweep', () => {
  it("deletes the content of generations older than the organization's retention, keeps their records and spend, and leaves other organizations alone", async () => {
    const a = await createOrganization(server.db, 'Thirty days');
    const b = await createOrganization(server.db, 'Keeps everything');
    for (const org of [a, b]) await ok(server, 'generations.addCredits', { organization_id: org.organizationId, amount: 100 });
    const ages = [400, 45, 31, 29, 1, 0];
    const aIds = await Promise.all(ages.map((days) => recordAged(a, days)));
    const bIds = await Promise.all(ages.map((days) => recordAged(b, days)));
    const [aOld, aRecent] = [aIds.slice(0, 3), aIds.slice(3)];
    const spendOf = async (org: OrgFixture) => (await server.db.organization.findUniqueOrThrow({ where: { id: org.organizationId } })).total_usage.toNumber();
    const before = { a: await spendOf(a), b: await spendOf(b), rollups: await server.db.keyUsageDaily.count({ where: { organization_id: a.organizationId } }) };
    expect(await stored([...aIds, ...bIds])).toBe(12);

    expect((await trpcRaw(server, 'settings.updateRetention', { content_retention_days: 30 }, { key: a.managementKey })).status).toBe(200);
    await until(async () => (await stored(aOld)) === 0, { what: "organization A's content older than 30 days swept" });

    // A's recent content stays; B (no retention) keeps all of its content, the oldest included.
    expect(await stored(aRecent)).toBe(3);
    expect(await stored(bIds)).toBe(6);
    for (const id of aOld) {
      // The content answers as for a generation whose content was not stored; the record stays.
      expect(await contentAnswer(id, a.managementKey)).toBe(404);
      const generation = await generationAnswer(id, a.managementKey);
      expect(generation.status).toBe(200);
      expect(generation.body.data).toMatchObject({ id, usage: 0.5 });
    }
    for (const id of aRecent) expect(await contentAnswer(id, a.managementKey)).toBe(200);
    expect(await contentAnswer(bIds[0]!, b.managementKey)).toBe(200);
    // Metadata and spend: every generation row, rollup and total stays.
    expect(await server.db.generation.count({ where: { id: { in: [...aIds, ...bIds] } } })).toBe(12);
    expect({
      a: await spendOf(a),
      b: await spendOf(b),
      rollups: await server.db.keyUsageDaily.count({ where: { organization_id: a.organizationId } }),
    }).toEqual(before);

    // A shorter retention later takes more; a recording backdated past it loses its content at the next round.
    const backdated = await recordAged(a, 90);
    await ok(server, 'organizations.updateSettings', { organization_id: a.organizationId, content_retention_days: 2 });
    await until(async () => (await stored([aRecent[0]!, backdated])) === 0, { what: 'content older than 2 days swept' });
    expect(await stored(aRecent.slice(1))).toBe(2);
    expect(await stored(bIds)).toBe(6);
  });

  it('goes through the organization in batches (a keyset over more generations than one batch)', async () => {
    const org = await createOrganization(server.db, 'Many old');
    const hash = hashApiKey(org.managementKey);
    const ids = Array.from({ length: 40 }, (_, i) => `gen-many-${org.organizationId}-${i}`);
    // Many generations on the same instant: the keyset orders ties by id.
    const at = new Date(Date.now() - 100 * DAY).toISOString();
    const { status, error } = await trpcRaw(server, 'generations.recordBatch', {
      generations: ids.map((id) => ({ id, api_key_hash: hash, model: 'openai/gpt-4o', created_at: at, content: CONTENT })),
    });
    expect(status, JSON.stringify(error)).toBe(200);
    expect(await stored(ids)).toBe(40);
    // Called directly, with a cut-off now and batches of 7: every one of them goes, and only those.
    expect(await sweepOrganizationContent(server.db, { organizationId: org.organizationId }, new Date(), 7)).toBe(40);
    expect(await stored(ids)).toBe(0);
    expect(await server.db.generation.count({ where: { id: { in: ids } } })).toBe(40);
    // Again: nothing left to do.
    expect(await sweepOrganizationContent(server.db, { organizationId: org.organizationId }, new Date(), 7)).toBe(0);
  });
});
