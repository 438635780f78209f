// The access matrix, derived from the router itself: every procedure (over tRPC, and over REST when
// it has a route) and every raw express route is called by every kind of caller, and the answer must
// be the one its declared rule (access/rules.ts) gives:
//
//   caller                                   public  tenant     management   platform
//   no key                                   2xx     401        401          401
//   regular key of the owning organization   2xx     2xx        403          403
//   management key of the owning org.        2xx     2xx        2xx          403
//   management key of another organization   2xx     404 / 2xx  404 / 2xx    403
//   platform key                             2xx     403        403          2xx
//   scoped management key lacking the scope  2xx     403 / 2xx  403 / 2xx    403
//   scoped management key holding the scope  2xx     2xx        2xx          403
//   access token of an unscoped mgmt. key    2xx     2xx        403          403
//   access token of a scoped key             2xx     2xx / 403  403          403
//   access token of a regular key            2xx     2xx        403          403
//
// (404 when the sample names a resource of the owning organization, "scoped"; else the other
// organization acts on its own data, 2xx.) A procedure or route without a rule, or without a sample
// here, fails the test: whoever adds one says who may call it. So does a management operation
// without a permission scope (docs/scopes.md), and so does a tenant operation without one (or
// EVERY_KEY, open to every key: 2xx for "lacking"): the key "lacking" holds only audit:read (or
// destinations:read for an audit operation), and its 403 names the scope the operation needs; the
// key "holding" it has exactly that scope, and what the operation hands out (CEILING_EXTRA: the
// ceiling of docs/scopes.md). Samples that make or act on keys name keys within keys:write's ceiling.
// An access token (the token exchange's) has the rights of its scope claim, `inference`, and of its
// key, whichever is less (rules.ts): no management operation and no authorization code (keys:write,
// which hands out authority), and of the tenant operations those its key's scopes grant (TOKEN_KEYS:
// the scoped key's token gets 403 naming the scope it lacks where they do not).
import { randomUUID } from 'node:crypto';
import { declaredStatus, ERROR_MESSAGES, SAMPLE_VIDEO_URL, type Scope } from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { REGULAR_KEY_SCOPES } from '../../src/access/ceiling.js';
import { AUTHORITY_SCOPES, EVERY_KEY, grants, type AccessRule, type OperationScope, type PermissionScope } from '../../src/access/rules.js';
import { BYTE_ROUTE_MOUNTS } from '../../src/modules.js';
import { API_PREFIX, INTERNAL_PREFIX, SESSION_PREFIX } from '@switchyard/schema';
import type { ProcedureMeta } from '../../src/trpc/init.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { demoCatalog, generationId, record } from '../fixtures-catalog.js';
import { createOrganization, routerProcedures, useServer, type OrgFixture } from '../fixtures.js';
import { fileIdOf, openContainer, putFile } from '../fixtures-files.js';
import { BOUNDARY, multipart } from '../fixtures-upload.js';
import { ok, trpcRaw, trpcSubscriptionRaw, type InputOf, type ProcedurePath } from '../fixtures-trpc.js';
import { restRequest } from '../fixtures-admin.js';
import { accessToken, AUDIENCE, exchangeForm, identityProvider, ISSUER, type IdentityProvider } from '../fixtures-identity.js';

/** The access tokens that are callers, by the key each acts as. */
type TokenCaller = 'token of management' | 'token of scoped' | 'token of regular';
type Caller = 'none' | 'regular' | 'management' | 'other' | 'platform' | 'lacking' | 'holding' | TokenCaller;
/**
 * What the key of each access-token caller holds (null: not narrowed by scopes, an unscoped
 * management key or a regular key). The scoped key's scopes grant some tenant operations and not
 * others (files, and generation content, but not a generation's record, presets, guardrails or members).
 */
const TOKEN_KEYS: Record<TokenCaller, readonly Scope[] | null> = {
  'token of management': null,
  'token of scoped': ['files:write', 'generations:read'],
  'token of regular': null,
};
const isToken = (caller: Caller): caller is TokenCaller => caller in TOKEN_KEYS;
const CALLERS: Caller[] = ['none', 'regular', 'management', 'other', 'platform', 'lacking', 'holding', ...(Object.keys(TOKEN_KEYS) as TokenCaller[])];

interface Fixture {
  server: TestServer;
  other: OrgFixture;
  regular: { key: string; hash: string };
  /** Resources of the owning organization (the server's), in its default workspace. */
  guardrailId: string;
  byokId: string;
  presetSlug: string;
  scimMappingId: string;
  generationId: string;
  containerId: string;
  fileId: string;
  videoJobId: string;
  documentId: string;
  idp: IdentityProvider;
  destinationId: string;
  /** A key within keys:write's ceiling, which federation policies name. */
  policyKeyHash: string;
}

interface Sample<P extends ProcedurePath> {
  /** The input, made afresh for each call (so that a create or delete can run once per caller). */
  input: (fx: Fixture) => InputOf<P> | Promise<InputOf<P>>;
  /** The input names a resource of the owning organization: another organization gets 404. */
  scoped?: boolean;
}

