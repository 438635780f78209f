import { createDb, type Db } from '@switchyard/db';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing';
import { afterEach, beforeEach, describe, expect, it, inject } from 'vitest';
import { generateApiKey, hashApiKey } from '../src/modules/keys/key-format.js';
import { bootstrapOrganization } from '../src/modules/organization/bootstrap.service.js';

let database: TestDatabase;
let db: Db;
beforeEach(async () => {
  database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
  db = createDb(database.url);
});
afterEach(async () => {
  await db.$disconnect();
  await database.drop();
});

describe('first-start bootstrap', () => {
  it('creates an organization, its default workspace, an org:admin owner and a management key', async () => {
    const secret = generateApiKey();
    const result = await bootstrapOrganization(db, { managementKey: secret });
    expect(result).toMatchObject({ created: true, managementKey: secret, generated: false });

    const org = await db.organization.findFirstOrThrow({ include: { default_workspace: true, members: true, api_keys: true } });
    expect(org.default_workspace).toMatchObject({ slug: 'default', organization_id: org.id });
    expect(org.members).toHaveLength(1);
    expect(org.members[0]?.role).toBe('admin');
    expect(org.api_keys).toHaveLength(1);
    expect(org.api_keys[0]).toMatchObject({
      hash: hashApiKey(secret),
      is_management_key: true,
      creator_user_id: org.members[0]?.user_id,
      workspace_id: org.default_workspace_id,
    });
    // Only the hash is stored.
    const everything = JSON.stringify(await db.apiKey.findMany());
    expect(everything).not.toContain(secret.slice(9));
  });

  it('generates a key when none is given', async () => {
    const result = await bootstrapOrganization(db);
    expect(result.created && result.generated).toBe(true);
    if (result.created) expect(result.managementKey).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
  });

  it('never creates a second organization, even when two servers start at once', async () => {
    const [a, b] = await Promise.all([bootstrapOrganization(db), bootstrapOrganization(db)]);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect((await bootstrapOrganization(db)).created).toBe(false);
    expect(await db.organization.count()).toBe(1);
    expect(await db.apiKey.count()).toBe(1);
  });
});
