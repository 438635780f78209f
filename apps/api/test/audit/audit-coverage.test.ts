// One audit entry per change, for every state-changing operation, derived from the router
// (docs/audit.md): every tRPC mutation is audited (a sample here performs it once and finds
// exactly one entry, by the request's X-Request-Id, with its action, actor and target), or excluded
// with its reason (docs/audit.md's exclusions). A new mutation in neither fails the first test.
// The raw writes (express routes that are no procedure: the modules' BYTE_ROUTE_MOUNTS and the SCIM 2.0
// endpoints, every method but GET) are derived from the app's own mounts the same way: each is
// audited (a sample request finds exactly one entry) or excluded with its reason.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCIM_ROUTE_MOUNT } from '../../src/app.js';
import { BYTE_ROUTE_MOUNTS } from '../../src/modules.js';
import { API_PREFIX, INTERNAL_PREFIX, SESSION_PREFIX } from '@switchyard/schema';
import { SCIM_PREFIX } from '../../src/modules/scim/scim-v2.routes.js';
import { hashApiKey } from '../../src/access/key-format.js';
import { createOrganization, routerProcedures, useServer } from '../fixtures.js';
import { demoCatalog, record } from '../fixtures-catalog.js';
import { AUDIENCE, identityProvider, ISSUER } from '../fixtures-identity.js';
import { openContainer, writeFile } from '../fixtures-files.js';
import { createScimGroup, createScimUser, GROUP_SCHEMA, PATCH_SCHEMA, scimToken, USER_SCHEMA } from '../fixtures-scim.js';
import { BOUNDARY, multipart } from '../fixtures-upload.js';
import { ok, type InputOf, type ProcedurePath } from '../fixtures-trpc.js';

/** Mutations that append no entry per call, and why (docs/audit.md lists the same). */
export const EXCLUDED: Record<string, string> = {
  'routing.authorize': 'data plane (a BYOK secret it reveals is audited in a bounded form: byok.reveal)',
  'routing.release': 'data plane',
  'generations.record': 'data plane',
  'generations.recordBatch': 'data plane',
  'analytics.query': 'a read (a POST for its body): changes nothing',
  'files.openContainer': "data plane: the gateway's sandbox for one session",
  'videos.createJob': 'data plane: the gateway records a video generation',
  'sessions.signOut': 'ends the caller’s own session: it takes authority away and hands none out; the sign-in that made it is audited (sessions.signIn)',
  'sessions.signOutEverywhere': 'ends the caller’s person’s own sessions, within its authority: it hands none out; each sign-in is audited (sessions.signIn)',
};

const env = useServer('Audit other');
type Server = typeof env.server;

type Caller = 'management' | 'platform' | 'none';

interface AuditedSample<P extends ProcedurePath> {
  /** Who calls it (default: management). */
  caller?: Caller;
  input: (server: Server) => InputOf<P> | Promise<InputOf<P>>;
  /** The entry's target type, and its id from the input and output. */
  target: { type: string; id: (input: InputOf<P>, output: unknown) => string | null };
  /** The entry's organization (default: the server's). */
  organization?: (server: Server, input: InputOf<P>, output: unknown) => string | null;
  /** The actor kind (default from the caller). */
  actorKind?: string;
}

const unique = () => randomUUID().slice(0, 8);
const newKey = async (server: Server) => (await ok(server, 'keys.create', { name: `k-${unique()}` })).data.hash;

const newWorkspace = async (server: Server) => (await ok(server, 'workspaces.create', { slug: `ws-${unique()}`, name: 'W' })).data.id;
const newMember = async (server: Server) => (await ok(server, 'organization.createMember', { email: `m-${unique()}@example.com` })).id;
const newGuardrail = async (server: Server) => (await ok(server, 'guardrails.create', { name: `g-${unique()}` })).data.id;
const dataId = (_i: unknown, o: unknown) => (o as { data: { id: string } }).data.id;
const inputId = (i: { id: string }) => i.id;

const hex = (n: number) => randomUUID().replace(/-/g, '').repeat(3).slice(0, n);
const newByok = async (server: Server) => (await ok(server, 'byok.create', { provider: 'openai', name: `b-${unique()}`, key: `sk-${hex(32)}` })).data.id;
const policyInput = async (server: Server) => ({
  issuer: ISSUER,
  audience: AUDIENCE,
  subject: `workload-${unique()}`,
  jwks: (await identityProvider()).jwks as { keys: [{ kty: 'EC' }] },
  key_hash: await newKey(server),
});
let generation: string;