const unique = () => randomUUID().slice(0, 8);
const hex = (n: number) => randomUUID().replace(/-/g, '').repeat(3).slice(0, n);

async function member(fx: Fixture): Promise<string> {
  return (await ok(fx.server, 'organization.createMember', { email: `m-${unique()}@example.com` })).id;
}
/** A key within keys:write's ceiling (a management key scoped keys:read), so that the key holding keys:write may act on it. */
async function key(fx: Fixture): Promise<string> {
  return (await ok(fx.server, 'keys.create', { name: `k-${unique()}`, is_management_key: true, scopes: ['keys:read'] })).data.hash;
}
async function workspace(fx: Fixture): Promise<string> {
  return (await ok(fx.server, 'workspaces.create', { slug: `ws-${unique()}`, name: 'W' })).data.id;
}
async function guardrail(fx: Fixture): Promise<string> {
  return (await ok(fx.server, 'guardrails.create', { name: `g-${unique()}` })).data.id;
}
async function byok(fx: Fixture): Promise<string> {
  return (await ok(fx.server, 'byok.create', { provider: 'openai', name: `b-${unique()}`, key: `sk-${hex(32)}` })).data.id;
}
async function scimMapping(fx: Fixture): Promise<string> {
  return (await ok(fx.server, 'scim.createGroupMapping', { workspace_id: fx.server.workspaceId, scim_group_id: randomUUID(), role: 'member' })).data.id;
}
/** A new workspace document: a fresh container file, promoted. */
async function document(fx: Fixture): Promise<string> {
  const fileId = fileIdOf(`doc-${unique()}.txt`);
  expect((await putFile(fx.server, fx.containerId, fileId, Buffer.from('a document'))).status).toBe(201);
  return (await ok(fx.server, 'files.promote', { container_id: fx.containerId, file_id: fileId })).id;
}
/** A webhook destination in a new workspace (so that samples never reach the 5-per-type limit). */
async function destination(fx: Fixture): Promise<string> {
  const workspace_id = await workspace(fx);
  return (await ok(fx.server, 'destinations.create', { type: 'webhook', name: 'D', workspace_id, config: { url: 'https://hooks.example.com/x' } })).data.id;
}
async function preset(fx: Fixture): Promise<string> {
  const slug = `p-${unique()}`;
  await ok(fx.server, 'presets.create', { slug, name: 'P', config: { model: 'openai/gpt-4o' } });
  return slug;
}

/** A federation policy of the owning organization, for its regular key, trusting the local identity provider. */
function policyInput(fx: Fixture) {
  return { issuer: ISSUER, audience: AUDIENCE, subject: `workload-${unique()}`, jwks: fx.idp.jwks as { keys: [{ kty: 'EC' }] }, key_hash: fx.policyKeyHash };
}

