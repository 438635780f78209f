// The ceiling (access/ceiling.ts, docs/scopes.md): a key never makes, changes or hands out more than
// it holds. Each path by which a keys:write key took over its organization, each read of content by
// a key whose scopes do not name it, the signing secret answered to a read scope, role grants above
// the granter's (and taking one away, as a SCIM mapping's deletion does), and keys disabled by a
// mapping's deletion beyond the caller's, on the real server; an unscoped management key keeps every
// power it had.
import { randomUUID } from 'node:crypto';
import { SCOPES, type Scope } from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertRoleWithin, REGULAR_KEY_SCOPES } from '../../src/access/ceiling.js';
import { record } from '../fixtures-catalog.js';
import { useServer } from '../fixtures.js';
import { createWorkspace, errorOf, rest } from '../fixtures-admin.js';
import { createScimGroup, createScimUser, email, keyOfPerson, scimToken } from '../fixtures-scim.js';
import { AUDIENCE, exchange, exchangeForm, identityProvider, ISSUER, type IdentityProvider } from '../fixtures-identity.js';
import { ok, trpc, trpcRaw } from '../fixtures-trpc.js';

const env = useServer('Ceiling other');
let idp: IdentityProvider;
let owner: { key: string; hash: string };

async function scoped(scopes: Scope[]): Promise<{ key: string; hash: string }> {
  const made = await ok(env.server, 'keys.create', { name: `scoped ${scopes.join(' ')}`, is_management_key: true, scopes });
  return { key: made.key, hash: made.data.hash };
}
const policyFor = (keyHash: string, subject = `w-${randomUUID().slice(0, 8)}`) => ({
  issuer: ISSUER,
  audience: AUDIENCE,
  subject,
  jwks: idp.jwks as { keys: [{ kty: 'EC' }] },
  key_hash: keyHash,
});
/** 403 with the contract's text, and why in metadata.reason. */
function expectCeiling(answer: { status: number; body: unknown }, reason: RegExp) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(403);
  const error = errorOf(answer) as { message: string; metadata?: { reason?: string } };
  expect(error.message).toBe('Only management keys can perform this operation');
  expect(error.metadata?.reason).toMatch(reason);
}

/** A person of the SCIM directory, granted `role` in a new workspace by a group mapping, with a key of theirs there (an unscoped management key, or a regular key). */
async function mappedPerson(role: 'admin' | 'member', management = false) {
  const token = await scimToken(env.server);
  const ws = (await createWorkspace(env.server, `mapped-${randomUUID().slice(0, 8)}`)).id;
  const user = await createScimUser(env.server, token, email('mapped'));
  const person = (await env.server.db.user.findUniqueOrThrow({ where: { email: user.userName.toLowerCase() } })).id;
  const group = await createScimGroup(env.server, token, `mapped ${role}`, [user.id]);
  const mapping = (await ok(env.server, 'scim.createGroupMapping', { scim_group_id: group.id, workspace_id: ws, role })).data.id;
  const key = await keyOfPerson(env.server, env.server.organizationId, ws, person, management);
  return { ws, person, key, mapping };
}
const membership = (userId: string, workspaceId: string) =>
  env.server.db.workspaceMember.findFirst({ where: { user_id: userId, workspace_id: workspaceId }, select: { role: true, scim_granted: true } });

beforeAll(async () => {
  idp = await identityProvider();
  const row = await env.server.db.apiKey.findFirstOrThrow({ where: { organization_id: env.server.organizationId, is_management_key: true } });
  owner = { key: env.server.managementKey, hash: row.hash };
});

