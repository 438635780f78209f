import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListOrganizationMembersOutputSchema, OrganizationMemberSchema } from '@switchyard/schema';
import type { TestServer } from '../src/testing.js';
import { createOrganization, managementActor, pastCacheTtl, testServer, type OrgFixture } from './fixtures.js';
import { createMember, createRegularKey, expectEnvelope, expectPaginationEdges, ok, rest, trpc } from './fixtures-admin.js';
import { MemberOrderCache } from '../src/modules/organization/member-order.js';
import { listOrganizationMembers } from '../src/modules/organization/members.service.js';

let server: TestServer;
let other: OrgFixture;
beforeAll(async () => {
  server = await testServer();
  other = await createOrganization(server.db);
});
afterAll(async () => {
  await server?.close();
});

describe('GET /organization/members', () => {
  it('lists the members with every field, oldest first, and total_count', async () => {
    await createMember(server, 'Ada@Example.com', 'org:admin');
    await createMember(server, 'bob@example.com');
    const { status, body } = await rest(server, '/organization/members?limit=50&offset=0');
    expect(status).toBe(200);
    const list = ListOrganizationMembersOutputSchema.extend({ data: OrganizationMemberSchema.strict().array() }).strict().parse(body);
    expect(list.total_count).toBe(3);
    expect(list.data.map((m) => [m.email, m.role])).toEqual([
      ['owner@switchyard.local', 'org:admin'],
      ['ada@example.com', 'org:admin'],
      ['bob@example.com', 'org:member'],
    ]);
    expect(list.data[0]).toMatchObject({ first_name: '', last_name: '' });
    expect(list.data[0]!.id).toMatch(/^user_/);
    // Defaults: offset 0, limit 50.
    expect((await rest(server, '/organization/members')).body).toEqual(body);
  });

  it('pages stably at the edges', async () => {
    for (let i = 0; i < 3; i++) await createMember(server, `page${i}@example.com`);
    await expectPaginationEdges(server, '/organization/members', 6);
  });

  it("never shows another organization's members", async () => {
    const theirs = await rest(server, '/organization/members', { key: other.managementKey });
    expect(theirs.body.total_count).toBe(1);
    expect(theirs.body.data[0].id).toBe(other.userId);
    const mine = await rest(server, '/organization/members?limit=100');
    expect(mine.body.data.map((m: { id: string }) => m.id)).not.toContain(other.userId);
  });

  it('shows members added or removed through this server at once, and by another process within CACHE_TTL_MS', async () => {
    const before = (await rest(server, '/organization/members?limit=100')).body.total_count as number;
    const added = await createMember(server, 'fresh@example.com');
    expect((await rest(server, '/organization/members?limit=100')).body.total_count).toBe(before + 1);
    await ok(server, 'organization.removeMember', { user_id: added.id });
    expect((await rest(server, '/organization/members?limit=100')).body.total_count).toBe(before);
    // Straight to the database, as another server process would: seen once the order is reloaded.
    const writtenAt = performance.now();
    const row = await server.db.user.create({ data: { id: 'user_elsewhere', email: 'elsewhere@example.com' } });
    await server.db.organizationMember.create({ data: { organization_id: (await managementActor(server)).organizationId, user_id: row.id } });
    await pastCacheTtl(writtenAt);
    const after = (await rest(server, '/organization/members?limit=100')).body;
    expect(after.total_count).toBe(before + 1);
    expect(after.data.map((m: { id: string }) => m.id)).toContain(row.id);
  });

  it('pages an organization too large to keep its order in memory the same way, in the database', async () => {
    const actor = await managementActor(server);
    const cached = new MemberOrderCache(1_000);
    const tooLarge = new MemberOrderCache(1_000, { maxOrganizations: 10, maxMembers: 2 });
    expect(await tooLarge.ids(server.db, actor.organizationId)).toBeNull();
    for (const page of [{ offset: 0, limit: 2 }, { offset: 1, limit: 3 }, { offset: 0, limit: 100 }, { offset: 99, limit: 5 }]) {
      const inMemory = await listOrganizationMembers(server.db, cached, actor, page);
      expect(await listOrganizationMembers(server.db, tooLarge, actor, page)).toEqual(inMemory);
    }
  });

  it('401 without a key, 403 for a regular key', async () => {
    expectEnvelope(await rest(server, '/organization/members', { key: null }), 401);
    const { key } = await createRegularKey(server);
    expectEnvelope(await rest(server, '/organization/members', { key }), 403);
  });
});