/** One sample input per procedure, naming the owning organization's resources where it takes any. */
const SAMPLES: { [P in ProcedurePath]: Sample<P> } = {
  'keys.current': { input: () => undefined },
  'keys.create': { input: () => ({ name: `k-${unique()}`, is_management_key: true, scopes: ['keys:read'] }) },
  'keys.list': { input: () => ({}) },
  'keys.get': { input: (fx) => ({ hash: fx.regular.hash }), scoped: true },
  'keys.update': { input: async (fx) => ({ hash: await key(fx), name: 'renamed' }), scoped: true },
  'keys.delete': { input: async (fx) => ({ hash: await key(fx) }), scoped: true },
  'keys.rotate': { input: async (fx) => ({ hash: await key(fx), grace_period_seconds: 60 }), scoped: true },
  'keys.secrets': { input: (fx) => ({ hash: fx.regular.hash }), scoped: true },
  'models.get': { input: () => ({ author: 'openai', slug: 'gpt-4o' }) },
  'models.list': { input: () => ({ offset: 0, limit: 5 }) },
  'models.count': { input: () => ({}) },
  'models.endpoints': { input: () => ({ author: 'openai', slug: 'gpt-4o' }) },
  'models.providers': { input: () => undefined },
  'models.embeddings': { input: () => ({}) },
  'auth.createCode': { input: () => ({ callback_url: `https://app-${unique()}.example/callback` }) },
  'auth.exchangeCode': {
    input: async (fx) => ({ code: (await ok(fx.server, 'auth.createCode', { callback_url: `https://app-${unique()}.example/callback` })).data.id }),
  },
  // The owning organization has a SCIM directory (a group mapping); the other has none: 404.
  'scim.createSyncJob': { input: () => undefined, scoped: true },
  'scim.getSyncJob': { input: async (fx) => ({ id: (await ok(fx.server, 'scim.createSyncJob', undefined)).data.id }), scoped: true },
  'auth.jwks': { input: () => undefined },
  'settings.alerts': { input: () => undefined },
  'settings.updateAlerts': { input: () => ({ alert_thresholds: [50, 80, 100] }) },
  'settings.retention': { input: () => undefined },
  'settings.updateRetention': { input: () => ({ content_retention_days: null }) },
  'settings.pkce': { input: () => undefined },
  'settings.updatePkce': { input: () => ({ pkce_require_s256: false }) },
  'federationPolicies.list': { input: () => ({}) },
  'federationPolicies.create': { input: (fx) => policyInput(fx), scoped: true },
  'federationPolicies.delete': { input: async (fx) => ({ id: (await ok(fx.server, 'federationPolicies.create', policyInput(fx))).id }), scoped: true },
  'models.userModels': { input: () => ({ offset: 0, limit: 5 }) },
  'models.images': { input: () => undefined },
  'models.imageEndpoints': { input: () => ({ author: 'openai', slug: 'gpt-image-1' }) },
  'models.videos': { input: () => undefined },
  'models.zdrEndpoints': { input: () => undefined },
  'models.upsert': { input: () => ({ ...demoCatalog.models[0]!, name: 'Renamed by the platform' }) },
  'models.upsertAlias': { input: () => ({ alias: 'openai/gpt-4o-alias', model_id: 'openai/gpt-4o' }) },
  'models.upsertVariant': { input: () => ({ model_id: 'openai/gpt-4o', variant: 'nitro' }) },
  'models.import': { input: () => ({ models: demoCatalog.models.slice(0, 2) }) },
  'generations.get': { input: (fx) => ({ id: fx.generationId }), scoped: true },
  'generations.content': { input: (fx) => ({ id: fx.generationId }), scoped: true },
  'generations.feedback': { input: (fx) => ({ generation_id: fx.generationId, category: 'other' }), scoped: true },
  'generations.record': { input: (fx) => ({ id: generationId(), api_key_hash: fx.regular.hash, model: 'openai/gpt-4o', usage: 0.01 }) },
  'generations.recordBatch': {
    input: (fx) => ({ generations: [{ id: generationId(), api_key_hash: fx.regular.hash, model: 'openai/gpt-4o', usage: 0.01 }] }),
  },
  'generations.addCredits': { input: (fx) => ({ organization_id: fx.server.organizationId, amount: 1 }) },
  'routing.authorize': { input: (fx) => ({ api_key_hash: fx.regular.hash, model: 'openai/gpt-4o' }) },
  'routing.release': { input: () => ({ reservation_id: randomUUID() }) },
  'decider.snapshot': { input: () => ({ part: 'keys', version: 1, limit: 1 }) },
  'decider.spend': { input: (fx) => ({ version: 1, organization_id: fx.server.organizationId, checks: [] }) },
  'decider.changes': { input: () => ({ version: 1 }) },
  'organization.members': { input: () => ({}) },
  'organization.createMember': { input: () => ({ email: `new-${unique()}@example.com` }) },
  'organization.updateMember': { input: async (fx) => ({ user_id: await member(fx), role: 'org:member', first_name: 'M' }), scoped: true },
  'organization.removeMember': { input: async (fx) => ({ user_id: await member(fx) }), scoped: true },
  'organizations.create': { input: () => ({ name: `Org ${unique()}` }) },
  'organizations.list': { input: () => ({}) },
  'organizations.settings': { input: (fx) => ({ organization_id: fx.server.organizationId }) },
  'organizations.updateSettings': { input: (fx) => ({ organization_id: fx.server.organizationId }) },
  'organizations.issueManagementKey': { input: async (fx) => ({ organization_id: (await createOrganization(fx.server.db, 'Issued')).organizationId }) },
  'organizations.disable': { input: async (fx) => ({ organization_id: (await createOrganization(fx.server.db, 'Doomed')).organizationId }) },
  'organizations.delete': {
    input: async (fx) => {
      const { organizationId } = await createOrganization(fx.server.db, 'Offboarded');
      return { organization_id: organizationId, confirm: organizationId };
    },
  },
  'organizations.deletion': {
    input: async (fx) => {
      const { organizationId } = await createOrganization(fx.server.db, 'Offboarded');
      return { id: (await ok(fx.server, 'organizations.delete', { organization_id: organizationId, confirm: organizationId })).data.id };
    },
  },
  'workspaces.addMembers': { input: async (fx) => ({ id: fx.server.workspaceId, user_ids: [await member(fx)] }), scoped: true },
  'workspaces.members': { input: (fx) => ({ id: fx.server.workspaceId }), scoped: true },
  'workspaces.list': { input: () => ({}) },
  'workspaces.create': { input: () => ({ slug: `ws-${unique()}`, name: 'W' }) },
  'workspaces.update': { input: (fx) => ({ id: fx.server.workspaceId, name: 'Default' }), scoped: true },
  'workspaces.get': { input: (fx) => ({ id: fx.server.workspaceId }), scoped: true },
  'workspaces.delete': { input: async (fx) => ({ id: await workspace(fx) }), scoped: true },
  'workspaces.removeMembers': { input: async (fx) => ({ id: await workspace(fx), user_ids: ['not-a-member'] }), scoped: true },
  'budgets.get': { input: (fx) => ({ id: fx.server.workspaceId, interval: 'monthly' }), scoped: true },
  'budgets.list': { input: (fx) => ({ id: fx.server.workspaceId }), scoped: true },
  'budgets.set': { input: (fx) => ({ workspace_ref: fx.server.workspaceId, interval: 'monthly', limit_usd: 100 }), scoped: true },
  'budgets.delete': { input: (fx) => ({ workspace_ref: fx.server.workspaceId, interval: 'daily' }), scoped: true },
  'byok.get': { input: (fx) => ({ id: fx.byokId }), scoped: true },
  'byok.list': { input: () => ({}) },
  'byok.create': { input: () => ({ provider: 'openai', name: `b-${unique()}`, key: `sk-${hex(32)}` }) },
  'byok.update': { input: async (fx) => ({ id: await byok(fx), key: `sk-${hex(32)}`, disabled: true }), scoped: true },
  'byok.delete': { input: async (fx) => ({ id: await byok(fx) }), scoped: true },
  'byok.resealSecrets': { input: () => undefined },
  'guardrails.keyAssignments': { input: (fx) => ({ id: fx.guardrailId }), scoped: true },
  'guardrails.memberAssignments': { input: (fx) => ({ id: fx.guardrailId }), scoped: true },
  'guardrails.list': { input: () => ({}) },
  'guardrails.allKeyAssignments': { input: () => ({}) },
  'guardrails.allMemberAssignments': { input: () => ({}) },
  'guardrails.create': { input: () => ({ name: `g-${unique()}` }) },
  'guardrails.get': { input: (fx) => ({ id: fx.guardrailId }), scoped: true },
  'guardrails.update': { input: async (fx) => ({ id: await guardrail(fx), name: 'renamed' }), scoped: true },
  'guardrails.delete': { input: async (fx) => ({ id: await guardrail(fx) }), scoped: true },
  'guardrails.assignKeys': { input: async (fx) => ({ id: await guardrail(fx), key_hashes: [fx.regular.hash] }), scoped: true },
  'guardrails.unassignKeys': { input: async (fx) => ({ id: fx.guardrailId, key_hashes: [fx.regular.hash] }), scoped: true },
  'guardrails.assignMembers': { input: async (fx) => ({ id: await guardrail(fx), member_user_ids: [await member(fx)] }), scoped: true },
  'guardrails.unassignMembers': { input: async (fx) => ({ id: fx.guardrailId, member_user_ids: [await member(fx)] }), scoped: true },
  'presets.list': { input: () => ({}) },
  'presets.get': { input: (fx) => ({ slug: fx.presetSlug }), scoped: true },
  'presets.versions': { input: (fx) => ({ slug: fx.presetSlug }), scoped: true },
  'presets.version': { input: (fx) => ({ slug: fx.presetSlug, version: '1' }), scoped: true },
  'presets.create': { input: () => ({ slug: `p-${unique()}`, name: 'P', config: { model: 'openai/gpt-4o' } }) },
  'presets.createVersion': { input: async (fx) => ({ slug: await preset(fx), config: { model: 'openai/gpt-4o-mini' } }), scoped: true },
  'presets.fromChat': { input: () => ({ slug: `p-${unique()}`, messages: [], temperature: 0.5 }) },
  'presets.fromMessages': { input: () => ({ slug: `p-${unique()}`, model: 'anthropic/claude-sonnet-4', messages: null, system: 'Be brief.' }) },
  'presets.fromResponses': { input: (fx) => ({ slug: fx.presetSlug, instructions: 'Be brief.' }) },
  'presets.deleteVersion': { input: async (fx) => ({ slug: await preset(fx), version: 1 }), scoped: true },
  'scim.updateGroupMapping': { input: (fx) => ({ id: fx.scimMappingId, role: 'member' }), scoped: true },
  'scim.listGroupMappings': { input: () => ({}) },
  'scim.createGroupMapping': { input: (fx) => ({ workspace_id: fx.server.workspaceId, scim_group_id: randomUUID(), role: 'member' }), scoped: true },
  'scim.getGroupMapping': { input: (fx) => ({ id: fx.scimMappingId }), scoped: true },
  'scim.deleteGroupMapping': { input: async (fx) => ({ id: await scimMapping(fx), keep_members: 'false' }), scoped: true },
  // The owning organization has a SCIM directory (its group mapping); the other has none: 404.
  'scim.listGroups': { input: () => ({}), scoped: true },
  'scim.createToken': { input: () => undefined },
  'scim.listTokens': { input: () => undefined },
  'scim.revokeToken': { input: async (fx) => ({ id: (await ok(fx.server, 'scim.createToken', undefined)).data.id }), scoped: true },
  'analytics.meta': { input: () => undefined },
  'analytics.query': { input: () => ({ metrics: ['request_count', 'p99_latency'], dimensions: ['model'], granularity: 'day' }) },
  'files.promote': { input: (fx) => ({ container_id: fx.containerId, file_id: fx.fileId }), scoped: true },
  'files.openContainer': { input: (fx) => ({ session_key: `s-${unique()}`, workspace_id: fx.server.workspaceId }) },
  'videos.createJob': {
    input: (fx) => ({
      workspace_id: fx.server.workspaceId,
      provider: 'p',
      model: 'p/v',
      upstream_job_id: `u-${unique()}`,
      outputs: [{ upstream_url: SAMPLE_VIDEO_URL }],
    }),
  },
  'videos.listJobs': { input: () => ({}) },
  'videos.get': { input: (fx) => ({ jobId: fx.videoJobId }), scoped: true },
  'files.containerFiles': { input: (fx) => ({ container_id: fx.containerId }), scoped: true },
  'files.containerFile': { input: (fx) => ({ container_id: fx.containerId, file_id: fx.fileId }), scoped: true },
  'account.credits': { input: () => undefined },
  'account.activity': { input: () => ({}) },
  'files.documents': { input: () => ({}) },
  'files.document': { input: (fx) => ({ file_id: fx.documentId }), scoped: true },
  'files.deleteDocument': { input: async (fx) => ({ file_id: await document(fx) }), scoped: true },
  'destinations.list': { input: () => ({}) },
  'destinations.create': { input: () => ({ type: 'posthog', name: `d-${unique()}`, config: { apiKey: `phc_${hex(20)}` } }) },
  'destinations.get': { input: (fx) => ({ id: fx.destinationId }), scoped: true },
  'destinations.update': { input: (fx) => ({ id: fx.destinationId, name: `renamed-${unique()}` }), scoped: true },
  'destinations.delete': { input: async (fx) => ({ id: await destination(fx) }), scoped: true },
  'destinations.status': { input: (fx) => ({ id: fx.destinationId }), scoped: true },
  'destinations.secret': { input: (fx) => ({ id: fx.destinationId }), scoped: true },
  'destinations.rotateSecret': { input: (fx) => ({ id: fx.destinationId }), scoped: true },
  'audit.list': { input: () => ({ action: 'keys.create' }) },
  'audit.platformList': { input: (fx) => ({ organization_id: fx.server.organizationId, limit: 5 }) },
  // A call made with a key: who it is (no session), and sign-outs that end the sessions its authority covers.
  'sessions.current': { input: () => undefined },
  'sessions.signOut': { input: () => undefined },
  'sessions.signOutEverywhere': { input: () => undefined },
  'sessions.identityProvider': { input: () => undefined },
  'sessions.setIdentityProvider': {
    input: () => ({ issuer: 'https://idp.example.com', client_id: 'switchyard', client_secret: `cs-${hex(16)}`, allowed_email_domains: ['example.com'] }),
  },
  'sessions.deleteIdentityProvider': { input: () => undefined },
};
/** The samples by a path read from the router at run time (a procedure without one has none). */
const sampleOf: Record<string, { input: (fx: Fixture) => unknown; scoped?: boolean } | undefined> = SAMPLES;

