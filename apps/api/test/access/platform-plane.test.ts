// What a hostile tenant tried (issue "Two planes"), each now refused, and what the platform plane
// does instead: the catalog, money and recording belong to platform keys; organizations are made,
// listed and disabled by the platform; tRPC batches are bounded; sums cannot overflow.
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, demoCatalog, generationId, record } from '../fixtures-catalog.js';
import { createOrganization, useServer } from '../fixtures.js';
import { CreateKeyOutputSchema, type OrganizationSettings, OrganizationSettingsOutputSchema } from '@switchyard/schema';
import { hashApiKey } from '../../src/access/key-format.js';
import { trpc, trpcRaw } from '../fixtures-trpc.js';

const PLATFORM_ONLY = 'Only platform keys can perform this operation';

const env = useServer('Hostile');

beforeAll(async () => {
  expect((await trpc(env.server, 'models.import', demoCatalog)).status).toBe(200);
});

async function modelAsSeenBy(key: string, id = 'openai/gpt-4o') {
  const res = await env.server.request(`/api/v1/model/${id.replace(':', '%3A')}`, { key });
  return { status: res.status, body: (await res.json()) as { data?: { name: string; pricing: { prompt: string } } } };
}

describe('the catalog is written by the platform only', () => {
  it("another organization's management key cannot rename, re-price, re-point or delete what everyone sees", async () => {
    const before = await modelAsSeenBy(env.server.managementKey);
    const model = demoCatalog.models.find((m) => m.id === 'openai/gpt-4o')!;
    const attempts: Array<[string, unknown]> = [
      ['models.upsert', { ...model, name: 'Free GPT', pricing: { ...model.pricing, prompt: '0', completion: '0' } }],
      ['models.upsertAlias', { alias: 'openai/gpt-4o-mini', model_id: 'openai/gpt-4o' }],
      ['models.upsertVariant', { model_id: 'openai/gpt-4o', variant: 'free' }],
      ['models.import', { models: Array.from({ length: 50 }, (_, i) => ({ ...model, id: `spam/embed-${i}` })) }],
    ];
    for (const [procedure, input] of attempts) {
      const res = await trpcRaw(env.server, procedure, input, { key: env.other.managementKey });
      expect(res.status, procedure).toBe(403);
      expect(res.error?.message).toBe(PLATFORM_ONLY);
    }
    expect(await modelAsSeenBy(env.server.managementKey)).toEqual(before);
    expect(await env.server.db.model.count({ where: { id: { startsWith: 'spam/' } } })).toBe(0);
  });

  it('the platform key writes it, and every organization sees the change', async () => {
    const model = demoCatalog.models.find((m) => m.id === 'openai/gpt-4o')!;
    expect((await trpc(env.server, 'models.upsert', { ...model, name: 'GPT-4o (curated)' })).status).toBe(200);
    for (const key of [env.server.managementKey, env.other.managementKey]) {
      expect((await modelAsSeenBy(key)).body.data?.name).toBe('GPT-4o (curated)');
    }
  });
});