describe('a keys:write key cannot take over its organization', () => {
  it('cannot create an unscoped management key (403), nor one with scopes it lacks', async () => {
    const attacker = await scoped(['keys:write']);
    const post = (json: unknown) => rest(env.server, '/keys', { method: 'POST', json, key: attacker.key });
    expectCeiling(await post({ name: 'unscoped', is_management_key: true }), /unscoped management key/);
    expectCeiling(await post({ name: 'lacking', is_management_key: true, scopes: ['audit:read', 'export:read'] }), /audit:read, export:read/);
    // Within its scopes it still works.
    expect((await post({ name: 'within', is_management_key: true, scopes: ['keys:read'] })).status).toBe(201);
    const count = await env.server.db.apiKey.count({ where: { organization_id: env.server.organizationId, name: { in: ['unscoped', 'lacking'] } } });
    expect(count).toBe(0);
  });

  it('cannot clear or change its own scopes with PATCH, so the audit log stays closed to it', async () => {
    const attacker = await scoped(['keys:write']);
    for (const scopes of [null, [], ['keys:write', 'audit:read'], ['keys:read']]) {
      expectCeiling(await rest(env.server, `/keys/${attacker.hash}`, { method: 'PATCH', json: { scopes }, key: attacker.key }), /own scopes/);
    }
    expect((await rest(env.server, '/audit-logs', { key: attacker.key })).status).toBe(403);
    expect((await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: attacker.hash } })).scopes).toEqual(['keys:write']);
    // Its name it may change.
    expect((await rest(env.server, `/keys/${attacker.hash}`, { method: 'PATCH', json: { name: 'renamed' }, key: attacker.key })).status).toBe(200);
  });

  it('cannot widen another scoped key to unscoped or to scopes it lacks; it may change one within its own', async () => {
    const attacker = await scoped(['keys:write']);
    const other = await scoped(['keys:read']);
    const patch = (json: unknown) => rest(env.server, `/keys/${other.hash}`, { method: 'PATCH', json, key: attacker.key });
    expectCeiling(await patch({ scopes: null }), /unscoped management key/);
    expectCeiling(await patch({ scopes: ['keys:read', 'audit:read'] }), /audit:read/);
    expect((await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: other.hash } })).scopes).toEqual(['keys:read']);
    expect((await patch({ scopes: ['keys:write'] })).status).toBe(200);
    // A key holding a scope it lacks, it cannot change at all.
    const auditor = await scoped(['audit:read']);
    expectCeiling(await rest(env.server, `/keys/${auditor.hash}`, { method: 'PATCH', json: { name: 'x' }, key: attacker.key }), /audit:read/);
    expectCeiling(await rest(env.server, `/keys/${auditor.hash}`, { method: 'PATCH', json: { disabled: true }, key: attacker.key }), /audit:read/);
    expectCeiling(await rest(env.server, `/keys/${auditor.hash}`, { method: 'DELETE', key: attacker.key }), /audit:read/);
  });

  it("cannot rotate the owner's unscoped key: the owner's secret keeps working", async () => {
    const attacker = await scoped(['keys:write']);
    const rotated = await rest(env.server, `/keys/${owner.hash}/rotate`, { method: 'POST', json: { grace_period_seconds: 0 }, key: attacker.key });
    expectCeiling(rotated, /unscoped management key/);
    expect((await rest(env.server, '/keys', { key: owner.key })).status).toBe(200);
    expect(await env.server.db.apiKeySecret.count({ where: { api_key: { hash: owner.hash } } })).toBe(1);
    // Nor disable or delete it (a second unscoped key exists, so the last-key rule is not what refuses).
    await ok(env.server, 'keys.create', { name: 'second unscoped', is_management_key: true });
    expectCeiling(await rest(env.server, `/keys/${owner.hash}`, { method: 'PATCH', json: { disabled: true }, key: attacker.key }), /unscoped/);
    expectCeiling(await rest(env.server, `/keys/${owner.hash}`, { method: 'DELETE', key: attacker.key }), /unscoped/);
    // A key within its scopes it may rotate, and itself.
    const within = await scoped(['keys:read']);
    expect((await rest(env.server, `/keys/${within.hash}/rotate`, { method: 'POST', json: {}, key: attacker.key })).status).toBe(200);
    expect((await rest(env.server, `/keys/${attacker.hash}/rotate`, { method: 'POST', json: { grace_period_seconds: 60 }, key: attacker.key })).status).toBe(
      200,
    );
  });

  it("cannot name the owner's key in a federation policy; a token of any key calls no management operation", async () => {
    const attacker = await scoped(['keys:write']);
    const refused = await trpcRaw(env.server, 'federationPolicies.create', policyFor(owner.hash), { key: attacker.key });
    expect(refused.status).toBe(403);
    expect(refused.error?.data.metadata?.reason).toMatch(/unscoped management key/);
    // The owner names its own key: the token is still `inference`, never a management key's rights.
    const policy = await ok(env.server, 'federationPolicies.create', policyFor(owner.hash, 'owner-workload'));
    const res = await exchange(env.server, exchangeForm(policy.id, await idp.sign('owner-workload', { aud: AUDIENCE })));
    const answer = (await res.json()) as { access_token: string; scope: string };
    expect(answer.scope).toBe('inference');
    const token = answer.access_token;
    const made = await rest(env.server, '/keys', { method: 'POST', json: { name: 'by a token', is_management_key: true }, key: token });
    expect(made.status).toBe(403);
    expect((errorOf(made) as { metadata?: { reason?: string } }).metadata?.reason).toMatch(/access token/);
    expect((await rest(env.server, '/audit-logs', { key: token })).status).toBe(403);
    expect((await rest(env.server, '/keys', { key: token })).status).toBe(403);
    // What every key may call about itself, and the tenant reads of its own workspace.
    expect((await rest(env.server, '/key', { key: token })).status).toBe(200);
    expect((await rest(env.server, '/files', { key: token })).status).toBe(200);
    // No authorization code: it hands out keys.
    const code = await rest(env.server, '/auth/keys/code', { method: 'POST', json: { callback_url: 'https://app.example/cb' }, key: token });
    expect(code.status).toBe(403);
  });

  it("a token reads as a regular key of its key's workspace, not the whole organization", async () => {
    const second = await ok(env.server, 'workspaces.create', { slug: `far-${randomUUID().slice(0, 8)}`, name: 'Far' });
    const far = await ok(env.server, 'keys.create', { name: 'far key', workspace_id: second.data.id });
    const generation = await record(env.server, {
      api_key_hash: far.data.hash,
      usage: 0,
      content: { input: { messages: [{ role: 'user', content: 'far prompt' }] } },
    });
    const policy = await ok(env.server, 'federationPolicies.create', policyFor(owner.hash, 'reader-workload'));
    const res = await exchange(env.server, exchangeForm(policy.id, await idp.sign('reader-workload', { aud: AUDIENCE })));
    const token = ((await res.json()) as { access_token: string }).access_token;
    expect((await rest(env.server, `/generation/content?id=${generation}`, { key: owner.key })).status).toBe(200);
    expect((await rest(env.server, `/generation/content?id=${generation}`, { key: token })).status).toBe(404);
  });

  it('an unscoped management key keeps every power: unscoped keys, any scopes, any key', async () => {
    expect((await rest(env.server, '/keys', { method: 'POST', json: { name: 'u', is_management_key: true } })).status).toBe(201);
    const other = await scoped(['keys:read']);
    expect((await rest(env.server, `/keys/${other.hash}`, { method: 'PATCH', json: { scopes: null } })).status).toBe(200);
    expect((await trpcRaw(env.server, 'federationPolicies.create', policyFor(other.hash))).status).toBe(200);
  });
});