const newPreset = async (server: Server) => {
  const slug = `p-${unique()}`;
  await ok(server, 'presets.create', { slug, name: 'P', config: { model: 'openai/gpt-4o' } });
  return slug;
};
const anyId = () => expect.any(String) as unknown as string;

const newMapping = async (server: Server) =>
  (await ok(server, 'scim.createGroupMapping', { workspace_id: server.workspaceId, scim_group_id: randomUUID(), role: 'member' })).data.id;
const newDestination = async (server: Server) =>
  (await ok(server, 'destinations.create', { type: 'webhook', name: `d-${unique()}`, config: { url: 'https://audit.example.com/hook' } })).data.id;
/** A container file of the server's organization, written as the platform (the sandbox runner). */
const newContainerFile = async (server: Server) => {
  const container_id = await openContainer(server, `audit-${unique()}`);
  const { file_id } = await writeFile(server, container_id, `notes/${unique()}.md`, Buffer.from(`# ${unique()}\n`));
  return { container_id, file_id };
};
const newDocument = async (server: Server) => (await ok(server, 'files.promote', await newContainerFile(server))) as unknown as { id: string };

const AUDITED: { [P in ProcedurePath]?: AuditedSample<P> } = {
  'presets.create': { input: () => ({ slug: `p-${unique()}`, name: 'P', config: { model: 'openai/gpt-4o' } }), target: { type: 'preset', id: anyId } },
  'presets.createVersion': {
    input: async (s) => ({ slug: await newPreset(s), config: { model: 'openai/gpt-4o-mini' } }),
    target: { type: 'preset', id: anyId },
  },
  'presets.deleteVersion': { input: async (s) => ({ slug: await newPreset(s), version: 1 }), target: { type: 'preset', id: anyId } },
  'presets.fromChat': { input: () => ({ slug: `p-${unique()}`, messages: [], temperature: 0.5 }), target: { type: 'preset', id: anyId } },
  'presets.fromMessages': {
    input: () => ({ slug: `p-${unique()}`, model: 'anthropic/claude-sonnet-4', messages: null, system: 'Be brief.' }),
    target: { type: 'preset', id: anyId },
  },
  'presets.fromResponses': { input: async (s) => ({ slug: await newPreset(s), instructions: 'Be brief.' }), target: { type: 'preset', id: anyId } },
  'models.upsert': {
    caller: 'platform',
    input: () => ({ ...demoCatalog.models[0]!, name: 'Renamed by the platform' }),
    target: { type: 'model', id: (i) => i.id },
    organization: () => null,
  },
  'models.upsertAlias': {
    caller: 'platform',
    input: () => ({ alias: `openai/gpt-4o-alias-${unique()}`, model_id: 'openai/gpt-4o' }),
    target: { type: 'model_alias', id: (i) => i.alias },
    organization: () => null,
  },
  'models.upsertVariant': {
    caller: 'platform',
    input: () => ({ model_id: 'openai/gpt-4o', variant: 'nitro' }),
    target: { type: 'model', id: (i) => i.model_id },
    organization: () => null,
  },
  'models.import': {
    caller: 'platform',
    input: () => ({ models: demoCatalog.models.slice(0, 2) }),
    target: { type: 'catalog', id: () => null },
    organization: () => null,
  },
  'byok.create': { input: () => ({ provider: 'openai', name: `b-${unique()}`, key: `sk-${hex(32)}` }), target: { type: 'byok_credential', id: dataId } },
  'byok.update': { input: async (s) => ({ id: await newByok(s), key: `sk-${hex(32)}`, disabled: true }), target: { type: 'byok_credential', id: inputId } },
  'byok.delete': { input: async (s) => ({ id: await newByok(s) }), target: { type: 'byok_credential', id: inputId } },
  'byok.resealSecrets': { input: () => undefined, target: { type: 'organization', id: () => env.server.organizationId } },
  'scim.createGroupMapping': {
    input: (s) => ({ workspace_id: s.workspaceId, scim_group_id: randomUUID(), role: 'member' }),
    target: { type: 'scim_group_mapping', id: dataId },
  },
  'scim.updateGroupMapping': { input: async (s) => ({ id: await newMapping(s), role: 'admin' }), target: { type: 'scim_group_mapping', id: inputId } },
  'scim.deleteGroupMapping': {
    input: async (s) => ({ id: await newMapping(s), keep_members: 'false' }),
    target: { type: 'scim_group_mapping', id: inputId },
  },
  'scim.createSyncJob': {
    input: async (s) => {
      await newMapping(s);
      return undefined;
    },
    target: { type: 'scim_sync_job', id: dataId },
  },
  'scim.createToken': { input: () => undefined, target: { type: 'scim_token', id: dataId } },
  'sessions.setIdentityProvider': {
    input: () => ({ issuer: 'https://idp.example.com', client_id: `c-${unique()}`, client_secret: `cs-${hex(16)}`, allowed_email_domains: ['example.com'] }),
    target: { type: 'identity_provider', id: () => env.server.organizationId },
  },
  'sessions.deleteIdentityProvider': {
    input: async (s) => {
      await ok(s, 'sessions.setIdentityProvider', {
        issuer: 'https://idp.example.com',
        client_id: 'c',
        client_secret: `cs-${hex(16)}`,
        allowed_email_domains: ['example.com'],
      });
      return undefined;
    },
    target: { type: 'identity_provider', id: () => env.server.organizationId },
  },
  'scim.revokeToken': {
    input: async (s) => ({ id: (await ok(s, 'scim.createToken', undefined)).data.id }),
    target: { type: 'scim_token', id: inputId },
  },
  'files.promote': { input: (s) => newContainerFile(s), target: { type: 'document', id: (_i, o) => (o as { id: string }).id } },
  'files.deleteDocument': { input: async (s) => ({ file_id: (await newDocument(s)).id }), target: { type: 'document', id: (i) => i.file_id } },
  'destinations.create': {
    input: () => ({ type: 'webhook', name: `d-${unique()}`, config: { url: 'https://audit.example.com/hook' } }),
    target: { type: 'destination', id: dataId },
  },
  'destinations.update': { input: async (s) => ({ id: await newDestination(s), name: 'renamed' }), target: { type: 'destination', id: inputId } },
  'destinations.delete': { input: async (s) => ({ id: await newDestination(s) }), target: { type: 'destination', id: inputId } },
  'destinations.rotateSecret': { input: async (s) => ({ id: await newDestination(s) }), target: { type: 'destination', id: inputId } },
  'budgets.set': {
    input: async (s) => ({ workspace_ref: await newWorkspace(s), interval: 'monthly', limit_usd: 100 }),
    target: { type: 'workspace', id: (i) => i.workspace_ref },
  },
  'budgets.delete': {
    input: async (s) => ({ workspace_ref: await newWorkspace(s), interval: 'daily' }),
    target: { type: 'workspace', id: (i) => i.workspace_ref },
  },
  'organization.createMember': { input: () => ({ email: `new-${unique()}@example.com` }), target: { type: 'member', id: (_i, o) => (o as { id: string }).id } },
  'organization.updateMember': { input: async (s) => ({ user_id: await newMember(s), role: 'org:admin' }), target: { type: 'member', id: (i) => i.user_id } },
  'organization.removeMember': { input: async (s) => ({ user_id: await newMember(s) }), target: { type: 'member', id: (i) => i.user_id } },
  'organizations.create': {
    caller: 'platform',
    input: () => ({ name: `Org ${unique()}` }),
    target: { type: 'organization', id: (_i, o) => (o as { organization_id: string }).organization_id },
    organization: (_s, _i, o) => (o as { organization_id: string }).organization_id,
  },
  'organizations.disable': {
    caller: 'platform',
    input: async (s) => ({ organization_id: (await createOrganization(s.db, 'Doomed')).organizationId }),
    target: { type: 'organization', id: (i) => i.organization_id },
    organization: (_s, i) => (i as { organization_id: string }).organization_id,
  },
  'organizations.delete': {
    caller: 'platform',
    input: async (s) => {
      const { organizationId } = await createOrganization(s.db, 'Offboarded');
      return { organization_id: organizationId, confirm: organizationId };
    },
    target: { type: 'organization', id: (i) => i.organization_id },
    // The platform's entry of a deletion names no organization: it outlives the organization's own entries.
    organization: () => null,
  },
  'settings.updateAlerts': {
    caller: 'management',
    input: () => ({ alert_thresholds: [25, 75], credits_low_usd: 3 }),
    target: { type: 'organization', id: () => env.server.organizationId },
    organization: (s) => s.organizationId,
  },
  'settings.updateRetention': {
    caller: 'management',
    input: () => ({ content_retention_days: 90 }),
    target: { type: 'organization', id: () => env.server.organizationId },
    organization: (s) => s.organizationId,
  },
  'settings.updatePkce': {
    caller: 'management',
    input: () => ({ pkce_require_s256: false }),
    target: { type: 'organization', id: () => env.server.organizationId },
    organization: (s) => s.organizationId,
  },
  'organizations.updateSettings': {
    caller: 'platform',
    input: (s) => ({ organization_id: s.organizationId, free_model_requests_per_minute: 33 }),
    target: { type: 'organization', id: (i) => i.organization_id },
  },
  'generations.addCredits': {
    caller: 'platform',
    input: (s) => ({ organization_id: s.organizationId, amount: 1 }),
    target: { type: 'organization', id: (i) => i.organization_id },
  },
  'generations.feedback': { input: () => ({ generation_id: generation, category: 'other' }), target: { type: 'generation', id: (i) => i.generation_id } },
  'auth.createCode': {
    input: () => ({ callback_url: `https://app-${unique()}.example/callback` }),
    target: { type: 'oauth_app', id: () => expect.any(String) as unknown as string },
  },
  'federationPolicies.create': { input: (s) => policyInput(s), target: { type: 'federation_policy', id: (_i, o) => (o as { id: string }).id } },
  'federationPolicies.delete': {
    input: async (s) => ({ id: (await ok(s, 'federationPolicies.create', await policyInput(s))).id }),
    target: { type: 'federation_policy', id: inputId },
  },
  'workspaces.create': { input: () => ({ slug: `ws-${unique()}`, name: 'W' }), target: { type: 'workspace', id: dataId } },
  'workspaces.update': { input: async (s) => ({ id: await newWorkspace(s), name: 'Renamed' }), target: { type: 'workspace', id: inputId } },
  'workspaces.delete': { input: async (s) => ({ id: await newWorkspace(s) }), target: { type: 'workspace', id: inputId } },
  'workspaces.addMembers': { input: async (s) => ({ id: await newWorkspace(s), user_ids: [await newMember(s)] }), target: { type: 'workspace', id: inputId } },
  'workspaces.removeMembers': { input: async (s) => ({ id: await newWorkspace(s), user_ids: ['not-a-member'] }), target: { type: 'workspace', id: inputId } },
  'guardrails.create': { input: () => ({ name: `g-${unique()}` }), target: { type: 'guardrail', id: dataId } },
  'guardrails.update': { input: async (s) => ({ id: await newGuardrail(s), name: 'renamed' }), target: { type: 'guardrail', id: inputId } },
  'guardrails.delete': { input: async (s) => ({ id: await newGuardrail(s) }), target: { type: 'guardrail', id: inputId } },
  'guardrails.assignKeys': { input: async (s) => ({ id: await newGuardrail(s), key_hashes: [await newKey(s)] }), target: { type: 'guardrail', id: inputId } },
  'guardrails.unassignKeys': { input: async (s) => ({ id: await newGuardrail(s), key_hashes: [await newKey(s)] }), target: { type: 'guardrail', id: inputId } },
  'guardrails.assignMembers': {
    input: async (s) => ({ id: await newGuardrail(s), member_user_ids: [await newMember(s)] }),
    target: { type: 'guardrail', id: inputId },
  },
  'guardrails.unassignMembers': {
    input: async (s) => ({ id: await newGuardrail(s), member_user_ids: [await newMember(s)] }),
    target: { type: 'guardrail', id: inputId },
  },
  'keys.create': { input: () => ({ name: `k-${unique()}`, limit: 5 }), target: { type: 'key', id: (_i, o) => (o as { data: { hash: string } }).data.hash } },
  'keys.update': { input: async (s) => ({ hash: await newKey(s), name: 'renamed', limit: 7 }), target: { type: 'key', id: (i) => i.hash } },
  'keys.delete': { input: async (s) => ({ hash: await newKey(s) }), target: { type: 'key', id: (i) => i.hash } },
  'keys.rotate': { input: async (s) => ({ hash: await newKey(s), grace_period_seconds: 60 }), target: { type: 'key', id: (i) => i.hash } },
  'organizations.issueManagementKey': {
    caller: 'platform',
    input: (s) => ({ organization_id: s.organizationId }),
    target: { type: 'key', id: (_i, o) => (o as { data: { hash: string } }).data.hash },
  },
  'auth.exchangeCode': {
    caller: 'none',
    actorKind: 'pkce',
    input: async (s) => ({ code: (await ok(s, 'auth.createCode', { callback_url: `https://app-${unique()}.example/callback` })).data.id }),
    target: { type: 'key', id: (_i, o) => hashApiKey((o as { key: string }).key) },
  },
};
const auditedOf: Record<string, AuditedSample<ProcedurePath> | undefined> = AUDITED as never;