interface RawSample {
  url: (fx: Fixture) => string;
  body?: string | ((fx: Fixture) => { body: Buffer | string; contentType: string } | Promise<{ body: Buffer | string; contentType: string }>);
  scoped?: boolean;
  /** A public route's answer to every caller when it is no 2xx (no key is read: the same for all). */
  status?: number;
}

/** One sample request per raw express route, keyed "<METHOD> <full express path>". */
const RAW_SAMPLES: Record<string, RawSample> = {
  [`GET ${API_PREFIX}/containers/:container_id/files/:file_id/content`]: {
    url: (fx) => `${API_PREFIX}/containers/${fx.containerId}/files/${fx.fileId}/content`,
    scoped: true,
  },
  [`GET ${API_PREFIX}/files/:file_id/content`]: { url: (fx) => `${API_PREFIX}/files/${fx.documentId}/content`, scoped: true },
  [`GET ${API_PREFIX}/videos/:jobId/content`]: { url: (fx) => `${API_PREFIX}/videos/${fx.videoJobId}/content`, scoped: true },
  [`POST ${API_PREFIX}/files`]: {
    url: () => `${API_PREFIX}/files`,
    body: () => ({
      body: multipart([{ name: 'file', filename: 'note.md', bytes: Buffer.from('# A note\n') }]),
      contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    }),
  },
  [`POST ${API_PREFIX}/oauth/token`]: {
    url: () => `${API_PREFIX}/oauth/token`,
    body: async (fx) => {
      const policy = await ok(fx.server, 'federationPolicies.create', policyInput(fx));
      return { body: exchangeForm(policy.id, await fx.idp.sign(policy.subject, { aud: AUDIENCE })), contentType: 'application/x-www-form-urlencoded' };
    },
  },
  // Every management key signs in, scoped or not (its session holds its scopes); an access token does not.
  [`POST ${SESSION_PREFIX}/sign-in`]: { url: () => `${SESSION_PREFIX}/sign-in` },
  // The identity provider's sign-in reads no key: an organization that does not exist is 404 to
  // every caller, a callback without its login cookie 400 (test/sessions/oidc.test.ts signs in).
  [`GET ${SESSION_PREFIX}/oidc/start`]: { url: () => `${SESSION_PREFIX}/oidc/start?organization=org_${unique()}`, status: 404 },
  [`GET ${SESSION_PREFIX}/oidc/callback`]: { url: () => `${SESSION_PREFIX}/oidc/callback?code=c&state=s`, status: 400 },
  // Another organization's management key exports its own organization.
  [`GET ${API_PREFIX}/export`]: { url: () => `${API_PREFIX}/export` },
  [`PUT ${INTERNAL_PREFIX}/containers/:container_id/files/:file_id`]: {
    url: (fx) => `${INTERNAL_PREFIX}/containers/${fx.containerId}/files/${fileIdOf(`w-${unique()}.txt`)}?organization_id=${fx.server.organizationId}`,
    body: 'written by the platform',
  },
};