describe('content needs a scope that names it', () => {
  it('an audit:read key reads the audit log and what every key may, and no content', async () => {
    const auditor = await scoped(['audit:read']);
    const generation = await record(env.server, {
      api_key_hash: owner.hash,
      usage: 0,
      content: { input: { messages: [{ role: 'user', content: 'secret prompt' }] } },
    });
    expect((await rest(env.server, '/audit-logs', { key: auditor.key })).status).toBe(200);
    expect((await rest(env.server, '/key', { key: auditor.key })).status).toBe(200);
    expect((await rest(env.server, '/models', { key: auditor.key })).status).toBe(200);
    for (const path of [`/generation/content?id=${generation}`, `/generation?id=${generation}`, '/files', '/presets', '/guardrails']) {
      const refused = await rest(env.server, path, { key: auditor.key });
      expect([403, 404], path).toContain(refused.status);
      expect(JSON.stringify(refused.body)).not.toContain('secret prompt');
    }
    const code = await rest(env.server, '/auth/keys/code', { method: 'POST', json: { callback_url: 'https://app.example/cb' }, key: auditor.key });
    expect(code.status).toBe(403);
    expect(errorOf(code).metadata?.reason).toContain('keys:write');
    // generations:read names generation content.
    const reader = await scoped(['generations:read']);
    const content = await rest(env.server, `/generation/content?id=${generation}`, { key: reader.key });
    expect(content.status).toBe(200);
    expect(JSON.stringify(content.body)).toContain('secret prompt');
  });
});

