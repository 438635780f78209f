// The administration procedures through the typed client, against a real server.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SwitchyardClient } from '../src/index.js';
import { failure, useServer } from './support.js';

const env = useServer();
let admin: SwitchyardClient;
beforeAll(() => {
  admin = env.client(env.server.managementKey);
});

describe('@switchyard/client: administration', () => {
  it('members: organization, workspace, add (with the 400 naming unknown ids)', async () => {
    const ada = await admin.organization.createMember.mutate({ email: 'ada@example.com', role: 'org:admin' });
    const { data: ws } = await admin.workspaces.create.mutate({ slug: 'research', name: 'Research' });
    const added = await admin.workspaces.addMembers.mutate({ id: 'research', user_ids: [ada.id] });
    expect(added).toMatchObject({ added_count: 1, data: [{ user_id: ada.id, role: 'admin', workspace_id: ws.id }] });
    expect((await admin.workspaces.members.query({ id: ws.id })).data.map((m) => m.user_id)).toEqual([ada.id]);
    const org = await admin.organization.members.query({ limit: 10 });
    expect(org.total_count).toBe(2);

    const bad = await failure(admin.workspaces.addMembers.mutate({ id: 'research', user_ids: ['user_ghost'] }));
    expect(bad).toMatchObject({ status: 400, message: 'Invalid request parameters' });
    expect(bad.metadata).toMatchObject({ invalid_user_ids: ['user_ghost'] });
  });

  it('budgets: set, list, get, delete; the ordering rule is a 400', async () => {
    await admin.budgets.set.mutate({ workspace_ref: 'default', interval: 'monthly', limit_usd: 100 });
    await admin.budgets.set.mutate({ workspace_ref: 'default', interval: 'daily', limit_usd: 5 });
    const list = await admin.budgets.list.query({ id: 'default' });
    expect(list.data.map((b) => b.reset_interval)).toEqual(['daily', 'monthly']);
    expect((await admin.budgets.get.query({ id: 'default', interval: 'monthly' })).data.limit_usd).toBe(100);
    expect((await failure(admin.budgets.set.mutate({ workspace_ref: 'default', interval: 'weekly', limit_usd: 100 }))).status).toBe(400);
    expect((await failure(admin.budgets.get.query({ id: 'default', interval: 'weekly' }))).status).toBe(404);
    expect(await admin.budgets.delete.mutate({ workspace_ref: 'default', interval: 'daily' })).toEqual({ deleted: true });
    expect((await admin.budgets.list.query({ id: 'default' })).data.map((b) => b.reset_interval)).toEqual(['monthly']);
  });

  it('BYOK, guardrails, presets, SCIM and analytics', async () => {
    const { data: cred } = await admin.byok.create.mutate({ provider: 'openai', name: 'main', key: 'sk-live-abcdefgh1234' });
    expect((await admin.byok.get.query({ id: cred.id })).data.label).toBe('s...1234'); // 20 characters: at most 5 shown
    expect((await admin.byok.update.mutate({ id: cred.id, key: 'sk-live-rotated-5678' })).data.label).toBe('s...5678');
    expect((await admin.byok.list.query({ provider: 'openai' })).data.map((c) => c.id)).toEqual([cred.id]);
    expect(await admin.byok.delete.mutate({ id: cred.id })).toEqual({ deleted: true });

    const { data: g } = await admin.guardrails.create.mutate({ name: 'safe', allowed_providers: ['openai'] });
    const { data: key } = await admin.keys.create.mutate({ name: 'guarded key' });
    expect(await admin.guardrails.assignKeys.mutate({ id: g.id, key_hashes: [key.hash] })).toEqual({ assigned_count: 1 });
    expect((await admin.guardrails.keyAssignments.query({ id: g.id })).data[0]).toMatchObject({ key_hash: key.hash, key_name: 'guarded key' });
    expect((await admin.guardrails.allKeyAssignments.query({})).total_count).toBe(1);
    expect((await admin.guardrails.list.query({})).data.map((x) => x.id)).toEqual([g.id]);
    expect((await admin.guardrails.update.mutate({ id: g.id, name: 'safer' })).data.name).toBe('safer');
    expect(await admin.guardrails.delete.mutate({ id: g.id })).toEqual({ deleted: true });
    expect((await failure(admin.guardrails.get.query({ id: g.id }))).status).toBe(404);

    await admin.presets.create.mutate({ slug: 'p', name: 'P', config: { model: 'a/b' } });
    await admin.presets.createVersion.mutate({ slug: 'p', config: { model: 'a/c' } });
    expect((await admin.presets.versions.query({ slug: 'p' })).data.map((v) => v?.version)).toEqual([1, 2]);
    const { data: preset } = await admin.presets.get.query({ slug: 'p' });
    expect(preset.designated_version).toMatchObject({ version: 2, config: { model: 'a/c' }, system_prompt: null });
    expect((await admin.presets.list.query({})).data.map((p) => p.slug)).toEqual(['p']);
    expect((await admin.presets.version.query({ slug: 'p', version: '1' })).data?.config).toEqual({ model: 'a/b' });

    const mapping = await admin.scim.createGroupMapping.mutate({ workspace_id: 'default', scim_group_id: randomUUID(), role: 'member' });
    expect((await admin.scim.updateGroupMapping.mutate({ id: mapping.data.id, role: 'admin' })).data.role).toBe('admin');
    expect((await admin.scim.listGroupMappings.query({})).data.map((m) => m.id)).toEqual([mapping.data.id]);
    expect(await admin.scim.deleteGroupMapping.mutate({ id: mapping.data.id, keep_members: 'true' })).toEqual({ deleted: true });
    expect((await failure(admin.scim.getGroupMapping.query({ id: mapping.data.id }))).status).toBe(404);

    expect((await admin.analytics.meta.query()).data.granularities).toHaveLength(5);

    const regular = env.client((await admin.keys.create.mutate({ name: 'r' })).key);
    expect(await failure(regular.analytics.meta.query())).toMatchObject({ status: 403, message: 'Only management keys can perform this operation' });
  });
});
