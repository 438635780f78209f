// The bounded audit of BYOK secrets revealed by routing.authorize (docs/audit.md
// "byok.reveal"): one entry per credential per hour, actor the platform key, target the credential,
// written off the request path (an in-process queue flushed by a timer, INSERT ... ON CONFLICT (dedupe_key)
// DO NOTHING), visible to the credential's organization only. Waits are on conditions, with a bound.
import { randomUUID } from 'node:crypto';
import { type AuditLogPage, RoutingAuthorizeOutputSchema } from '@switchyard/schema';
import { createDb, freePort } from '@switchyard/db';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditOfPlatform } from '../../src/modules/audit/audit.js';
import { ByokReveals } from '../../src/modules/audit/byok-reveals.js';
import { hashApiKey } from '../../src/access/key-format.js';
import { until, useServer } from '../fixtures.js';
import { createKey, importDemoCatalog } from '../fixtures-catalog.js';
import { ok, trpcRaw } from '../fixtures-trpc.js';

const env = useServer('Reveal neighbour');
const HOUR = 3_600_000;

let keyHash: string;
let openaiSecret: string;
let openai: string;
let anthropic: string;
let platformKeyId: string;
/** Ten minutes into the current hour: the server's clock for the first hour's reveals. */
let firstHour: Date;

beforeAll(async () => {
  const { server } = env;
  await importDemoCatalog(server);
  await ok(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 1000 });
  const workspace = await ok(server, 'workspaces.create', { slug: `reveal-${randomUUID().slice(0, 8)}`, name: 'Reveals' });
  keyHash = (await createKey(server, { workspace_id: workspace.data.id })).hash;
  openaiSecret = `sk-reveal-openai-${randomUUID()}`;
  openai = (await ok(server, 'byok.create', { provider: 'openai', key: openaiSecret, workspace_id: workspace.data.id })).data.id;
  anthropic = (await ok(server, 'byok.create', { provider: 'anthropic', key: `sk-reveal-anthropic-${randomUUID()}`, workspace_id: workspace.data.id })).data.id;
  platformKeyId = (await server.db.platformKey.findFirstOrThrow({ where: { hash: hashApiKey(server.platformKey) } })).id;
  firstHour = new Date(Math.floor(Date.now() / HOUR) * HOUR + 10 * 60_000);
  server.setNow(firstHour);
});

/** routing.authorize as the platform; answers the BYOK credential ids the answer revealed (with their secrets). */
async function authorize(model: string) {
  const { status, data, error } = await trpcRaw(env.server, 'routing.authorize', { api_key_hash: keyHash, model });
  expect(status, JSON.stringify(error)).toBe(200);
  const decision = RoutingAuthorizeOutputSchema.parse(data).data;
  if (!decision.allowed) throw new Error(`refused: ${JSON.stringify(decision)}`);
  return decision.endpoints.flatMap((e) => (e.byok ? [e.byok] : []));
}

const reveals = (credential: string) =>
  env.server.db.auditLog.findMany({ where: { action: 'byok.reveal', target_id: credential }, orderBy: { created_at: 'asc' } });

async function auditLogs(key: string, query: string) {
  const res = await env.server.request(`/api/v1/audit-logs${query}`, { key });
  expect(res.status).toBe(200);
  return (await res.json()) as AuditLogPage;
}