describe('secrets are never answered to a read scope', () => {
  it("a destination's signing secret needs destinations:write", async () => {
    const destination = await ok(env.server, 'destinations.create', { type: 'webhook', name: 'alerts', config: { url: 'https://hooks.example.com/x' } });
    const reader = await scoped(['destinations:read']);
    const refused = await trpc(env.server, 'destinations.secret', { id: destination.data.id }, { key: reader.key, query: true });
    expect(refused.status).toBe(403);
    expect(refused.error?.data.metadata?.reason).toContain('destinations:write');
    expect((await trpc(env.server, 'destinations.get', { id: destination.data.id }, { key: reader.key, query: true })).status).toBe(200);
    const writer = await scoped(['destinations:write']);
    const secret = await trpc(env.server, 'destinations.secret', { id: destination.data.id }, { key: writer.key, query: true });
    expect(secret.status).toBe(200);
  });
});

describe('role grants and SCIM tokens are authority too', () => {
  it('a members:write key grants org:member, never org:admin, and cannot change or remove an admin', async () => {
    const hr = await scoped(['members:write']);
    const admin = await trpcRaw(env.server, 'organization.createMember', { email: `a-${randomUUID()}@example.com`, role: 'org:admin' }, { key: hr.key });
    expect(admin.status).toBe(403);
    expect(admin.error?.data.metadata?.reason).toMatch(/org:admin needs an unscoped management key/);
    const member = await ok(env.server, 'organization.createMember', { email: `m-${randomUUID()}@example.com` }, { key: hr.key });
    expect((await trpcRaw(env.server, 'organization.updateMember', { user_id: member.id, role: 'org:admin' }, { key: hr.key })).status).toBe(403);
    expect((await trpcRaw(env.server, 'organization.updateMember', { user_id: member.id, first_name: 'M' }, { key: hr.key })).status).toBe(200);
    const boss = await ok(env.server, 'organization.createMember', { email: `b-${randomUUID()}@example.com`, role: 'org:admin' });
    expect((await trpcRaw(env.server, 'organization.updateMember', { user_id: boss.id, role: 'org:member' }, { key: hr.key })).status).toBe(403);
    expect((await trpcRaw(env.server, 'organization.removeMember', { user_id: boss.id }, { key: hr.key })).status).toBe(403);
    // The unscoped key grants and removes as before.
    expect((await trpcRaw(env.server, 'organization.updateMember', { user_id: member.id, role: 'org:admin' })).status).toBe(200);
  });

  it("a scim:write key maps groups to a workspace's member role, not its admin role", async () => {
    const directory = await scoped(['scim:write']);
    const map = (role: 'admin' | 'member', key?: string) =>
      rest(env.server, '/scim/group-mappings', { method: 'POST', json: { workspace_id: env.server.workspaceId, scim_group_id: randomUUID(), role }, key });
    expectCeiling(await map('admin', directory.key), /workspace:admin/);
    const made = await map('member', directory.key);
    expect(made.status).toBe(201);
    const id = (made.body as { data: { id: string } }).data.id;
    expectCeiling(await rest(env.server, `/scim/group-mappings/${id}`, { method: 'PATCH', json: { role: 'admin' }, key: directory.key }), /workspace:admin/);
    expect((await map('admin')).status).toBe(201);
  });

  it('a scim:write key cannot delete an admin mapping either (nor keep its members): nothing changes', async () => {
    const { ws, person, key, mapping } = await mappedPerson('admin');
    const directory = await scoped(['scim:write']);
    for (const keep of ['false', 'true']) {
      const refused = await rest(env.server, `/scim/group-mappings/${mapping}?keep_members=${keep}`, { method: 'DELETE', key: directory.key });
      expectCeiling(refused, /granting workspace:admin needs an unscoped management key/);
    }
    expect(await env.server.db.scimGroupMapping.count({ where: { id: mapping } })).toBe(1);
    expect(await membership(person, ws)).toEqual({ role: 'admin', scim_granted: true });
    expect((await rest(env.server, '/key', { key })).status).toBe(200);
    // The unscoped key deletes it: the grant goes, and the member's key there with it.
    expect((await rest(env.server, `/scim/group-mappings/${mapping}?keep_members=false`, { method: 'DELETE' })).status).toBe(200);
    expect(await membership(person, ws)).toBeNull();
    expect((await rest(env.server, '/key', { key })).status).toBe(401);
  });

  it("deleting a member mapping disables only keys the caller may disable: an unscoped key's holder stays, whole", async () => {
    const { ws, person, key, mapping } = await mappedPerson('member', true);
    const directory = await scoped(['scim:write']);
    const refused = await rest(env.server, `/scim/group-mappings/${mapping}?keep_members=false`, { method: 'DELETE', key: directory.key });
    expectCeiling(refused, /only an unscoped management key can disable an unscoped management key/);
    expect(await env.server.db.scimGroupMapping.count({ where: { id: mapping } })).toBe(1);
    expect(await membership(person, ws)).toEqual({ role: 'member', scim_granted: true });
    expect((await rest(env.server, '/keys', { key })).status).toBe(200);
    // keep_members=true disables nothing: the scoped key may.
    expect((await rest(env.server, `/scim/group-mappings/${mapping}?keep_members=true`, { method: 'DELETE', key: directory.key })).status).toBe(200);
    expect(await membership(person, ws)).toEqual({ role: 'member', scim_granted: false });
    expect((await rest(env.server, '/keys', { key })).status).toBe(200);
  });

  it("a member mapping whose member holds a regular key: deleted by a key holding a regular key's scopes, not by scim:write alone", async () => {
    const { ws, person, key, mapping } = await mappedPerson('member');
    const directory = await scoped(['scim:write']);
    const refused = await rest(env.server, `/scim/group-mappings/${mapping}?keep_members=false`, { method: 'DELETE', key: directory.key });
    expectCeiling(refused, /the key holds .*analytics:read.*which the calling key lacks: it cannot disable it/);
    expect(await membership(person, ws)).toEqual({ role: 'member', scim_granted: true });
    const holder = await scoped(['scim:write', ...(REGULAR_KEY_SCOPES as Scope[])]);
    expect((await rest(env.server, `/scim/group-mappings/${mapping}?keep_members=false`, { method: 'DELETE', key: holder.key })).status).toBe(200);
    expect(await membership(person, ws)).toBeNull();
    expect((await rest(env.server, '/key', { key })).status).toBe(401);
  });

  it("the console grants by the same rule, with a person's role for the key: up to its own", () => {
    const grants = (granter: Parameters<typeof assertRoleWithin>[0], role: Parameters<typeof assertRoleWithin>[1]) => {
      try {
        assertRoleWithin(granter, role);
        return 'granted';
      } catch (error) {
        return (error as { metadata?: { reason?: string } }).metadata?.reason;
      }
    };
    for (const role of ['org:admin', 'workspace:admin', 'org:member', 'workspace:member'] as const) expect(grants('org:admin', role)).toBe('granted');
    expect(grants('workspace:admin', 'workspace:admin')).toBe('granted');
    expect(grants('workspace:admin', 'org:admin')).toBe('a caller holding workspace:admin cannot grant org:admin');
    expect(grants('org:member', 'workspace:member')).toBe('granted');
    expect(grants('workspace:member', 'workspace:admin')).toBe('a caller holding workspace:member cannot grant workspace:admin');
  });

  it('a SCIM token is made by an unscoped key only (it deactivates admins and grants roles through mappings); revoking one needs scim:write and members:write', async () => {
    const directory = await scoped(['scim:write']);
    const both = await scoped(['scim:write', 'members:write']);
    const before = await env.server.db.scimToken.count({ where: { organization_id: env.server.organizationId } });
    // Even every scope there is is not everything: a scope added later would not be held.
    const every = await ok(env.server, 'keys.create', { name: 'every scope', is_management_key: true, scopes: [...SCOPES] });
    for (const key of [directory.key, both.key, every.key]) {
      const refused = await trpcRaw(env.server, 'scim.createToken', undefined, { key });
      expect(refused.status).toBe(403);
      expect(refused.error?.message).toBe('Only management keys can perform this operation');
      expect(refused.error?.data.metadata?.reason).toMatch(/only an unscoped management key can make a SCIM token/);
    }
    expect(await env.server.db.scimToken.count({ where: { organization_id: env.server.organizationId } })).toBe(before);
    const made = await trpc(env.server, 'scim.createToken', undefined);
    expect(made.status).toBe(200);
    expect((await trpcRaw(env.server, 'scim.revokeToken', { id: made.data.data.id }, { key: directory.key })).status).toBe(403);
    expect((await trpcRaw(env.server, 'scim.revokeToken', { id: made.data.data.id }, { key: both.key })).status).toBe(200);
  });
});
