import { beforeEach, describe, expect, it } from 'vitest';
import { ListOrganizationMembersOutputSchema, OrganizationMemberSchema, type OrganizationMember } from '@switchyard/schema';
import { createOrganization, managementActor, type OrgFixture, until, useServer } from '../fixtures.js';
import { createMember, createRegularKey, expectEnvelope, expectPaginationEdges, rest } from '../fixtures-admin.js';
import { MemberOrderCache } from '../../src/modules/members/member-order.js';
import { listOrganizationMembers } from '../../src/modules/members/members.service.js';
import { ok, trpc, trpcRaw } from '../fixtures-trpc.js';

const env = useServer();
const List = ListOrganizationMembersOutputSchema.extend({ data: OrganizationMemberSchema.strict().array() }).strict();

describe('GET /organization/members', () => {
  it('lists the members with every field, oldest first, and total_count', async () => {
    await createMember(env.server, 'Ada@Example.com', 'org:admin');
    await createMember(env.server, 'bob@example.com');
    const { status, body } = await rest(env.server, '/organization/members?limit=50&offset=0');
    expect(status).toBe(200);
    const list = List.parse(body);
    expect(list.total_count).toBe(3);
    expect(list.data.map((m) => [m.email, m.role])).toEqual([
      ['owner@switchyard.local', 'org:admin'],
      ['ada@example.com', 'org:admin'],
      ['bob@example.com', 'org:member'],
    ]);
    expect(list.data[0]).toMatchObject({ first_name: 'Owner', last_name: '' });
    expect(list.data[0]!.id).toMatch(/^user_/);
    // Defaults: offset 0, limit 50.
    expect((await rest(env.server, '/organization/members')).body).toEqual(body);
  });

  it('pages stably at the edges', async () => {
    for (let i = 0; i < 3; i++) await createMember(env.server, `page${i}@example.com`);
    await expectPaginationEdges(env.server, '/organization/members', 6);
  });

  it("never shows another organization's members", async () => {
    const theirs = List.parse((await rest(env.server, '/organization/members', { key: env.other.managementKey })).body);
    expect(theirs.total_count).toBe(1);
    expect(theirs.data[0]!.id).toBe(env.other.userId);
    const mine = List.parse((await rest(env.server, '/organization/members?limit=100')).body);
    expect(mine.data.map((m) => m.id)).not.toContain(env.other.userId);
  });

  it('shows members added or removed through this server at once, and by another process within CACHE_TTL_MS', async () => {
    const before = List.parse((await rest(env.server, '/organization/members?limit=100')).body).total_count;
    const added = await createMember(env.server, 'fresh@example.com');
    expect(List.parse((await rest(env.server, '/organization/members?limit=100')).body).total_count).toBe(before + 1);
    await ok(env.server, 'organization.removeMember', { user_id: added.id });
    expect(List.parse((await rest(env.server, '/organization/members?limit=100')).body).total_count).toBe(before);
    // Straight to the database, as another server process would: seen once the order is reloaded.
    const row = await env.server.db.user.create({ data: { id: 'user_elsewhere', email: 'elsewhere@example.com' } });
    await env.server.db.organizationMember.create({ data: { organization_id: (await managementActor(env.server)).organizationId, user_id: row.id } });
    const count = async () => List.parse((await rest(env.server, '/organization/members?limit=100')).body).total_count;
    await until(async () => (await count()) === before + 1, { everyMs: 50, what: 'the member added elsewhere to be counted' });
    const after = List.parse((await rest(env.server, '/organization/members?limit=100')).body);
    expect(after.total_count).toBe(before + 1);
    expect(after.data.map((m) => m.id)).toContain(row.id);
  });

  it('pages an organization too large to keep its order in memory the same way, in the database', async () => {
    const actor = await managementActor(env.server);
    const cached = new MemberOrderCache(1_000);
    const tooLarge = new MemberOrderCache(1_000, { maxOrganizations: 10, maxMembers: 2 });
    expect(await tooLarge.ids(env.server.db, actor.organizationId)).toBeNull();
    for (const page of [
      { offset: 0, limit: 2 },
      { offset: 1, limit: 3 },
      { offset: 0, limit: 100 },
      { offset: 99, limit: 5 },
    ]) {
      const inMemory = await listOrganizationMembers({ db: env.server.db, memberOrder: cached }, actor, page);
      expect(await listOrganizationMembers({ db: env.server.db, memberOrder: tooLarge }, actor, page)).toEqual(inMemory);
    }
  });

  it("keeps the order exactly as the database's, and an organization without members as an empty one", async () => {
    const actor = await managementActor(env.server);
    const expected = await env.server.db.organizationMember.findMany({
      where: { organization_id: actor.organizationId },
      orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
      select: { id: true },
    });
    expect(await new MemberOrderCache(1_000).ids(env.server.db, actor.organizationId)).toEqual(expected.map((m) => m.id));
    expect(await new MemberOrderCache(1_000).ids(env.server.db, 'org_without_members')).toEqual([]);
  });

  it('401 without a key, 403 for a regular key', async () => {
    expectEnvelope(await rest(env.server, '/organization/members', { key: null }), 401);
    const { key } = await createRegularKey(env.server);
    expectEnvelope(await rest(env.server, '/organization/members', { key }), 403);
  });
});