describe('money moves by the platform only', () => {
  it('a tenant cannot add credits to itself or record spend of its own choosing', async () => {
    const mint = await trpc(
      env.server,
      'generations.addCredits',
      { organization_id: env.other.organizationId, amount: 1e12 },
      { key: env.other.managementKey },
    );
    expect(mint).toMatchObject({ status: 403, error: { message: PLATFORM_ONLY } });
    const { hash } = await createKey(env.server, {}, env.other.managementKey);
    const fake = await trpc(
      env.server,
      'generations.record',
      { id: generationId(), api_key_hash: hash, model: 'm/x', usage: 0 },
      { key: env.other.managementKey },
    );
    expect(fake.status).toBe(403);
    expect((await env.server.db.organization.findUniqueOrThrow({ where: { id: env.other.organizationId } })).credit_balance.toNumber()).toBe(0);
  });

  it('the platform names the organization it credits; an unknown one is a 404', async () => {
    const res = await trpc(env.server, 'generations.addCredits', { organization_id: env.other.organizationId, amount: 5 });
    expect(res).toMatchObject({ status: 200, data: { credit_balance: 5 } });
    expect((await trpc(env.server, 'generations.addCredits', { organization_id: 'org_doesnotexist', amount: 5 })).status).toBe(404);
    expect((await trpcRaw(env.server, 'generations.addCredits', { amount: 5 })).status).toBe(400);
  });

  it("a tenant can neither claim another organization's generation id first nor probe which ids exist", async () => {
    const { hash } = await createKey(env.server);
    const theirs = await createKey(env.server, {}, env.other.managementKey);
    const id = generationId();
    // The hostile tenant cannot record at all, so it cannot claim the id first...
    const claim = await trpc(env.server, 'generations.record', { id, api_key_hash: theirs.hash, model: 'm/x' }, { key: env.other.managementKey });
    expect(claim.status).toBe(403);
    // ...and the real recording of that id counts.
    await record(env.server, { id, api_key_hash: hash, usage: 2 });
    expect((await env.server.db.generation.findUniqueOrThrow({ where: { id } })).organization_id).toBe(env.server.organizationId);
    // Probing: a known and an unknown id answer the same to a tenant.
    const known = await trpc(env.server, 'generations.record', { id, api_key_hash: theirs.hash, model: 'm/x' }, { key: env.other.managementKey });
    const unknown = await trpc(
      env.server,
      'generations.record',
      { id: generationId(), api_key_hash: theirs.hash, model: 'm/x' },
      { key: env.other.managementKey },
    );
    expect([known.status, known.error?.message]).toEqual([unknown.status, unknown.error?.message]);
  });

  it('no sum overflows: recordings at the largest accepted usage keep being counted', async () => {
    const org = await createOrganization(env.server.db, 'Big spender');
    const { key, hash } = await createKey(env.server, {}, org.managementKey);
    for (let i = 0; i < 12; i++) await record(env.server, { api_key_hash: hash, usage: 1e15 });
    const res = await env.server.request('/api/v1/key', { key });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { usage: number } }).data.usage).toBe(1.2e16);
    const balance = (await env.server.db.organization.findUniqueOrThrow({ where: { id: org.organizationId } })).credit_balance;
    expect(balance.toString()).toBe('-12000000000000000');
    // Credits keep adding up from there too.
    for (let i = 0; i < 13; i++) await trpc(env.server, 'generations.addCredits', { organization_id: org.organizationId, amount: 1e12 });
    const after = (await env.server.db.organization.findUniqueOrThrow({ where: { id: org.organizationId } })).credit_balance;
    expect(after.toString()).toBe('-11987000000000000');
    // Amounts beyond what a column holds are refused at the schema.
    expect((await trpc(env.server, 'generations.record', { id: generationId(), api_key_hash: hash, model: 'm/x', usage: 1e16 })).status).toBe(400);
    expect((await trpc(env.server, 'keys.create', { name: 'x', limit: 1e16 }, { key: org.managementKey })).status).toBe(400);
  });
});