const mutations = routerProcedures()
  .filter((p) => p.type === 'mutation')
  .map((p) => p.path);

/** Calls a procedure over tRPC with a request id of our own; answers its status and output. */
async function call(server: Server, path: string, input: unknown, key: string | null, requestId: string) {
  const res = await server.request(`/trpc/${path}`, {
    key,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as { result?: { data: unknown }; error?: unknown };
  return { status: res.status, data: body.result?.data, error: body.error };
}

const entriesOf = (server: Server, requestId: string) => server.db.auditLog.findMany({ where: { request_id: requestId } });

let platformKeyId: string;
beforeAll(async () => {
  const { server } = env;
  await ok(server, 'models.import', demoCatalog);
  await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 100 });
  generation = await record(server, { api_key_hash: hashApiKey(server.managementKey), usage: 0.01 });
  platformKeyId = (await env.server.db.platformKey.findFirstOrThrow({ where: { hash: hashApiKey(env.server.platformKey) } })).id;
});

describe('audit coverage', () => {
  it('every mutation is audited or excluded with a reason: none is forgotten', () => {
    const audited = Object.keys(AUDITED);
    const classified = [...audited, ...Object.keys(EXCLUDED)];
    expect(
      mutations.filter((m) => !classified.includes(m)),
      'mutations neither audited nor excluded (audit-coverage.test.ts)',
    ).toEqual([]);
    expect(
      classified.filter((m) => !mutations.includes(m)),
      'names that are no mutation',
    ).toEqual([]);
    expect(new Set(classified).size, 'a mutation in two lists').toBe(classified.length);
  });

  for (const path of mutations.filter((m) => auditedOf[m])) {
    it(`${path}: one successful call appends exactly one entry`, async () => {
      const { server } = env;
      const sample = auditedOf[path]!;
      const caller = sample.caller ?? 'management';
      const key = caller === 'management' ? server.managementKey : caller === 'platform' ? server.platformKey : null;
      const input = await sample.input(server);
      const requestId = `audit-${randomUUID()}`;
      const result = await call(server, path, input, key, requestId);
      expect(result.error, JSON.stringify(result.error)).toBeUndefined();
      const entries = await entriesOf(server, requestId);
      expect(entries).toHaveLength(1);
      const [entry] = entries;
      const actor =
        caller === 'management'
          ? { kind: 'management_key', key: hashApiKey(server.managementKey) }
          : caller === 'platform'
            ? { kind: 'platform_key', key: platformKeyId }
            : { kind: sample.actorKind, key: null };
      expect({
        action: entry!.action,
        kind: entry!.actor_kind,
        key: entry!.actor_key_hash,
        organization: entry!.organization_id,
        target: { type: entry!.target_type, id: entry!.target_id },
      }).toEqual({
        action: path,
        kind: actor.kind,
        key: actor.key,
        organization: sample.organization ? sample.organization(server, input as never, result.data) : server.organizationId,
        target: { type: sample.target.type, id: sample.target.id(input as never, result.data) },
      });
      expect(entry!.client_address).toMatch(/127\.0\.0\.1|::1/);
    });
  }
});