const RAW_ROUTES = BYTE_ROUTE_MOUNTS.flatMap(({ prefix, routes }) => routes.map((r) => ({ ...r, prefix })));

type Outcome = 'ok' | 401 | 403 | 404;

function expected(rule: AccessRule, caller: Caller, scoped: boolean, scope: string | undefined): Outcome {
  if (rule === 'public') return 'ok';
  if (caller === 'none') return 401;
  if (rule === 'platform') return caller === 'platform' ? 'ok' : 403;
  if (caller === 'platform') return 403;
  if (caller === 'regular') return rule === 'tenant' ? 'ok' : 403;
  if (isToken(caller)) {
    // Its scope's rights and its key's, whichever is less.
    if (rule !== 'tenant' || (scope !== undefined && AUTHORITY_SCOPES.includes(scope as OperationScope))) return 403;
    const held = TOKEN_KEYS[caller];
    return held === null || scope === EVERY_KEY || grants(held, scope as PermissionScope) ? 'ok' : 403;
  }
  if (caller === 'other') return scoped ? 404 : 'ok';
  // EVERY_KEY: open to any scoped key (a management one: the sign-in, whose session holds its key's scopes).
  if (caller === 'lacking') return (rule === 'management' || rule === 'tenant') && scope !== EVERY_KEY ? 403 : 'ok';
  return 'ok';
}