describe('byok.reveal: one entry per credential per hour', () => {
  it('many reveals of one credential in an hour make one entry; a second credential gets its own', async () => {
    const revealed = await Promise.all(Array.from({ length: 20 }, () => authorize('openai/gpt-4o')));
    for (const byok of revealed) expect(byok).toContainEqual({ id: openai, secret: openaiSecret });
    await until(async () => (await reveals(openai)).length > 0, { what: "the first reveal's entry" });
    for (let i = 0; i < 10; i++) await authorize('openai/gpt-4o');
    // Noted after every reveal above: once its entry is written, so is anything they left pending.
    expect((await authorize('anthropic/claude-sonnet-4')).map((b) => b.id)).toContain(anthropic);
    await until(async () => (await reveals(anthropic)).length > 0, { what: "the second credential's entry" });

    const [entry] = await reveals(openai);
    expect(await reveals(openai)).toHaveLength(1);
    expect(await reveals(anthropic)).toHaveLength(1);
    const bucket = new Date(Math.floor(firstHour.getTime() / HOUR) * HOUR);
    expect(entry).toMatchObject({
      organization_id: env.server.organizationId,
      actor_kind: 'platform_key',
      actor_key_hash: platformKeyId,
      target_type: 'byok_credential',
      target_id: openai,
      created_at: firstHour,
      dedupe_key: `byok.reveal:${openai}:${bucket.toISOString()}`,
      changes: {
        after: {
          provider: 'openai',
          label: expect.stringMatching(/^sk-\.\.\./),
          first_revealed_at: firstHour.toISOString(),
          hour: { start: bucket.toISOString(), end: new Date(bucket.getTime() + HOUR).toISOString() },
        },
      },
    });
    expect(entry!.request_id).toBeTruthy();
    // The secret is in no entry and no log line.
    const all = JSON.stringify(await env.server.db.auditLog.findMany({ where: { action: 'byok.reveal' } }));
    expect(all).not.toContain(openaiSecret);
    expect(JSON.stringify(env.server.logs)).not.toContain(openaiSecret);
  });

  it('the next hour (by the server clock) gives a new entry', async () => {
    await until(async () => (await reveals(openai)).length === 1, { what: 'the first hour written' });
    const next = new Date(firstHour.getTime() + HOUR);
    env.server.setNow(next);
    try {
      await authorize('openai/gpt-4o');
      await authorize('openai/gpt-4o');
      await until(async () => (await reveals(openai)).length === 2, { what: "the next hour's entry" });
      const entries = await reveals(openai);
      expect(entries.map((e) => e.created_at)).toEqual([firstHour, next]);
    } finally {
      env.server.setNow(firstHour);
    }
  });

  it('tenants see the entries in GET /audit-logs of their own organization only', async () => {
    await until(async () => (await reveals(anthropic)).length === 1, { what: 'the entries written' });
    const own = await auditLogs(env.server.managementKey, `?action=byok.reveal&target_type=byok_credential&target_id=${openai}`);
    expect(own.data.length).toBeGreaterThanOrEqual(1);
    expect(own.data.every((e) => e.actor.kind === 'platform_key' && e.target.id === openai && e.organization_id === env.server.organizationId)).toBe(true);
    const theirs = await auditLogs(env.other.managementKey, '?action=byok.reveal');
    expect(theirs.data).toEqual([]);
  });

  it('replicas revealing one credential in one hour still make one row (the dedupe key)', async () => {
    const { server } = env;
    const logger = pino({ level: 'silent' });
    // A second process's queue on the same database, revealing the credential of an hour already written.
    const replica = new ByokReveals({ db: server.db, now: () => firstHour, logger, flushMs: 60_000 });
    try {
      const origin = { requestId: () => 'replica-reveal', clientAddress: () => null, now: () => new Date(firstHour.getTime() + 60_000) };
      replica.note(auditOfPlatform({ kind: 'platform', keyId: platformKeyId, name: 'replica' }, origin), {
        id: openai,
        organization_id: server.organizationId,
        provider: 'openai',
        label: 'sk-...test',
      });
      await replica.flush();
      expect(replica.pending).toBe(0);
    } finally {
      await replica.close();
    }
    expect(await server.db.auditLog.count({ where: { request_id: 'replica-reveal' } })).toBe(0);
    expect((await reveals(openai)).filter((e) => e.created_at.getTime() < firstHour.getTime() + HOUR)).toHaveLength(1);
  });

  /** A ByokReveals on `databaseUrl`, holding one reveal of `anthropic`, and the lines it logs. */
  function revealsOn(databaseUrl: URL, name: string) {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const db = createDb(databaseUrl.toString(), { poolMax: 1 });
    const reveals = new ByokReveals({ db, now: () => firstHour, logger, flushMs: 60_000 });
    const origin = { requestId: () => `${name}-reveal`, clientAddress: () => null, now: () => firstHour };
    reveals.note(auditOfPlatform({ kind: 'platform', keyId: platformKeyId, name }, origin), {
      id: anthropic,
      organization_id: env.server.organizationId,
      provider: 'anthropic',
      label: 'sk-...test',
    });
    const close = async () => {
      await reveals.close();
      await db.$disconnect();
    };
    return { lines, reveals, close };
  }

  it('a failed write is logged and kept for the next flush; it throws nowhere', async () => {
    // A real client of a database that does not exist: every statement fails.
    const broken = new URL(env.server.databaseUrl);
    broken.pathname = `/no_such_database_${randomUUID().slice(0, 8).replace(/-/g, '')}`;
    const failing = revealsOn(broken, 'failing');
    try {
      await expect(failing.reveals.flush()).resolves.toBeUndefined();
      expect(failing.reveals.pending).toBe(1);
      expect(failing.lines.some((l) => String(l.msg).includes('could not write the audit entries of BYOK reveals'))).toBe(true);
    } finally {
      await failing.close();
    }
    // And a routing answer that reveals is unaffected by the queue: it answers before any write.
    expect((await authorize('anthropic/claude-sonnet-4')).map((b) => b.id)).toContain(anthropic);
  });

  it('a database that is not there: the entry waits, with no line a flush (the health monitor logs the loss); close() says what it could not write', async () => {
    // A real client of a port where nothing listens: every connection is refused.
    const gone = new URL(env.server.databaseUrl);
    gone.port = String(await freePort());
    const waiting = revealsOn(gone, 'unreachable');
    try {
      await waiting.reveals.flush();
      await waiting.reveals.flush();
      expect(waiting.reveals.pending).toBe(1);
      expect(waiting.lines).toEqual([]);
    } finally {
      await waiting.close();
    }
    expect(waiting.lines.map(({ msg, pending }) => [msg, pending])).toEqual([['closed with audit entries of BYOK reveals not written', 1]]);
  });
});
