// key.expiring: the 7-day and 1-day notices of a key's expiry, each emitted once, however
// many rounds and replicas run the job; live keys only; a new expiry gets its own notices.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitKeyExpiryNotices, KEY_EXPIRING } from '../../src/modules/events/key-expiry.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { testServer } from '../fixtures.js';
import { ok } from '../fixtures-trpc.js';

const DAY = 86_400_000;
let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});
afterAll(async () => {
  await server?.close();
});

const noticesOf = async (keyId: string) =>
  (await server.db.event.findMany({ where: { type: KEY_EXPIRING }, orderBy: [{ created_at: 'asc' }, { seq: 'asc' }] }))
    .filter((event) => (event.payload as { api_key: { id: string } }).api_key.id === keyId)
    .map((event) => (event.payload as { notice: string }).notice);

describe('key.expiring', () => {
  it('fires 7 days and 1 day before expiry, once each, across concurrent rounds', async () => {
    const t0 = new Date(Date.UTC(2031, 0, 1));
    const expiresAt = new Date(t0.getTime() + 10 * DAY);
    const created = await ok(server, 'keys.create', { name: 'expiring', expires_at: expiresAt.toISOString() });
    const key = await server.db.apiKey.findUniqueOrThrow({ where: { hash: created.data.hash } });
    await emitKeyExpiryNotices(server.db, t0);
    expect(await noticesOf(key.id)).toEqual([]);
    // Two replicas' rounds at once, then again: one 7-day notice.
    const at7 = new Date(expiresAt.getTime() - 7 * DAY + 60_000);
    await Promise.all([emitKeyExpiryNotices(server.db, at7), emitKeyExpiryNotices(server.db, at7)]);
    await emitKeyExpiryNotices(server.db, new Date(at7.getTime() + DAY));
    expect(await noticesOf(key.id)).toEqual(['7d']);
    await emitKeyExpiryNotices(server.db, new Date(expiresAt.getTime() - DAY + 60_000));
    await emitKeyExpiryNotices(server.db, new Date(expiresAt.getTime() - 60_000));
    expect(await noticesOf(key.id)).toEqual(['7d', '1d']);
    // Expired: nothing more.
    await emitKeyExpiryNotices(server.db, new Date(expiresAt.getTime() + 60_000));
    expect(await noticesOf(key.id)).toEqual(['7d', '1d']);
    const [event] = await server.db.event.findMany({
      where: { type: KEY_EXPIRING, cause: { contains: key.id } },
      orderBy: [{ created_at: 'asc' }, { seq: 'asc' }],
      take: 1,
    });
    expect(event).toMatchObject({ organization_id: server.organizationId, workspace_id: key.workspace_id });
    expect(event!.payload).toEqual({
      version: 1,
      notice: '7d',
      api_key: { id: key.id, hash: key.hash, hash_prefix: key.hash.slice(0, 12), name: 'expiring' },
      workspace_id: key.workspace_id,
      expires_at: expiresAt.toISOString(),
    });
  });

  it('a key first seen in its last day gets the 1-day notice only; disabled and deleted keys none; a new expiry its own', async () => {
    const t0 = new Date(Date.UTC(2032, 0, 1));
    const soon = await ok(server, 'keys.create', { name: 'soon', expires_at: new Date(t0.getTime() + 12 * 3_600_000).toISOString() });
    const off = await ok(server, 'keys.create', { name: 'off', expires_at: new Date(t0.getTime() + 3 * DAY).toISOString() });
    await ok(server, 'keys.update', { hash: off.data.hash, disabled: true });
    const gone = await ok(server, 'keys.create', { name: 'gone', expires_at: new Date(t0.getTime() + 3 * DAY).toISOString() });
    await ok(server, 'keys.delete', { hash: gone.data.hash });
    await emitKeyExpiryNotices(server.db, t0);
    const idOf = async (hash: string) => (await server.db.apiKey.findUniqueOrThrow({ where: { hash } })).id;
    expect(await noticesOf(await idOf(soon.data.hash))).toEqual(['1d']);
    expect(await noticesOf(await idOf(off.data.hash))).toEqual([]);
    expect(await noticesOf(await idOf(gone.data.hash))).toEqual([]);
    // Extended (no operation changes an expiry today; the database can): the new expiry's notices.
    await server.db.apiKey.update({ where: { hash: soon.data.hash }, data: { expires_at: new Date(t0.getTime() + 5 * DAY) } });
    await emitKeyExpiryNotices(server.db, new Date(t0.getTime() + 60_000));
    expect(await noticesOf(await idOf(soon.data.hash))).toEqual(['1d', '7d']);
  });
});