/** Operations that hand out what no scoped key holds: the holding key is an unscoped one (docs/scopes.md, the ceiling). */
const UNSCOPED_ONLY = new Set(['scim.createToken', 'sessions.setIdentityProvider', 'sessions.deleteIdentityProvider']);

/** What an operation hands out beyond its own scope: the holding key holds it too (docs/scopes.md, the ceiling). */
const CEILING_EXTRA: Record<string, string[]> = {
  'scim.revokeToken': ['members:write'],
  // A code hands out a regular key, which holds what every regular key holds.
  'auth.createCode': [...REGULAR_KEY_SCOPES],
};

/** A scope that grants nothing of an operation needing `scope`. */
const unrelatedTo = (scope: string | undefined) => (scope?.startsWith('audit:') ? 'destinations:read' : 'audit:read');
/** Management keys of the owning organization holding exactly these scopes, made once each. */
const scopedKeys = new Map<string, Promise<string>>();
function scopedKey(...scopes: string[]): Promise<string> {
  const name = scopes.join(' ');
  let key = scopedKeys.get(name);
  if (!key) {
    key = ok(fx.server, 'keys.create', { name: `scoped ${name}`, is_management_key: true, scopes: scopes as 'audit:read'[] }).then((c) => c.key);
    scopedKeys.set(name, key);
  }
  return key;
}
/** The key a caller sends to an operation needing `scope`. */
async function keyOf(caller: Caller, rule: AccessRule, scope: string | undefined, path = ''): Promise<string | null> {
  if (caller === 'lacking') return scopedKey(unrelatedTo(scope));
  // Scopes narrow management and tenant operations: the others are called with any scoped key.
  if (caller === 'holding') {
    if (UNSCOPED_ONLY.has(path)) return keys.management;
    const narrowed = (rule === 'management' || rule === 'tenant') && scope && scope !== EVERY_KEY;
    return narrowed ? scopedKey(...new Set([scope, ...(CEILING_EXTRA[path] ?? [])])) : scopedKey('audit:read');
  }
  return keys[caller as keyof typeof keys];
}

/**
 * A sample's input with a NUL in its first text field (a path parameter, a query parameter or a
 * body field alike), or in a field of its own where it has none; undefined for an operation without input.
 */