describe('organization member procedures (internal)', () => {
  it('reuse a global user by email, refuse a duplicate membership, change and remove roles', async () => {
    // A user of another organization joins this one too: one user, two memberships.
    const theirs = await ok(
      env.server,
      'organization.createMember',
      { email: 'shared@example.com', first_name: 'Sha', last_name: 'Red' },
      { key: env.other.managementKey },
    );
    const mine = await createMember(env.server, 'SHARED@example.com');
    expect(mine.id).toBe(theirs.id);

    const dup = await trpc(env.server, 'organization.createMember', { email: 'shared@example.com' });
    expect(dup.status).toBe(400);
    expect(dup.error?.data.metadata).toMatchObject({ reason: 'already a member' });

    const updated = await ok(env.server, 'organization.updateMember', { user_id: mine.id, role: 'org:admin' });
    expect(updated).toMatchObject({ id: mine.id, role: 'org:admin' });
    // The other organization's membership is untouched.
    const theirList = await rest(env.server, '/organization/members', { key: env.other.managementKey });
    expect(List.parse(theirList.body).data.find((m) => m.id === mine.id)!.role).toBe('org:member');

    expect(await ok(env.server, 'organization.removeMember', { user_id: mine.id })).toEqual({ removed: true });
    expect(List.parse((await rest(env.server, '/organization/members?limit=100')).body).data.map((m) => m.id)).not.toContain(mine.id);
    expect(List.parse((await rest(env.server, '/organization/members', { key: env.other.managementKey })).body).total_count).toBe(2);
  });

  it("404 for another organization's member, 400 for bad input, 403 for a regular key", async () => {
    expect((await trpc(env.server, 'organization.updateMember', { user_id: env.other.userId, role: 'org:member' })).status).toBe(404);
    expect((await trpc(env.server, 'organization.removeMember', { user_id: env.other.userId })).status).toBe(404);
    expect((await trpc(env.server, 'organization.createMember', { email: 'not-an-email' })).status).toBe(400);
    expect((await trpcRaw(env.server, 'organization.createMember', { email: 'x@example.com', role: 'owner' })).status).toBe(400);
    const { key } = await createRegularKey(env.server);
    expect((await trpc(env.server, 'organization.createMember', { email: 'y@example.com' }, { key })).status).toBe(403);
  });
});

describe('query plan', () => {
  it('a page of a large organization reads the (organization_id, created_at, id) index, not the table', async () => {
    const big = await createOrganization(env.server.db, 'Big');
    await env.server.db.$executeRaw`
      INSERT INTO users (id, email, updated_at)
      SELECT 'user_big_' || i, 'big' || i || '@example.com', now() FROM generate_series(1, 5000) AS i`;
    await env.server.db.$executeRaw`
      INSERT INTO organization_members (id, organization_id, user_id, updated_at)
      SELECT gen_random_uuid(), ${big.organizationId}, 'user_big_' || i, now() FROM generate_series(1, 5000) AS i`;
    await env.server.db.$executeRaw`ANALYZE organization_members`;
    const plan = await env.server.db.$queryRaw<{ 'QUERY PLAN': unknown }[]>`
      EXPLAIN (FORMAT JSON) SELECT * FROM organization_members WHERE organization_id = ${big.organizationId}
      ORDER BY created_at, id OFFSET 100 LIMIT 50`;
    const text = JSON.stringify(plan);
    expect(text).toContain('organization_members_organization_id_created_at_id_idx');
    expect(text).not.toContain('"Sort"');
    expect(List.parse((await rest(env.server, '/organization/members?offset=4990&limit=100', { key: big.managementKey })).body).data).toHaveLength(11);
  });
});

