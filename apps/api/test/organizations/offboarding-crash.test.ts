// Offboarding and a crash: the server process is killed (SIGKILL) in the middle
// of an organization's deletion, while it removes generations batch by batch. After a restart the
// job is taken again once its lease ends, resumes, and finishes: nothing of the organization is
// left, and the other organization is untouched.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDb, queryRows, statement } from '@switchyard/db';
import { createTestDatabase, organizationTables, scaled } from '@switchyard/db/testing';
import { describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { until } from '../fixtures.js';
import { start, stop } from '../fixtures-process.js';

const COUNT = z.object({ n: z.number() });

describe('organizations.delete when the server is killed mid-deletion', () => {
  it(
    'resumes after a restart and leaves nothing of the organization',
    async () => {
      const database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-offboarding-crash-'));
      const platformKey = `sk-sy-platform-v1-${'cd'.repeat(32)}`;
      const env = {
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        SWITCHYARD_BOOTSTRAP_KEY: `sk-sy-v1-${'ab'.repeat(32)}`,
        SWITCHYARD_PLATFORM_KEY: platformKey,
        JOB_POLL_MS: '50',
        JOB_LEASE_MS: '1000',
        STORAGE_SWEEP_INTERVAL_MS: '0',
      };
      const db = createDb(database.url);
      const trpc = async (proc: { url: string }, path: string, input: unknown, method: 'GET' | 'POST' = 'POST') => {
        const res = await fetch(method === 'GET' ? `${proc.url}/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}` : `${proc.url}/trpc/${path}`, {
          method,
          headers: { authorization: `Bearer ${platformKey}`, 'content-type': 'application/json' },
          ...(method === 'POST' ? { body: JSON.stringify(input) } : {}),
        });
        const body = (await res.json()) as { result?: { data: unknown }; error?: unknown };
        expect(res.status, JSON.stringify(body)).toBe(200);
        return body.result!.data as Record<string, unknown>;
      };
      try {
        let proc = await start(env);
        const survivor = (await db.organization.findFirstOrThrow()).id;
        const victim = (await trpc(proc, 'organizations.create', { name: 'Leaving' })) as { organization_id: string; workspace_id: string };
        const key = await db.apiKey.findFirstOrThrow({ where: { organization_id: victim.organization_id } });
        // 60,000 generations (12 batches of 5,000) for the victim, one for the survivor.
        await db.$executeRaw`INSERT INTO generations (id, organization_id, workspace_id, api_key_id, user_id, model, created_at)
        SELECT 'gen-crash-' || n, ${victim.organization_id}, ${victim.workspace_id}::uuid, ${key.id}::uuid, ${key.creator_user_id}, 'openai/gpt-4o', now()
          FROM generate_series(1, 60000) AS n`;
        const survivorKey = await db.apiKey.findFirstOrThrow({ where: { organization_id: survivor } });
        await db.$executeRaw`INSERT INTO generations (id, organization_id, workspace_id, api_key_id, user_id, model, created_at)
        VALUES ('gen-crash-survivor', ${survivor}, ${survivorKey.workspace_id}::uuid, ${survivorKey.id}::uuid, ${survivorKey.creator_user_id}, 'openai/gpt-4o', now())`;
        const before = await countsOf(db, survivor);

        const { data } = (await trpc(proc, 'organizations.delete', { organization_id: victim.organization_id, confirm: victim.organization_id })) as {
          data: { id: string };
        };
        // The job is removing generations: the server dies.
        await until(
          async () => {
            const job = await db.job.findUniqueOrThrow({ where: { id: data.id } });
            return ((job.progress as { deleted_generations?: number } | null)?.deleted_generations ?? 0) > 0;
          },
          { what: 'the deletion to be removing generations' },
        );
        proc.child.kill('SIGKILL');
        await proc.exited;
        const killed = await db.job.findUniqueOrThrow({ where: { id: data.id } });
        expect(killed.status).toBe('running');
        expect(await db.generation.count({ where: { organization_id: victim.organization_id } })).toBeGreaterThan(0);

        proc = await start(env);
        await until(async () => (await db.job.findUniqueOrThrow({ where: { id: data.id } })).status === 'succeeded', {
          what: 'the deletion to resume and finish once the killed server’s lease ends',
          timeoutMs: scaled(60_000),
        });
        const done = (await trpc(proc, 'organizations.deletion', { id: data.id }, 'GET')) as { data: { progress: Record<string, unknown> } };
        expect(done.data.progress).toMatchObject({ step: 'done' });
        expect((await db.job.findUniqueOrThrow({ where: { id: data.id } })).attempts).toBe(2);
        for (const [table, n] of Object.entries(await countsOf(db, victim.organization_id))) {
          expect(n, table).toBe(table === 'organization_tombstones' ? 1 : 0);
        }
        expect(await countsOf(db, survivor)).toEqual(before);
        await stop(proc);
      } finally {
        await db.$disconnect();
        await database.drop();
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
    scaled(120_000),
  );
});

async function countsOf(db: ReturnType<typeof createDb>, organizationId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of organizationTables()) {
    const [row] = await queryRows(db, statement(`SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1`, COUNT), [organizationId]);
    counts[table] = row!.n;
  }
  return counts;
}