function taintedInput(input: unknown): Record<string, unknown> | undefined {
  if (input === undefined || input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const fields = { ...(input as Record<string, unknown>) };
  const text = Object.keys(fields).find((name) => typeof fields[name] === 'string');
  if (text) fields[text] = `${fields[text] as string}\u0000`;
  else fields.tainted = 'a\u0000b';
  return fields;
}

/** The outcome on either face: an error status the operation does not declare becomes its declared substitute. */
function declaredOutcome(meta: ProcedureMeta, outcome: Outcome): Outcome {
  if (outcome === 'ok' || !meta.statuses) return outcome;
  return declaredStatus(meta.statuses, outcome) as Outcome;
}

const outcomeOf = (status: number): Outcome | number =>
  status >= 200 && status < 300 ? 'ok' : status === 401 || status === 403 || status === 404 ? status : status;

const procedures = routerProcedures().map((p) => ({ path: p.path, def: p }));

const env = useServer('Other');
let fx: Fixture;
let keys: Record<Exclude<Caller, 'lacking' | 'holding'>, string | null>;

beforeAll(async () => {
  const { server, other } = env;
  await ok(server, 'models.import', demoCatalog);
  await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 100 });
  const created = await ok(server, 'keys.create', { name: 'regular' });
  const regular = { key: created.key, hash: created.data.hash };
  const managementHash = (await server.db.apiKey.findFirstOrThrow({ where: { organization_id: server.organizationId, is_management_key: true } })).hash;
  const partial = { server, other, regular, idp: await identityProvider() } as Fixture;
  await ok(server, 'budgets.set', { workspace_ref: server.workspaceId, interval: 'monthly', limit_usd: 100 });
  const containerId = await openContainer(server, 'matrix');
  const written = await putFile(server, containerId, fileIdOf('out/result.txt'), Buffer.from('result'));
  expect(written.status).toBe(201);
  const job = await ok(server, 'videos.createJob', {
    workspace_id: server.workspaceId,
    provider: 'p',
    model: 'p/v',
    upstream_job_id: 'matrix',
    outputs: [{ upstream_url: SAMPLE_VIDEO_URL }],
  });
  fx = {
    ...partial,
    guardrailId: await guardrail(partial),
    byokId: await byok(partial),
    presetSlug: await preset(partial),
    scimMappingId: await scimMapping(partial),
    // A generation of the management key's user (feedback is on one's own generations).
    generationId: await record(server, {
      api_key_hash: managementHash,
      usage: 0.01,
      content: { input: { messages: [{ role: 'user', content: 'hi' }] }, output: { completion: 'hello' } },
    }),
    containerId,
    fileId: fileIdOf('out/result.txt'),
    videoJobId: job.data.id,
    documentId: '',
    destinationId: '',
    policyKeyHash: (await ok(server, 'keys.create', { name: 'policy key', is_management_key: true, scopes: ['keys:read'] })).data.hash,
  };
  fx.destinationId = await destination(fx);
  fx.documentId = await document(fx);
  // Tokens acting as the server's own management key, a scoped key, and the regular key: all of
  // the default workspace, where the samples' resources are.
  const scoped = await ok(server, 'keys.create', { name: 'token scoped', is_management_key: true, scopes: [...TOKEN_KEYS['token of scoped']!] });
  const tokenOf = (hash: string) => accessToken(server, fx.idp, hash);
  keys = {
    none: null,
    regular: regular.key,
    management: server.managementKey,
    other: other.managementKey,
    platform: server.platformKey,
    'token of management': await tokenOf(managementHash),
    'token of scoped': await tokenOf(scoped.data.hash),
    'token of regular': await tokenOf(regular.hash),
  };
});