describe('people: one identity per email, names and role per organization', () => {
  let a: OrgFixture;
  let b: OrgFixture;
  beforeEach(async () => {
    a = await createOrganization(env.server.db, 'A');
    b = await createOrganization(env.server.db, 'B');
  });

  type Names = { first_name?: string; last_name?: string; role?: 'org:admin' | 'org:member' };
  const add = (org: OrgFixture, email: string, names: Names = {}) =>
    trpc(env.server, 'organization.createMember', { email, ...names }, { key: org.managementKey });

  /**
   * The member with this email as the organization sees it on GET /organization/members, which
   * must agree with the statement that pages organizations too large to keep their order in memory.
   */
  async function seenBy(org: OrgFixture, email: string): Promise<OrganizationMember | undefined> {
    const listed = List.parse((await rest(env.server, '/organization/members?limit=100', { key: org.managementKey })).body).data;
    const tooLarge = new MemberOrderCache(0, { maxOrganizations: 1, maxMembers: 1 });
    const paged = await listOrganizationMembers({ db: env.server.db, memberOrder: tooLarge }, await managementActor(env.server, org.managementKey), {
      offset: 0,
      limit: 100,
    });
    expect(paged.data).toEqual(listed);
    return listed.find((m) => m.email === email);
  }

  it('adding an email another organization has reveals nothing that organization wrote', async () => {
    const theirs = await add(a, 'grace@example.com', { first_name: 'Grace', last_name: 'Hopper', role: 'org:admin' });
    expect(theirs.status).toBe(200);
    const mine = await add(b, 'GRACE@example.com');
    expect(mine.status).toBe(200);
    // The same person (identity is shared), with only what B wrote: no names, B's role.
    expect(mine.data).toEqual({ id: theirs.data.id, email: 'grace@example.com', first_name: '', last_name: '', role: 'org:member' });
    expect(await seenBy(b, 'grace@example.com')).toEqual(mine.data);
    expect(await seenBy(a, 'grace@example.com')).toEqual(theirs.data);
  });

  it("an organization's names for a person never change what another organization sees", async () => {
    const first = await add(b, 'jane@example.com', { first_name: 'Call IT at +1-555-0100', last_name: '' });
    expect(first.status).toBe(200);
    const later = await add(a, 'Jane@Example.com', { first_name: 'Jane', last_name: 'Doe' });
    expect(later.data).toEqual({ id: first.data.id, email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe', role: 'org:member' });
    expect(await seenBy(a, 'jane@example.com')).toEqual(later.data);
    expect(await seenBy(b, 'jane@example.com')).toEqual(first.data);
  });

  it("updateMember changes this organization's names and role, never what another organization sees", async () => {
    const theirs = await add(b, 'ren@example.com', { first_name: 'R.', last_name: 'X' });
    const mine = await add(a, 'ren@example.com', { first_name: 'Ren' });
    const update = (input: Record<string, unknown>) =>
      trpc(env.server, 'organization.updateMember', { user_id: mine.data.id, ...input }, { key: a.managementKey });

    const renamed = await update({ last_name: 'Ito' });
    expect(renamed.status, JSON.stringify(renamed.error)).toBe(200);
    expect(renamed.data).toEqual({ ...mine.data, last_name: 'Ito' });
    const promoted = await update({ role: 'org:admin' });
    expect(promoted.data).toEqual({ ...renamed.data, role: 'org:admin' });
    const cleared = await update({ first_name: '', last_name: 'Ito-Sato', role: 'org:member' });
    expect(cleared.data).toEqual({ ...mine.data, first_name: '', last_name: 'Ito-Sato' });
    expect(await seenBy(a, 'ren@example.com')).toEqual(cleared.data);
    expect(await seenBy(b, 'ren@example.com')).toEqual(theirs.data);

    // Nothing to change, or a name over 200 characters: 400.
    expect((await update({})).status).toBe(400);
    expect((await update({ first_name: 'x'.repeat(201) })).status).toBe(400);
  });

  it('two organizations adding the same new email at the same moment both succeed', async () => {
    const rounds = [];
    for (let round = 0; round < 8; round++) {
      const email = `both${round}@example.com`;
      const [forA, forB] = await Promise.all([
        add(a, email, { first_name: 'A', last_name: `${round}` }),
        add(b, email, { first_name: 'B', last_name: `${round}`, role: 'org:admin' }),
      ]);
      rounds.push({ email, round, forA, forB });
    }
    expect(
      rounds.map((r) => [r.forA.status, r.forB.status]),
      JSON.stringify(rounds.map((r) => [r.forA.error, r.forB.error])),
    ).toEqual(rounds.map(() => [200, 200]));
    for (const { email, round, forA, forB } of rounds) {
      expect(forB.data.id).toBe(forA.data.id);
      expect(await seenBy(a, email)).toEqual({ id: forA.data.id, email, first_name: 'A', last_name: `${round}`, role: 'org:member' });
      expect(await seenBy(b, email)).toEqual({ id: forA.data.id, email, first_name: 'B', last_name: `${round}`, role: 'org:admin' });
    }
  });

  it('one organization adding the same email twice at once: one member, the other call 400 "already a member"', async () => {
    for (let round = 0; round < 3; round++) {
      const email = `twice${round}@example.com`;
      const answers = await Promise.all([add(a, email), add(a, email)]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
      expect(answers.find((r) => r.status === 400)!.error?.data.metadata).toMatchObject({ reason: 'already a member', email });
      expect(
        List.parse((await rest(env.server, '/organization/members?limit=100', { key: a.managementKey })).body).data.filter((m) => m.email === email),
      ).toHaveLength(1);
    }
  });
});
