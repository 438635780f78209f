// Observability destinations (platform-api.md part 3, D17-D21) on the real server: REST and tRPC,
// every type's config rules, masking and the masked value sent back, the 5-per-type limit under a
// race, the webhook signing secret, every kind of caller, isolation between organizations, and the
// reseal of destination secrets after a key rotation.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DeletedOutputSchema,
  DESTINATION_CONFIG_KEYS,
  DESTINATION_SECRET_KEYS,
  DESTINATION_TYPES,
  DestinationOutputSchema,
  ListDestinationsOutputSchema,
  type DestinationType,
} from '@switchyard/schema';
import { resealOrganizationSecrets } from '../../src/modules/byok/byok.service.js';
import { parseSecretKey, SecretBox, SECRET_KEY_FILE } from '../../src/lib/secret-box.js';
import { maskSecret } from '../../src/modules/destinations/destinations-secrets.js';
import { createOrganization, managementActor, useServer } from '../fixtures.js';
import { createRegularKey, createWorkspace, errorOf, expectEnvelope, expectPaginationEdges, rest } from '../fixtures-admin.js';
import { testServerWith } from '../fixtures-files.js';
import { ok, trpc } from '../fixtures-trpc.js';

const env = useServer();
const PATH = '/observability/destinations';

/** A valid config for every type: required keys, with long secrets (so that masks show their ends). */
function configFor(type: DestinationType): Record<string, string> {
  const config: Record<string, string> = {};
  for (const key of DESTINATION_CONFIG_KEYS[type].required) {
    if (key === 'url' || key === 'endpoint' || key === 'otlpEndpoint') config[key] = `https://${type}.example.com/v1/${key}`;
    else if (DESTINATION_SECRET_KEYS.includes(key)) config[key] = `${key}-secret-${randomBytes(8).toString('hex')}`;
    else config[key] = `${key}-value`;
  }
  return config;
}

async function createIn(workspace_id: string, type: DestinationType = 'webhook', extra: Record<string, unknown> = {}, key?: string | null) {
  return rest(env.server, PATH, { method: 'POST', key, json: { type, name: `${type} dest`, workspace_id, config: configFor(type), ...extra } });
}

let wsCounter = 0;
const freshWorkspace = async () => (await createWorkspace(env.server, `dest-ws-${++wsCounter}-${randomBytes(3).toString('hex')}`)).id;