// ---- Raw writes: the express routes that are no procedure (BYTE_ROUTE_MOUNTS, SCIM 2.0) ---------

/** "<METHOD> <full express path>" of every raw route that writes (any method but GET), from the app's own mounts. */
const rawWrites = [
  ...BYTE_ROUTE_MOUNTS.flatMap(({ prefix, routes }) => routes.map((r) => ({ method: r.method, path: `${prefix}${r.path}` }))),
  ...SCIM_ROUTE_MOUNT.routes.map((r) => ({ method: r.method, path: `${SCIM_ROUTE_MOUNT.prefix}${r.path}` })),
]
  .filter((r) => r.method !== 'get')
  .map((r) => `${r.method.toUpperCase()} ${r.path}`);

/** Raw writes that append no entry per call, and why (docs/audit.md lists the same). */
export const RAW_EXCLUDED: Record<string, string> = {
  [`POST ${API_PREFIX}/oauth/token`]:
    'mints a short-lived access token from a federation policy (whose creation and deletion are audited); what the token then does is audited as actor access_token',
  [`PUT ${INTERNAL_PREFIX}/containers/:container_id/files/:file_id`]: "data plane: the sandbox runner writes a file of one session's container",
};

interface RawRequest {
  path: string;
  body?: Buffer | string;
  contentType?: string;
}