describe('organizations, by the platform', () => {
  it('creates one with a default workspace, an owner and a management key that works at once', async () => {
    const res = await trpc(env.server, 'organizations.create', { name: 'Acme', owner_email: 'boss@acme.example' });
    expect(res.status).toBe(200);
    const created = res.data;
    expect(created).toMatchObject({
      organization_id: expect.stringMatching(/^org_[0-9a-f]{24}$/),
      workspace_id: expect.any(String),
      management_key: expect.stringMatching(/^sk-sy-v1-[0-9a-f]{64}$/),
      organization: { name: 'Acme', disabled: false, credit_balance: 0 },
    });
    const key = await env.server.request('/api/v1/key', { key: created.management_key });
    expect(key.status).toBe(200);
    expect(((await key.json()) as { data: { organization_id: string } }).data.organization_id).toBe(created.organization_id);
    const members = await env.server.request('/api/v1/organization/members', { key: created.management_key });
    expect(((await members.json()) as { data: Array<{ email: string; role: string }> }).data).toEqual([
      expect.objectContaining({ email: 'boss@acme.example', role: 'org:admin' }),
    ]);
  });

  it('lists them; disabling one refuses all of its keys at once (401), and only the platform may', async () => {
    const doomed = await createOrganization(env.server.db, 'Doomed');
    const listed = await trpc(env.server, 'organizations.list', { limit: 100 }, { query: true });
    expect(listed.data.data.map((o: { id: string }) => o.id)).toEqual(expect.arrayContaining([env.server.organizationId, doomed.organizationId]));
    expect((await env.server.request('/api/v1/key', { key: doomed.managementKey })).status).toBe(200);
    for (const key of [doomed.managementKey, env.server.managementKey]) {
      expect((await trpc(env.server, 'organizations.disable', { organization_id: doomed.organizationId }, { key })).status).toBe(403);
    }
    const disabled = await trpc(env.server, 'organizations.disable', { organization_id: doomed.organizationId });
    expect(disabled.data).toMatchObject({ id: doomed.organizationId, disabled: true });
    expect((await env.server.request('/api/v1/key', { key: doomed.managementKey })).status).toBe(401);
    expect((await trpc(env.server, 'organizations.disable', { organization_id: 'org_nope' })).status).toBe(404);
    // Everyone else is untouched.
    expect((await env.server.request('/api/v1/key', { key: env.other.managementKey })).status).toBe(200);
  });

  it('issues a new management key to an organization that lost its own: only the platform may; 404 for none', async () => {
    const org = await createOrganization(env.server.db, 'Locked out');
    // Its management key disabled by another process (straight to the database): nothing of its own can make another.
    await env.server.db.apiKey.updateMany({ where: { organization_id: org.organizationId }, data: { disabled: true } });
    // A plain member older than the owner: the key's creator is still the oldest admin.
    await env.server.db.user.create({ data: { id: `user_old_${org.organizationId}`, email: `old-${org.organizationId}@example.com` } });
    await env.server.db.organizationMember.create({
      data: { organization_id: org.organizationId, user_id: `user_old_${org.organizationId}`, role: 'member', created_at: new Date('2000-01-01T00:00:00Z') },
    });
    const input = { organization_id: org.organizationId, name: 'Recovery' };
    expect((await trpc(env.server, 'organizations.issueManagementKey', input, { key: org.managementKey })).status).toBe(401);
    expect((await trpc(env.server, 'organizations.issueManagementKey', input, { key: env.server.managementKey })).status).toBe(403);
    expect((await trpc(env.server, 'organizations.issueManagementKey', input, { key: null })).status).toBe(401);
    expect((await trpc(env.server, 'organizations.issueManagementKey', { organization_id: 'org_nope' })).status).toBe(404);

    const issued = await trpc(env.server, 'organizations.issueManagementKey', input);
    expect(issued.status).toBe(200);
    const { data, key } = CreateKeyOutputSchema.parse(issued.data);
    expect(data).toMatchObject({ name: 'Recovery', is_management_key: true, disabled: false, workspace_id: org.workspaceId });
    expect(hashApiKey(key)).toBe(data.hash);
    // It is the organization's, made by its owner, and manages it at once.
    expect(await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: data.hash } })).toMatchObject({
      organization_id: org.organizationId,
      creator_user_id: org.userId,
    });
    expect((await env.server.request('/api/v1/keys', { key })).status).toBe(200);
    const own = (await (await env.server.request('/api/v1/key', { key })).json()) as { data: { organization_id: string } };
    expect(own.data.organization_id).toBe(org.organizationId);
  });
});