describe('the access matrix', () => {
  it('every procedure declares an access rule and has a sample here', () => {
    const undeclared = procedures.filter((p) => !p.def.meta?.access).map((p) => p.path);
    expect(undeclared, 'procedures without an access rule (build them on authedProcedure, managementProcedure or platformProcedure)').toEqual([]);
    const unscoped = procedures.filter((p) => (p.def.meta?.access === 'management' || p.def.meta?.access === 'tenant') && !p.def.meta.scope).map((p) => p.path);
    expect(unscoped, "management and tenant procedures without a permission scope (meta.scope, e.g. 'keys:write', or EVERY_KEY; docs/scopes.md)").toEqual([]);
    const unsampled = procedures.filter((p) => !sampleOf[p.path]).map((p) => p.path);
    expect(unsampled, 'procedures without a sample in access-matrix.test.ts').toEqual([]);
    expect(Object.keys(SAMPLES).filter((path) => !procedures.some((p) => p.path === path))).toEqual([]);
  });

  it('every raw route declares an access rule and has a sample here', () => {
    const names = RAW_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.prefix}${r.path}`);
    expect(names.filter((name) => !RAW_SAMPLES[name])).toEqual([]);
    expect(Object.keys(RAW_SAMPLES).filter((name) => !names.includes(name))).toEqual([]);
    for (const route of RAW_ROUTES) expect(['public', 'tenant', 'management', 'platform']).toContain(route.access);
    const unscoped = RAW_ROUTES.filter((r) => (r.access === 'management' || r.access === 'tenant') && !('scope' in r && r.scope)).map(
      (r) => `${r.method} ${r.path}`,
    );
    expect(unscoped, 'management and tenant routes without a permission scope (docs/scopes.md)').toEqual([]);
  });

  for (const { path, def } of procedures) {
    it(`${path} (${def.meta?.access}) over tRPC${def.meta?.openapi ? ' and REST' : ''}`, async () => {
      const rule = def.meta!.access!;
      const sample = sampleOf[path]!;
      const seen: Record<string, Outcome | number> = {};
      const want: Record<string, Outcome> = {};
      for (const caller of CALLERS) {
        want[`trpc ${caller}`] = declaredOutcome(def.meta as ProcedureMeta, expected(rule, caller, sample.scoped ?? false, def.meta?.scope));
        const input = await sample.input(fx);
        const key = await keyOf(caller, rule, def.meta?.scope, path);
        const called =
          def.type === 'subscription'
            ? await trpcSubscriptionRaw(fx.server, path, input, key)
            : await trpcRaw(fx.server, path, input, { key, query: def.type === 'query' });
        seen[`trpc ${caller}`] = outcomeOf(called.status);
        // The refusal of a scoped key keeps the contract's message and names the scope it lacks in its reason.
        if (caller === 'lacking' && rule !== 'platform' && want[`trpc ${caller}`] === 403) {
          expect(called.error?.message).toBe(ERROR_MESSAGES[403]);
          expect(called.error?.data.metadata?.reason).toContain(def.meta!.scope!);
        }
        // A management key's access token is refused for its scope's sake, or for the scope its key
        // lacks, and says which (a regular key's token is refused management operations as its key is).
        if (isToken(caller) && caller !== 'token of regular' && rule !== 'platform' && want[`trpc ${caller}`] === 403) {
          expect(`${called.error?.message} ${called.error?.data.metadata?.reason}`).toMatch(new RegExp(`an access token|${def.meta!.scope!}`));
        }
        if (def.meta?.openapi) {
          // Over REST, the operation answers as over tRPC: each face the declared status that stands for the natural one.
          want[`rest ${caller}`] = want[`trpc ${caller}`]!;
          const { url, init } = restRequest(def.meta.openapi, await sample.input(fx));
          const res = await fx.server.request(url, { ...init, key });
          const text = await res.text();
          seen[`rest ${caller}`] = outcomeOf(res.status);
          if (caller === 'lacking' && res.status === 403) expect(text).toContain(def.meta!.scope!);
        }
      }
      expect(seen).toEqual(want);

      // One error, one status on both faces: input the operation cannot take (a NUL where text is
      // read), from a caller it admits, is answered with the same declared status over tRPC and REST.
      const statuses = (def.meta as ProcedureMeta).statuses;
      const bad = taintedInput(await sample.input(fx));
      if (!def.meta?.openapi || !statuses || bad === undefined) return;
      const admitted: Caller = rule === 'platform' ? 'platform' : rule === 'public' ? 'none' : 'holding';
      const key = await keyOf(admitted, rule, def.meta.scope, path);
      const viaTrpc = (await trpcRaw(fx.server, path, bad, { key, query: def.type === 'query' })).status;
      const { url, init } = restRequest(def.meta.openapi, bad);
      const viaRest = (await fx.server.request(url, { ...init, key })).status;
      expect({ trpc: viaTrpc, rest: viaRest }, JSON.stringify(bad)).toEqual({ trpc: viaRest, rest: viaRest });
      // The server refuses it before the schema wherever a key is read (trpc/init.ts); a catalog read
      // skips what it does not read (a field of its own) and may answer it.
      if (rule !== 'public') expect(viaRest).toBe(declaredStatus(statuses, 400));
      else if (viaRest >= 300) expect(Object.keys(statuses)).toContain(String(viaRest));
    });
  }

  for (const route of RAW_ROUTES) {
    const name = `${route.method.toUpperCase()} ${route.prefix}${route.path}`;
    it(`${name} (${route.access})`, async () => {
      const sample = RAW_SAMPLES[name]!;
      const seen: Record<string, Outcome | number> = {};
      const want: Record<string, Outcome | number> = {};
      for (const caller of CALLERS) {
        const routeScope = 'scope' in route ? (route.scope as string | undefined) : undefined;
        want[caller] = sample.status ?? expected(route.access, caller, sample.scoped ?? false, routeScope);
        const body =
          typeof sample.body === 'function' ? await sample.body(fx) : sample.body === undefined ? undefined : { body: sample.body, contentType: 'text/plain' };
        const res = await fx.server.request(sample.url(fx), {
          method: route.method.toUpperCase(),
          key: await keyOf(caller, route.access, routeScope),
          ...(body === undefined ? {} : { body: body.body, headers: { 'content-type': body.contentType } }),
        });
        await res.arrayBuffer();
        seen[caller] = outcomeOf(res.status);
      }
      expect(seen).toEqual(want);
    });
  }
});