interface RawAuditedSample {
  /** The request (a SCIM token is made for the SCIM endpoints: `token`). */
  request: (server: Server, token: string) => Promise<RawRequest> | RawRequest;
  action: string;
  /** The entry's target type, and its id from the answer's body. */
  target: { type: string; id: (request: RawRequest, body: unknown) => string };
  /** Who calls it: the management key (default) or a SCIM token of the organization. */
  caller?: 'management' | 'scim';
}

const scimUser = (userName = `u-${unique()}@example.com`) => JSON.stringify({ schemas: [USER_SCHEMA], userName, active: true });
const scimGroup = (displayName = `g-${unique()}`) => JSON.stringify({ schemas: [GROUP_SCHEMA], displayName, members: [] });
const scimPatch = (path: string, value: unknown) => JSON.stringify({ schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path, value }] });
const SCIM_JSON = 'application/scim+json';
const newScimUser = async (s: Server, token: string) => (await createScimUser(s, token, `u-${unique()}@example.com`)).id;
const newScimGroup = async (s: Server, token: string) => (await createScimGroup(s, token, `g-${unique()}`)).id;
const idInPath = (request: RawRequest) => request.path.split('/').at(-1)!;
const idInBody = (_r: RawRequest, body: unknown) => (body as { id: string }).id;

