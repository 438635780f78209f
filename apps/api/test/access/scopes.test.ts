// Scoped management keys (docs/scopes.md): scopes set on POST and PATCH /keys, checked by
// the access module for every management operation, and the invariant that an organization keeps
// one enabled, unscoped management key. The access matrix calls every operation with scoped keys.
import { CreateKeyOutputSchema, ManagedKeySchema, SCOPES } from '@switchyard/schema';
import { describe, expect, it } from 'vitest';
import { grants } from '../../src/access/rules.js';
import { createOrganization, useServer } from '../fixtures.js';
import { errorOf, expectEnvelope, rest } from '../fixtures-admin.js';
import { trpc } from '../fixtures-trpc.js';

const env = useServer();
const Created = CreateKeyOutputSchema.extend({ data: ManagedKeySchema.strict() }).strict();

async function created(json: Record<string, unknown>, key?: string) {
  const res = await rest(env.server, '/keys', { method: 'POST', json: { name: 'scoped', is_management_key: true, ...json }, key });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return Created.parse(res.body);
}
const patch = (hash: string, json: unknown, key?: string) => rest(env.server, `/keys/${hash}`, { method: 'PATCH', json, key });

describe('scopes on management keys', () => {
  it('are set at creation (sorted, each once) and shown on the record; unscoped keys show null', async () => {
    const { data } = await created({ scopes: ['workspaces:read', 'keys:write', 'keys:write'] });
    expect(data.scopes).toEqual(['keys:write', 'workspaces:read']);
    expect((await created({})).data.scopes).toBeNull();
    expect((await created({ scopes: [] })).data.scopes).toBeNull();
    expect((await created({ scopes: null })).data.scopes).toBeNull();
    const regular = await rest(env.server, '/keys', { method: 'POST', json: { name: 'plain' } });
    expect((regular.body as { data: { scopes: unknown } }).data.scopes).toBeNull();
  });

  it('grant their operations (write implies read) and refuse the others with 403 naming the scope', async () => {
    const { key } = await created({ scopes: ['keys:write'] });
    expect((await rest(env.server, '/keys', { key })).status).toBe(200);
    // Within its ceiling (docs/scopes.md): a key of its own scopes, not a regular key (which reads content).
    const made = await rest(env.server, '/keys', { method: 'POST', json: { name: 'by a scoped key', is_management_key: true, scopes: ['keys:read'] }, key });
    expect(made.status).toBe(201);
    expect((await rest(env.server, '/keys', { method: 'POST', json: { name: 'regular' }, key })).status).toBe(403);
    const refused = await rest(env.server, '/workspaces', { key });
    expect(refused.status).toBe(403);
    expect(errorOf(refused)).toMatchObject({
      code: 403,
      message: 'Only management keys can perform this operation',
      metadata: { reason: 'this key lacks the scope workspaces:read, which this operation needs' },
    });
    const overTrpc = await trpc(env.server, 'organization.createMember', { email: 'scoped@example.com' }, { key });
    expect(overTrpc.status).toBe(403);
    expect(overTrpc.error?.message).toBe('Only management keys can perform this operation');
    expect(overTrpc.error?.data.metadata?.reason).toContain('members:write');
    // What every key may do, a scoped key may too.
    expect((await rest(env.server, '/key', { key })).status).toBe(200);

    const reader = await created({ scopes: ['keys:read'] });
    expect((await rest(env.server, '/keys', { key: reader.key })).status).toBe(200);
    const write = await rest(env.server, '/keys', { method: 'POST', json: { name: 'refused' }, key: reader.key });
    expect(write.status).toBe(403);
    expect(errorOf(write).metadata?.reason).toContain('keys:write');
  });

  it('change by PATCH, at once for the next request; null makes the key unscoped again', async () => {
    const { data, key } = await created({ scopes: ['analytics:read'] });
    expect((await rest(env.server, '/keys', { key })).status).toBe(403);
    const scoped = await patch(data.hash, { scopes: ['keys:read'] });
    expect(scoped.status).toBe(200);
    expect((scoped.body as { data: { scopes: string[] } }).data.scopes).toEqual(['keys:read']);
    expect((await rest(env.server, '/keys', { key })).status).toBe(200);
    expect((await rest(env.server, '/analytics/meta', { key })).status).toBe(403);
    const unscoped = await patch(data.hash, { scopes: null });
    expect((unscoped.body as { data: { scopes: unknown } }).data.scopes).toBeNull();
    expect((await rest(env.server, '/workspaces', { key })).status).toBe(200);
  });

  it('400 for an unknown scope, and for scopes on a regular key (nothing changed)', async () => {
    for (const scopes of [['keys:admin'], ['models:read'], 'keys:read', [1]]) {
      expectEnvelope(await rest(env.server, '/keys', { method: 'POST', json: { name: 'x', is_management_key: true, scopes } }), 400);
    }
    expectEnvelope(await rest(env.server, '/keys', { method: 'POST', json: { name: 'x', scopes: ['keys:read'] } }), 400);
    const regular = await rest(env.server, '/keys', { method: 'POST', json: { name: 'regular' } });
    const hash = (regular.body as { data: { hash: string } }).data.hash;
    expectEnvelope(await patch(hash, { scopes: ['keys:read'], name: 'renamed' }), 400);
    const row = await env.server.db.apiKey.findUniqueOrThrow({ where: { hash } });
    expect({ name: row.name, scopes: row.scopes }).toEqual({ name: 'regular', scopes: [] });
  });

  it('leave the organization one enabled, unscoped management key: its last one cannot be scoped, disabled or deleted', async () => {
    const org = await createOrganization(env.server.db, 'Scoped org');
    const owner = await env.server.db.apiKey.findFirstOrThrow({ where: { organization_id: org.organizationId, is_management_key: true } });
    const scoped = await created({ scopes: ['keys:write'] }, org.managementKey);
    // A scoped management key does not count.
    for (const change of [{ scopes: ['keys:write'] }, { disabled: true }]) expectEnvelope(await patch(owner.hash, change, org.managementKey), 400);
    expectEnvelope(await rest(env.server, `/keys/${owner.hash}`, { method: 'DELETE', key: org.managementKey }), 400);
    // A scoped key is refused before that: it may not act on an unscoped key at all (the ceiling).
    expect((await patch(owner.hash, { disabled: true }, scoped.key)).status).toBe(403);
    expect(await env.server.db.apiKey.findUniqueOrThrow({ where: { hash: owner.hash } })).toMatchObject({ disabled: false, scopes: [] });
    // With a second unscoped one, the first may be scoped.
    await created({}, org.managementKey);
    const done = await patch(owner.hash, { scopes: ['analytics:read'] }, org.managementKey);
    expect(done.status).toBe(200);
    expect((await rest(env.server, '/keys', { key: org.managementKey })).status).toBe(403);
  });
});

describe('the scope rule', () => {
  it('write implies read, nothing else', () => {
    expect(grants(['keys:write'], 'keys:read')).toBe(true);
    expect(grants(['keys:read'], 'keys:write')).toBe(false);
    expect(grants(['keys:write'], 'workspaces:read')).toBe(false);
    expect(grants(['keys:read'], 'keys:read')).toBe(true);
    expect(SCOPES).toHaveLength(28);
  });

  // docs/scopes.md's table, every tenant and management operation with its scope, is checked against
  // the router by scope-reach.test.ts, which calls each operation with a key of each scope.
});