describe('organization member procedures (internal)', () => {
  it('reuse a global user by email, refuse a duplicate membership, change and remove roles', async () => {
    // A user of another organization joins this one too: one user, two memberships.
    const theirs = await ok(server, 'organization.createMember', { email: 'shared@example.com', first_name: 'Sha', last_name: 'Red' }, { key: other.managementKey });
    const mine = await createMember(server, 'SHARED@example.com');
    expect(mine.id).toBe(theirs.id);

    const dup = await trpc(server, 'organization.createMember', { email: 'shared@example.com' });
    expect(dup.status).toBe(400);
    expect(dup.error?.data.metadata).toMatchObject({ reason: 'already a member' });

    const updated = await ok(server, 'organization.updateMember', { user_id: mine.id, role: 'org:admin' });
    expect(updated).toMatchObject({ id: mine.id, role: 'org:admin' });
    // The other organization's membership is untouched.
    const theirList = await rest(server, '/organization/members', { key: other.managementKey });
    expect(theirList.body.data.find((m: { id: string }) => m.id === mine.id).role).toBe('org:member');

    expect(await ok(server, 'organization.removeMember', { user_id: mine.id })).toEqual({ removed: true });
    expect((await rest(server, '/organization/members?limit=100')).body.data.map((m: { id: string }) => m.id)).not.toContain(mine.id);
    expect((await rest(server, '/organization/members', { key: other.managementKey })).body.total_count).toBe(2);
  });

  it("404 for another organization's member, 400 for bad input, 403 for a regular key", async () => {
    expect((await trpc(server, 'organization.updateMember', { user_id: other.userId, role: 'org:member' })).status).toBe(404);
    expect((await trpc(server, 'organization.removeMember', { user_id: other.userId })).status).toBe(404);
    expect((await trpc(server, 'organization.createMember', { email: 'not-an-email' })).status).toBe(400);
    expect((await trpc(server, 'organization.createMember', { email: 'x@example.com', role: 'owner' })).status).toBe(400);
    const { key } = await createRegularKey(server);
    expect((await trpc(server, 'organization.createMember', { email: 'y@example.com' }, { key })).status).toBe(403);
  });
});

describe('query plan', () => {
  it('a page of a large organization reads the (organization_id, created_at, id) index, not the table', async () => {
    const big = await createOrganization(server.db, 'Big');
    await server.db.$executeRaw`
      INSERT INTO users (id, email, updated_at)
      SELECT 'user_big_' || i, 'big' || i || '@example.com', now() FROM generate_series(1, 5000) AS i`;
    await server.db.$executeRaw`
      INSERT INTO organization_members (id, organization_id, user_id, updated_at)
      SELECT gen_random_uuid(), ${big.organizationId}, 'user_big_' || i, now() FROM generate_series(1, 5000) AS i`;
    await server.db.$executeRaw`ANALYZE organization_members`;
    const plan = await server.db.$queryRaw<{ 'QUERY PLAN': unknown }[]>`
      EXPLAIN (FORMAT JSON) SELECT * FROM organization_members WHERE organization_id = ${big.organizationId}
      ORDER BY created_at, id OFFSET 100 LIMIT 50`;
    const text = JSON.stringify(plan);
    expect(text).toContain('organization_members_organization_id_created_at_id_idx');
    expect(text).not.toContain('"Sort"');
    expect((await rest(server, '/organization/members?offset=4990&limit=100', { key: big.managementKey })).body.data).toHaveLength(11);
  });
});