const RAW_AUDITED: Record<string, RawAuditedSample> = {
  [`POST ${SESSION_PREFIX}/sign-in`]: {
    request: () => ({ path: `${SESSION_PREFIX}/sign-in` }),
    action: 'sessions.signIn',
    target: { type: 'session', id: (_r, body) => (body as { data: { id: string } }).data.id },
  },
  [`POST ${API_PREFIX}/files`]: {
    request: () => ({
      path: `${API_PREFIX}/files`,
      body: multipart([{ name: 'file', filename: 'note.md', bytes: Buffer.from(`# A note ${unique()}\n`) }]),
      contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    }),
    action: 'files.upload',
    target: { type: 'document', id: idInBody },
  },
  [`POST ${SCIM_PREFIX}/Users`]: {
    caller: 'scim',
    request: () => ({ path: `${SCIM_PREFIX}/Users`, body: scimUser(), contentType: SCIM_JSON }),
    action: 'scimUsers.create',
    target: { type: 'scim_user', id: idInBody },
  },
  [`PUT ${SCIM_PREFIX}/Users/:id`]: {
    caller: 'scim',
    request: async (s, token) => ({ path: `${SCIM_PREFIX}/Users/${await newScimUser(s, token)}`, body: scimUser(), contentType: SCIM_JSON }),
    action: 'scimUsers.replace',
    target: { type: 'scim_user', id: idInPath },
  },
  [`PATCH ${SCIM_PREFIX}/Users/:id`]: {
    caller: 'scim',
    request: async (s, token) => ({
      path: `${SCIM_PREFIX}/Users/${await newScimUser(s, token)}`,
      body: scimPatch('displayName', 'Renamed'),
      contentType: SCIM_JSON,
    }),
    action: 'scimUsers.update',
    target: { type: 'scim_user', id: idInPath },
  },
  [`DELETE ${SCIM_PREFIX}/Users/:id`]: {
    caller: 'scim',
    request: async (s, token) => ({ path: `${SCIM_PREFIX}/Users/${await newScimUser(s, token)}` }),
    action: 'scimUsers.delete',
    target: { type: 'scim_user', id: idInPath },
  },
  [`POST ${SCIM_PREFIX}/Groups`]: {
    caller: 'scim',
    request: () => ({ path: `${SCIM_PREFIX}/Groups`, body: scimGroup(), contentType: SCIM_JSON }),
    action: 'scimGroups.create',
    target: { type: 'scim_group', id: idInBody },
  },
  [`PUT ${SCIM_PREFIX}/Groups/:id`]: {
    caller: 'scim',
    request: async (s, token) => ({ path: `${SCIM_PREFIX}/Groups/${await newScimGroup(s, token)}`, body: scimGroup(), contentType: SCIM_JSON }),
    action: 'scimGroups.replace',
    target: { type: 'scim_group', id: idInPath },
  },
  [`PATCH ${SCIM_PREFIX}/Groups/:id`]: {
    caller: 'scim',
    request: async (s, token) => ({
      path: `${SCIM_PREFIX}/Groups/${await newScimGroup(s, token)}`,
      body: scimPatch('displayName', 'Renamed'),
      contentType: SCIM_JSON,
    }),
    action: 'scimGroups.update',
    target: { type: 'scim_group', id: idInPath },
  },
  [`DELETE ${SCIM_PREFIX}/Groups/:id`]: {
    caller: 'scim',
    request: async (s, token) => ({ path: `${SCIM_PREFIX}/Groups/${await newScimGroup(s, token)}` }),
    action: 'scimGroups.delete',
    target: { type: 'scim_group', id: idInPath },
  },
};