describe('POST /observability/destinations (D18)', () => {
  it('201 { data: Destination } for every type, with defaults, masked secrets and the delivery field', async () => {
    const workspace = await freshWorkspace();
    for (const type of DESTINATION_TYPES) {
      const config = configFor(type);
      const res = await rest(env.server, PATH, { method: 'POST', json: { type, name: `n-${type}`, workspace_id: workspace, config } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const { data } = DestinationOutputSchema.parse(res.body);
      expect(data).toMatchObject({
        type,
        name: `n-${type}`,
        workspace_id: workspace,
        enabled: true,
        sampling_rate: 1,
        privacy_mode: false,
        regions: ['global'],
        api_key_hashes: null,
        broadcast_generation_cost: false,
        broadcast_generation_identity: false,
        broadcast_generation_request_context: false,
        filter_rules: null,
        // webhook, otel-collector and s3 are delivered (docs/events.md#delivery); the others say so.
        delivery: ['webhook', 'otel-collector', 's3'].includes(type) ? 'supported' : 'not_supported',
      });
      for (const [key, value] of Object.entries(config)) {
        expect((data.config as Record<string, string>)[key]).toBe(DESTINATION_SECRET_KEYS.includes(key) ? maskSecret(value) : value);
      }
      expect(JSON.stringify(res.body)).not.toContain('-secret-');
    }
    const list = ListDestinationsOutputSchema.parse((await rest(env.server, `${PATH}?workspace_id=${workspace}`)).body);
    expect(list.total_count).toBe(DESTINATION_TYPES.length);
    const webhook = list.data.find((d) => d.type === 'webhook')!;
    expect(webhook.config).toMatchObject({ method: 'POST' });
    expect(list.data.find((d) => d.type === 's3')!.config).toMatchObject({ prefix: 'switchyard-traces', pathTemplate: '{prefix}/{date}' });
  });

  it('stores every field given: regions (eu as europe), key hashes, filter rules, headers (masked), sampling', async () => {
    const { hash } = await createRegularKey(env.server);
    const res = await rest(env.server, PATH, {
      method: 'POST',
      json: {
        type: 'webhook',
        name: 'full',
        config: { url: 'https://hooks.example.com/in', method: 'PUT', headers: { Authorization: 'Bearer abcdefghijklmnop', 'X-Short': 'short' } },
        enabled: false,
        privacy_mode: true,
        broadcast_generation_cost: true,
        broadcast_generation_identity: true,
        broadcast_generation_request_context: true,
        sampling_rate: 0.25,
        regions: ['eu', 'us', 'europe'],
        api_key_hashes: [hash],
        filter_rules: {
          groups: [
            {
              rules: [
                { field: 'model', operator: 'regex', value: '^openai/' },
                { field: 'user_id', operator: 'exists' },
              ],
            },
          ],
        },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { data } = DestinationOutputSchema.parse(res.body);
    expect(data).toMatchObject({
      workspace_id: env.server.workspaceId,
      enabled: false,
      privacy_mode: true,
      sampling_rate: 0.25,
      regions: ['europe', 'us'],
      api_key_hashes: [hash],
      broadcast_generation_cost: true,
      config: { url: 'https://hooks.example.com/in', method: 'PUT', headers: { Authorization: 'Bea...mnop', 'X-Short': '****' } },
      filter_rules: {
        enabled: true,
        groups: [
          {
            logic: 'and',
            rules: [
              { field: 'model', operator: 'regex', value: '^openai/' },
              { field: 'user_id', operator: 'exists' },
            ],
          },
        ],
      },
    });
    // At rest: the secret is sealed, the stored config holds only the mask.
    const row = await env.server.db.observabilityDestination.findUniqueOrThrow({ where: { id: data.id } });
    expect(JSON.stringify(row)).not.toContain('abcdefghijklmnop');
    expect(row.secrets_ciphertext).toMatch(/^v1\./);
  });

  it('400 naming the field: missing required key, unknown key, unknown type, bad URL, sampling, regions, key hashes, regex', async () => {
    const bad = async (json: Record<string, unknown>, names: string) => {
      const res = await rest(env.server, PATH, { method: 'POST', json: { type: 'webhook', name: 'bad', config: { url: 'https://ok.example.com/' }, ...json } });
      expectEnvelope(res, 400);
      expect(JSON.stringify(errorOf(res).metadata)).toContain(names);
    };
    await bad({ type: 's3', config: { bucketName: 'b', accessKeyId: 'AKIA' } }, 'config.secretAccessKey');
    await bad({ config: {} }, 'config.url');
    await bad({ config: { url: 'https://ok.example.com/', colour: 'red' } }, 'colour');
    await bad({ type: 'pagerduty' }, 'type');
    await bad({ config: { url: 'http://hooks.example.com/' } }, 'config.url');
    await bad({ config: { url: 'http://127.0.0.1:9/' } }, 'config.url');
    await bad({ config: { url: 'ftp://hooks.example.com/' } }, 'config.url');
    await bad({ config: { url: 'not a url' } }, 'config.url');
    await bad({ type: 'sentry', config: { dsn: 'https://k@o.ingest.sentry.io/1', otlpEndpoint: 'http://sentry.example.com' } }, 'config.otlpEndpoint');
    await bad({ config: { url: 'https://ok.example.com/', method: 'GET' } }, 'config.method');
    await bad({ config: { url: 'https://ok.example.com/', headers: { 'Bad Header': 'x' } } }, 'config.headers');
    await bad({ sampling_rate: 0 }, 'sampling_rate');
    await bad({ sampling_rate: 1.5 }, 'sampling_rate');
    await bad({ regions: [] }, 'regions');
    await bad({ api_key_hashes: [] }, 'api_key_hashes');
    await bad({ api_key_hashes: ['0'.repeat(64)] }, 'api_key_hashes');
    await bad({ filter_rules: { groups: [{ rules: [{ field: 'model', operator: 'regex', value: '(' }] }] } }, 'filter_rules.groups.0.rules.0.value');
    await bad({ name: undefined }, 'name');
    // Another organization's key hash is not the organization's.
    const theirs = await createRegularKey(env.server, undefined, env.other.managementKey);
    await bad({ api_key_hashes: [theirs.hash] }, 'api_key_hashes');
    // An unknown workspace: 404 is not listed for D18, so it is a bad parameter (400).
    await bad({ workspace_id: '00000000-0000-4000-8000-000000000000' }, '');
  });

  it('http is accepted only to a loopback host allowed in UPSTREAM_ALLOWED_HOSTS', async () => {
    const server = await testServerWith({ UPSTREAM_ALLOWED_HOSTS: '127.0.0.1:8099' });
    try {
      const post = (url: string) =>
        server.request('/api/v1/observability/destinations', {
          method: 'POST',
          key: server.managementKey,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'otel-collector', name: 'local', config: { endpoint: url } }),
        });
      expect((await post('http://127.0.0.1:8099/v1/traces')).status).toBe(201);
      expect((await post('http://127.0.0.1:8098/v1/traces')).status).toBe(400);
    } finally {
      await server.close();
    }
  });

  it('409 on the 6th destination of a type in a workspace; other types, other workspaces and deleted ones do not count', async () => {
    const workspace = await freshWorkspace();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await createIn(workspace);
      expect(res.status).toBe(201);
      ids.push(DestinationOutputSchema.parse(res.body).data.id);
    }
    expectEnvelope(await createIn(workspace), 409);
    expect((await createIn(workspace, 'langfuse')).status).toBe(201);
    expect((await createIn(await freshWorkspace())).status).toBe(201);
    expect((await rest(env.server, `${PATH}/${ids[0]}`, { method: 'DELETE' })).status).toBe(200);
    expect((await createIn(workspace)).status).toBe(201);
    expectEnvelope(await createIn(workspace), 409);
  });

  it('two creates racing for the 5th slot: one 201, one 409', async () => {
    for (let round = 0; round < 3; round++) {
      const workspace = await freshWorkspace();
      for (let i = 0; i < 4; i++) expect((await createIn(workspace, 'datadog')).status).toBe(201);
      const statuses = (await Promise.all([createIn(workspace, 'datadog'), createIn(workspace, 'datadog')])).map((r) => r.status).sort();
      expect(statuses).toEqual([201, 409]);
      expect(await env.server.db.observabilityDestination.count({ where: { workspace_id: workspace, type: 'datadog', deleted_at: null } })).toBe(5);
    }
  });
});

describe('GET /observability/destinations (D17) and GET /observability/destinations/{id} (D19)', () => {
  it('lists the default workspace by default, paginates, and gets one', async () => {
    const workspace = await freshWorkspace();
    for (let i = 0; i < 3; i++) expect((await createIn(workspace, 'posthog')).status).toBe(201);
    await expectPaginationEdges(env.server, `${PATH}?workspace_id=${workspace}`, 3);
    const slug = (await env.server.db.workspace.findUniqueOrThrow({ where: { id: workspace } })).slug;
    expect(ListDestinationsOutputSchema.parse((await rest(env.server, `${PATH}?workspace_id=${slug}`)).body).total_count).toBe(3);
    const list = ListDestinationsOutputSchema.parse((await rest(env.server, PATH)).body);
    expect(list.data.every((d) => d.workspace_id === env.server.workspaceId)).toBe(true);
    const first = ListDestinationsOutputSchema.parse((await rest(env.server, `${PATH}?workspace_id=${workspace}`)).body).data[0]!;
    const got = await rest(env.server, `${PATH}/${first.id}`);
    expect(got.status).toBe(200);
    expect(DestinationOutputSchema.parse(got.body).data).toEqual(first);
    expect((await ok(env.server, 'destinations.get', { id: first.id }, { query: true })).data).toEqual(first);
  });

  it('400 for a bad page or an unknown workspace; 404 for an unknown or malformed id', async () => {
    expectEnvelope(await rest(env.server, `${PATH}?limit=0`), 400);
    expectEnvelope(await rest(env.server, `${PATH}?limit=101`), 400);
    expectEnvelope(await rest(env.server, `${PATH}?workspace_id=no-such-workspace`), 400);
    expectEnvelope(await rest(env.server, `${PATH}/00000000-0000-4000-8000-000000000000`), 404);
    expectEnvelope(await rest(env.server, `${PATH}/not-a-uuid`), 404);
  });
});

describe('PATCH /observability/destinations/{id} (D20)', () => {
  it('changes only the fields given; a masked secret sent back is ignored; a new one replaces it', async () => {
    const created = DestinationOutputSchema.parse(
      (
        await rest(env.server, PATH, {
          method: 'POST',
          json: {
            type: 'langfuse',
            name: 'lf',
            workspace_id: await freshWorkspace(),
            config: { publicKey: 'pk-lf-public', secretKey: 'sk-lf-0123456789abcdef', headers: { 'X-Token': 'token-0123456789' } },
          },
        })
      ).body,
    ).data;
    const patch = async (json: Record<string, unknown>) => {
      const res = await rest(env.server, `${PATH}/${created.id}`, { method: 'PATCH', json });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return DestinationOutputSchema.parse(res.body).data;
    };
    const plaintext = async () => {
      const row = await env.server.db.observabilityDestination.findUniqueOrThrow({ where: { id: created.id } });
      const box = new SecretBox([parseSecretKey(await fs.readFile(path.join(env.server.dataDir, SECRET_KEY_FILE), 'utf8'))]);
      return JSON.parse(box.open(row.secrets_ciphertext!, row.id)) as Record<string, unknown>;
    };
    // The whole answer sent back (masks included) changes nothing but the name.
    const echoed = await patch({ name: 'renamed', config: created.config });
    expect(echoed).toMatchObject({ name: 'renamed', config: created.config });
    expect(Date.parse(echoed.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    expect(await plaintext()).toEqual({ secretKey: 'sk-lf-0123456789abcdef', headers: { 'X-Token': 'token-0123456789' } });
    // A new secret replaces the stored one; keys absent keep theirs.
    const rotated = await patch({ config: { secretKey: 'sk-lf-new-secret-9999' } });
    expect(rotated.config).toMatchObject({ publicKey: 'pk-lf-public', secretKey: 'sk-...9999', headers: { 'X-Token': 'tok...6789' } });
    expect(await plaintext()).toMatchObject({ secretKey: 'sk-lf-new-secret-9999' });
    // Every other field; null clears key hashes and filter rules.
    const { hash } = await createRegularKey(env.server);
    const full = await patch({
      enabled: false,
      privacy_mode: true,
      sampling_rate: 0.5,
      regions: ['eu'],
      api_key_hashes: [hash],
      filter_rules: { enabled: false, groups: [] },
      broadcast_generation_identity: true,
    });
    expect(full).toMatchObject({
      enabled: false,
      privacy_mode: true,
      sampling_rate: 0.5,
      regions: ['europe'],
      api_key_hashes: [hash],
      broadcast_generation_identity: true,
    });
    const cleared = await patch({ api_key_hashes: null, filter_rules: null });
    expect(cleared).toMatchObject({ api_key_hashes: null, filter_rules: null, regions: ['europe'] });
  });

  it('400 for type, workspace_id, an empty regions list, a bad config key or URL; 404 for an unknown id', async () => {
    const { id } = DestinationOutputSchema.parse((await createIn(await freshWorkspace())).body).data;
    const bad = async (json: Record<string, unknown>) => expectEnvelope(await rest(env.server, `${PATH}/${id}`, { method: 'PATCH', json }), 400);
    await bad({ type: 's3' });
    await bad({ workspace_id: env.server.workspaceId });
    await bad({ regions: [] });
    await bad({ api_key_hashes: [] });
    await bad({ config: { colour: 'red' } });
    await bad({ config: { url: 'http://example.com/' } });
    await bad({ sampling_rate: 2 });
    expectEnvelope(await rest(env.server, `${PATH}/00000000-0000-4000-8000-000000000000`, { method: 'PATCH', json: { name: 'x' } }), 404);
  });
});

describe('DELETE /observability/destinations/{id} (D21)', () => {
  it('{ deleted: true }; then it is gone from D17, and D19/D20/D21 answer 404', async () => {
    const workspace = await freshWorkspace();
    const { id } = DestinationOutputSchema.parse((await createIn(workspace)).body).data;
    const res = await rest(env.server, `${PATH}/${id}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(DeletedOutputSchema.parse(res.body)).toEqual({ deleted: true });
    expect(ListDestinationsOutputSchema.parse((await rest(env.server, `${PATH}?workspace_id=${workspace}`)).body).total_count).toBe(0);
    expectEnvelope(await rest(env.server, `${PATH}/${id}`), 404);
    expectEnvelope(await rest(env.server, `${PATH}/${id}`, { method: 'PATCH', json: { name: 'x' } }), 404);
    expectEnvelope(await rest(env.server, `${PATH}/${id}`, { method: 'DELETE' }), 404);
    const row = await env.server.db.observabilityDestination.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ secrets_ciphertext: null, signing_secret_ciphertext: null, enabled: false });
    expect(row.deleted_at).not.toBeNull();
  });
});

describe('the webhook signing secret (tRPC)', () => {
  it('whsec_ + base64 of 32 bytes, readable by management keys, rotated at once; not in the REST answer', async () => {
    const created = await createIn(await freshWorkspace());
    const { data } = DestinationOutputSchema.parse(created.body);
    expect(JSON.stringify(created.body)).not.toContain('whsec_');
    const { secret } = await ok(env.server, 'destinations.secret', { id: data.id }, { query: true });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const rotated = await ok(env.server, 'destinations.rotateSecret', { id: data.id });
    expect(rotated.secret).not.toBe(secret);
    expect((await ok(env.server, 'destinations.secret', { id: data.id }, { query: true })).secret).toBe(rotated.secret);
    // Only webhook destinations have one (400); other callers are refused.
    const s3 = DestinationOutputSchema.parse((await createIn(await freshWorkspace(), 's3')).body).data;
    expect((await trpc(env.server, 'destinations.secret', { id: s3.id }, { query: true })).status).toBe(400);
    const regular = await createRegularKey(env.server);
    expect((await trpc(env.server, 'destinations.secret', { id: data.id }, { key: regular.key, query: true })).status).toBe(403);
    expect((await trpc(env.server, 'destinations.secret', { id: data.id }, { key: env.other.managementKey, query: true })).status).toBe(404);
    expect((await trpc(env.server, 'destinations.rotateSecret', { id: data.id }, { key: env.server.platformKey })).status).toBe(403);
  });
});

describe('who may call D17-D21', () => {
  it('401 without a key; 403 for a regular key and a platform key; management keys of the organization only', async () => {
    const { id } = DestinationOutputSchema.parse((await createIn(await freshWorkspace())).body).data;
    const regular = await createRegularKey(env.server);
    const calls: [string, RequestInit & { json?: unknown }][] = [
      [PATH, {}],
      [PATH, { method: 'POST', json: { type: 'webhook', name: 'x', config: { url: 'https://x.example.com/' } } }],
      [`${PATH}/${id}`, {}],
      [`${PATH}/${id}`, { method: 'PATCH', json: { name: 'x' } }],
      [`${PATH}/${id}`, { method: 'DELETE' }],
    ];
    for (const [p, init] of calls) {
      expectEnvelope(await rest(env.server, p, { ...init, key: null }), 401);
      expectEnvelope(await rest(env.server, p, { ...init, key: regular.key }), 403);
      expectEnvelope(await rest(env.server, p, { ...init, key: env.server.platformKey }), 403);
    }
    expect((await rest(env.server, `${PATH}/${id}`)).status).toBe(200);
  });

  it("another organization cannot see, change or delete a destination (404), nor create in or list the organization's workspace (403)", async () => {
    const workspace = await freshWorkspace();
    const { id } = DestinationOutputSchema.parse((await createIn(workspace)).body).data;
    const key = env.other.managementKey;
    expectEnvelope(await rest(env.server, `${PATH}/${id}`, { key }), 404);
    expectEnvelope(await rest(env.server, `${PATH}/${id}`, { key, method: 'PATCH', json: { name: 'stolen' } }), 404);
    expectEnvelope(await rest(env.server, `${PATH}/${id}`, { key, method: 'DELETE' }), 404);
    expectEnvelope(await createIn(workspace, 'webhook', {}, key), 403);
    expectEnvelope(await rest(env.server, `${PATH}?workspace_id=${workspace}`, { key }), 403);
    // Their own list holds none of ours; ours is unchanged.
    const theirs = ListDestinationsOutputSchema.parse((await rest(env.server, PATH, { key })).body);
    expect(theirs.data.map((d) => d.id)).not.toContain(id);
    expect(DestinationOutputSchema.parse((await rest(env.server, `${PATH}/${id}`)).body).data.name).toBe('webhook dest');
  });
});

describe('secret key rotation', () => {
  it('byok.resealSecrets reseals destination secrets and signing secrets of the organization only', async () => {
    const created = DestinationOutputSchema.parse(
      (await createIn(await freshWorkspace(), 'webhook', { config: { url: 'https://r.example.com/', headers: { Authorization: 'Bearer reseal-me-123' } } }))
        .body,
    ).data;
    const { secret } = await ok(env.server, 'destinations.secret', { id: created.id }, { query: true });
    const third = await createOrganization(env.server.db, 'Third');
    const theirs = DestinationOutputSchema.parse(
      (
        await rest(env.server, PATH, {
          method: 'POST',
          key: third.managementKey,
          json: { type: 'webhook', name: 't', config: { url: 'https://t.example.com/' } },
        })
      ).body,
    ).data;
    const oldKey = parseSecretKey(await fs.readFile(path.join(env.server.dataDir, SECRET_KEY_FILE), 'utf8'));
    const newKey = randomBytes(32);
    const ring = new SecretBox([newKey, oldKey]);
    const actor = await managementActor(env.server);
    const deps = (requestId: string) => ({ db: env.server.db, secrets: ring, requestId: () => requestId, clientAddress: () => null, now: () => new Date() });
    const { resealed } = await resealOrganizationSecrets(deps('reseal-1'), actor);
    expect(resealed).toBeGreaterThanOrEqual(2);
    // Its audit entry (one, in the reseal's transaction): the counts, never a secret or a ciphertext.
    const entries = await env.server.db.auditLog.findMany({ where: { request_id: 'reseal-1' } });
    expect(entries.map((e) => [e.action, e.target_type, e.target_id])).toEqual([['byok.resealSecrets', 'organization', env.server.organizationId]]);
    expect(entries[0]!.changes).toMatchObject({ after: { resealed } });
    expect(JSON.stringify(entries[0]!.changes)).not.toMatch(/v1\.|reseal-me|whsec_/);
    const row = await env.server.db.observabilityDestination.findUniqueOrThrow({ where: { id: created.id } });
    const fresh = new SecretBox([newKey]);
    expect(JSON.parse(fresh.open(row.secrets_ciphertext!, row.id))).toEqual({ headers: { Authorization: 'Bearer reseal-me-123' } });
    expect(fresh.open(row.signing_secret_ciphertext!, `${row.id}:signing`)).toBe(secret);
    const other = await env.server.db.observabilityDestination.findUniqueOrThrow({ where: { id: theirs.id } });
    expect(other.signing_secret_ciphertext).toMatch(new RegExp(`^v1\\.${new SecretBox([oldKey]).currentKeyId}\\.`));
    expect(await resealOrganizationSecrets(deps('reseal-2'), actor)).toEqual({ resealed: 0 });
  });
});
