import { createDb, type Db } from '@switchyard/db';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing';
import { afterEach, beforeEach, describe, expect, it, inject } from 'vitest';
import { generateApiKey, generatePlatformKey, hashApiKey } from '../../src/access/key-format.js';
import { SERVER_ACTOR } from '../../src/access/callers.js';
import { bootstrap } from '../../src/modules/organizations/bootstrap.service.js';

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
  it('creates a platform key, and an organization with its default workspace, an org:admin owner and a management key', async () => {
    const secret = generateApiKey();
    const platform = generatePlatformKey();
    const result = await bootstrap({ db }, SERVER_ACTOR, { managementKey: secret, platformKey: platform });
    expect(result.organization).toMatchObject({ secret, generated: false });
    expect(result.platform).toMatchObject({ secret: platform, generated: false, label: expect.stringMatching(/^sk-sy-platform-v1-.{3}\.\.\..{3}$/) });

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
    // The platform key belongs to no organization.
    expect(await db.platformKey.findMany()).toEqual([expect.objectContaining({ hash: hashApiKey(platform), disabled: false })]);
    // Only hashes are stored.
    const everything = JSON.stringify([await db.apiKey.findMany(), await db.platformKey.findMany()]);
    expect(everything).not.toContain(secret.slice(9));
    expect(everything).not.toContain(platform.slice(18));
  });

  it('generates both keys when none is given', async () => {
    const result = await bootstrap({ db }, SERVER_ACTOR);
    expect(result.organization?.generated && result.platform?.generated).toBe(true);
    expect(result.organization?.secret).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
    expect(result.platform?.secret).toMatch(/^sk-sy-platform-v1-[0-9a-f]{64}$/);
  });

  it('never creates a second organization or platform key, even when two servers start at once', async () => {
    const [a, b] = await Promise.all([bootstrap({ db }, SERVER_ACTOR), bootstrap({ db }, SERVER_ACTOR)]);
    expect([a.organization === undefined, b.organization === undefined].sort()).toEqual([false, true]);
    expect([a.platform === undefined, b.platform === undefined].sort()).toEqual([false, true]);
    expect(await bootstrap({ db }, SERVER_ACTOR)).toEqual({});
    expect(await db.organization.count()).toBe(1);
    expect(await db.apiKey.count()).toBe(1);
    expect(await db.platformKey.count()).toBe(1);
  });

  it('registers SWITCHYARD_PLATFORM_KEY on a database bootstrapped before (an upgrade, or a new key)', async () => {
    await bootstrap({ db }, SERVER_ACTOR);
    const platform = generatePlatformKey();
    expect((await bootstrap({ db }, SERVER_ACTOR, { platformKey: platform })).platform).toMatchObject({ secret: platform, generated: false });
    expect(await bootstrap({ db }, SERVER_ACTOR, { platformKey: platform })).toEqual({});
    expect(await db.platformKey.count()).toBe(2);
  });
});