describe('audit coverage of the raw writes', () => {
  it('every raw write (from the app’s mounts) is audited or excluded with a reason: none is forgotten', () => {
    const classified = [...Object.keys(RAW_AUDITED), ...Object.keys(RAW_EXCLUDED)];
    expect(
      rawWrites.filter((w) => !classified.includes(w)),
      'raw writes neither audited nor excluded (audit-coverage.test.ts)',
    ).toEqual([]);
    expect(
      classified.filter((w) => !rawWrites.includes(w)),
      'names that are no raw write',
    ).toEqual([]);
    expect(new Set(classified).size, 'a raw write in two lists').toBe(classified.length);
  });

  for (const name of rawWrites.filter((w) => RAW_AUDITED[w])) {
    it(`${name}: one successful request appends exactly one entry`, async () => {
      const { server } = env;
      const sample = RAW_AUDITED[name]!;
      const scimCaller = sample.caller === 'scim';
      const token = await scimTokenOf(server);
      const request = await sample.request(server, token);
      const requestId = `audit-raw-${randomUUID()}`;
      const headers: Record<string, string> = { 'x-request-id': requestId };
      if (request.contentType) headers['content-type'] = request.contentType;
      const res = await server.request(request.path, {
        key: scimCaller ? token : server.managementKey,
        method: name.split(' ')[0],
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
      });
      const text = await res.text();
      expect(res.status, text).toBeLessThan(300);
      const body: unknown = text ? JSON.parse(text) : undefined;
      const entries = await entriesOf(server, requestId);
      expect(entries).toHaveLength(1);
      const [entry] = entries;
      const tokenRow = scimCaller ? await server.db.scimToken.findUniqueOrThrow({ where: { hash: hashApiKey(token) } }) : null;
      expect({
        action: entry!.action,
        kind: entry!.actor_kind,
        key: entry!.actor_key_hash,
        label: entry!.actor_label,
        organization: entry!.organization_id,
        target: { type: entry!.target_type, id: entry!.target_id },
      }).toEqual({
        action: sample.action,
        kind: scimCaller ? 'scim_token' : 'management_key',
        key: tokenRow ? tokenRow.id : hashApiKey(server.managementKey),
        label: tokenRow ? tokenRow.label : expect.any(String),
        organization: server.organizationId,
        target: { type: sample.target.type, id: sample.target.id(request, body) },
      });
      expect(entry!.client_address).toMatch(/127\.0\.0\.1|::1/);
      // A SCIM token is named by its id and masked label, never by the token or its hash.
      expect(JSON.stringify(entry)).not.toContain(token);
      expect(JSON.stringify(entry)).not.toContain(hashApiKey(token));
    });
  }
});

let scimTokenMade: Promise<string> | undefined;
/** One SCIM token of the server's organization for the raw samples. */
function scimTokenOf(server: Server): Promise<string> {
  scimTokenMade ??= scimToken(server);
  return scimTokenMade;
}