describe('tRPC batches are bounded', () => {
  it('a batch of more than 100 calls is refused whole, with the envelope, before any call runs', async () => {
    const { hash } = await createKey(env.server);
    const ids = Array.from({ length: 101 }, () => generationId());
    const body = Object.fromEntries(ids.map((id, i) => [i, { id, api_key_hash: hash, model: 'm/x' }]));
    const path = `/trpc/${Array(101).fill('generations.record').join(',')}?batch=1`;
    const res = await env.server.request(path, {
      key: env.server.platformKey,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(400);
    expect(await env.server.db.generation.count({ where: { id: { in: ids } } })).toBe(0);
    // Without a key too: nothing runs, so nothing costs the server a query per call.
    const anonymous = await env.server.request(`/trpc/${Array(1200).fill('keys.current').join(',')}?batch=1`, { key: null });
    expect(anonymous.status).toBe(400);
    // 100 is fine.
    const hundred = Object.fromEntries(ids.slice(0, 100).map((id, i) => [i, { id, api_key_hash: hash, model: 'm/x' }]));
    const ok = await env.server.request(`/trpc/${Array(100).fill('generations.record').join(',')}?batch=1`, {
      key: env.server.platformKey,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(hundred),
    });
    expect(ok.status).toBe(200);
    expect(await env.server.db.generation.count({ where: { id: { in: ids } } })).toBe(100);
  });
});

describe('the calls of one tRPC batch share one context', () => {
  // Authentication adds the admitted caller to the request's context, which a batch's calls share:
  // each call is still admitted by its own rule, whatever the others were.
  it("admits each call by its own rule: one call's caller is never another's", async () => {
    type Answer = { result?: { data: unknown }; error?: { data: { httpStatus: number } } };
    const call = async (procedures: string[], key: string): Promise<Answer[]> => {
      const inputs = Object.fromEntries(procedures.map((p, i) => [i, p === 'organizations.list' || p === 'models.list' ? {} : undefined]));
      const input = procedures.length > 1 ? inputs : inputs[0];
      const query = [...(procedures.length > 1 ? ['batch=1'] : []), ...(input === undefined ? [] : [`input=${encodeURIComponent(JSON.stringify(input))}`])];
      const res = await env.server.request(`/trpc/${procedures.join(',')}?${query.join('&')}`, { key });
      const body = (await res.json()) as Answer | Answer[];
      return Array.isArray(body) ? body : [body];
    };
    const statuses = (answers: Answer[]) => answers.map((a) => (a.error ? a.error.data.httpStatus : 200));
    const alone = async (procedure: string, key: string) => (await call([procedure], key))[0]!.result?.data;

    // A tenant's key: its own key, the platform's list of organizations, the catalog, its own key again.
    const tenant = await call(['keys.current', 'organizations.list', 'models.list', 'keys.current'], env.other.managementKey);
    expect(statuses(tenant)).toEqual([200, 403, 200, 200]);
    const own = await alone('keys.current', env.other.managementKey);
    expect(tenant[0]!.result?.data).toEqual(own);
    expect(tenant[3]!.result?.data).toEqual(own);
    expect(tenant[2]!.result?.data).toEqual(await alone('models.list', env.other.managementKey));
    // The platform's key: the list, a tenant's procedure (no organization to act in), the list again.
    const platform = await call(['organizations.list', 'keys.current', 'organizations.list'], env.server.platformKey);
    expect(statuses(platform)).toEqual([200, 403, 200]);
    expect(platform[0]!.result?.data).toEqual(await alone('organizations.list', env.server.platformKey));
  });
});

describe('one workspace rule', () => {
  it('keys.create takes a workspace slug as byok.create does', async () => {
    const ws = await trpc(env.server, 'workspaces.create', { slug: 'slug-team', name: 'Slug team' });
    expect(ws.status).toBe(200);
    const key = await trpc(env.server, 'keys.create', { name: 'by slug', workspace_id: 'slug-team' });
    expect(key.status).toBe(200);
    expect(key.data.data.workspace_id).toBe(ws.data.data.id);
    const byok = await trpc(env.server, 'byok.create', { workspace_id: 'slug-team', provider: 'openai', name: 'b', key: 'sk-1234567890abcdef' });
    expect(byok.data.data.workspace_id).toBe(ws.data.data.id);
    // Another organization's slug names nothing for this key; POST /keys lists no 404, so both faces answer 400.
    expect((await trpc(env.server, 'keys.create', { name: 'x', workspace_id: 'slug-team' }, { key: env.other.managementKey })).status).toBe(400);
  });
});

describe('organizations.settings and organizations.updateSettings: the quotas the platform grants', () => {
  type Answer = { status: number; data: { data: OrganizationSettings } };
  const settings = (organization_id: string, key?: string) =>
    trpcRaw(env.server, 'organizations.settings', { organization_id }, { key, query: true }) as Promise<Answer>;
  // Raw: some inputs are meant to be refused.
  const update = (input: Record<string, unknown>, key?: string) => trpcRaw(env.server, 'organizations.updateSettings', input, { key }) as Promise<Answer>;

  it('answers the defaults until set (null, or the default alert thresholds); sets, keeps what is omitted, and clears with null', async () => {
    const org = await createOrganization(env.server.db, 'Settled');
    const empty = await settings(org.organizationId);
    expect(empty.status).toBe(200);
    expect(OrganizationSettingsOutputSchema.strict().parse(empty.data)).toEqual({
      data: {
        organization_id: org.organizationId,
        free_model_requests_per_minute: null,
        api_requests_per_minute_per_key: null,
        api_requests_per_minute: null,
        alert_thresholds: [50, 80, 100],
        credits_low_usd: null,
        content_retention_days: null,
        updated_at: null,
      },
    });
    const set = await update({ organization_id: org.organizationId, free_model_requests_per_minute: 7 });
    expect(set.status).toBe(200);
    expect(set.data.data).toMatchObject({ organization_id: org.organizationId, free_model_requests_per_minute: 7 });
    expect(Date.parse(set.data.data.updated_at ?? '')).not.toBeNaN();
    expect((await update({ organization_id: org.organizationId })).data.data.free_model_requests_per_minute).toBe(7);
    expect((await settings(org.organizationId)).data.data.free_model_requests_per_minute).toBe(7);
    expect((await update({ organization_id: org.organizationId, free_model_requests_per_minute: null })).data.data.free_model_requests_per_minute).toBeNull();
    // Another organization's row is untouched.
    expect((await settings(env.other.organizationId)).data.data.free_model_requests_per_minute).toBeNull();
  });

  it('400 for a bad value or organization id; 404 for an unknown organization; 401 without a key; 403 for tenant keys', async () => {
    for (const bad of [-1, 1.5, '5', 2_000_000]) {
      expect((await update({ organization_id: env.other.organizationId, free_model_requests_per_minute: bad })).status, String(bad)).toBe(400);
    }
    expect((await settings('not-an-org')).status).toBe(400);
    expect((await settings('org_nope')).status).toBe(404);
    expect((await update({ organization_id: 'org_nope', free_model_requests_per_minute: 1 })).status).toBe(404);
    expect((await trpcRaw(env.server, 'organizations.settings', { organization_id: env.other.organizationId }, { key: null, query: true })).status).toBe(401);
    const regular = (await createKey(env.server, {})).key;
    for (const key of [env.other.managementKey, env.server.managementKey, regular]) {
      // A tenant can neither read nor raise its own quota, nor anyone else's.
      expect((await settings(env.other.organizationId, key)).status).toBe(403);
      expect((await update({ organization_id: env.other.organizationId, free_model_requests_per_minute: 1000 }, key)).status).toBe(403);
    }
    expect((await settings(env.other.organizationId)).data.data.free_model_requests_per_minute).toBeNull();
  });
});
