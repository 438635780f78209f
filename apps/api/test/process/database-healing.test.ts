// Healing (decision 0032): the server survives its database.
// - The embedded PostgreSQL killed (SIGKILL of the postmaster) under load: requests answer 503 in the
//   envelope, the server starts PostgreSQL again by itself, answers again, and no acknowledged
//   recording is lost; one log line per change of state; the job runner runs again.
// - An external DATABASE_URL (a second cluster this test starts and stops): 503 meanwhile, /healthz
//   unhealthy once DATABASE_UNHEALTHY_AFTER_MS has passed, and both healthy again once it is back.
// - The embedded PostgreSQL that cannot be started again: after DATABASE_RESTART_ATTEMPTS the
//   server process exits non-zero.
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ensureDatabaseExists, startEmbeddedPostgres } from '@switchyard/db';
import { ErrorEnvelopeSchema } from '@switchyard/schema';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { VERSION } from '../../src/lib/version.js';
import { startTestServer, type TestServer } from '../../src/testing/test-server.js';
import { createKey, generationId } from '../fixtures-catalog.js';
import { start } from '../fixtures-process.js';
import { until } from '../fixtures.js';
import { trpc } from '../fixtures-trpc.js';
import { scaled } from '@switchyard/db/testing';

const options = { adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') };

/** The postmaster's pid and port, from <cluster>/postmaster.pid (lines 1 and 4). */
async function postmaster(clusterDir: string): Promise<{ pid: number; port: number }> {
  const lines = (await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n');
  return { pid: Number(lines[0]), port: Number(lines[3]) };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Log lines (pino objects) whose message starts with `prefix`. */
const linesOf = (server: TestServer, prefix: string) => server.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith(prefix));

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

describe('the embedded PostgreSQL killed under load', () => {
  it(
    'answers 503 meanwhile, starts PostgreSQL again by itself, answers again, and loses no acknowledged recording',
    async () => {
      const server = await startTestServer({ ...options, database: 'embedded', env: { JOB_POLL_MS: '200' } });
      closers.push(() => server.close());
      const { hash } = await createKey(server);
      const clusterDir = path.join(server.dataDir, 'postgres', 'cluster');
      const before = await postmaster(clusterDir);

      // Load: four writers record generations one after another; each 200 is an acknowledged write.
      const acknowledged: string[] = [];
      const answers: { status: number; at: number; body: unknown }[] = [];
      let killedAt = Infinity;
      let running = true;
      const writer = async () => {
        while (running) {
          const id = generationId();
          const { status, error } = await trpc(server, 'generations.record', { id, api_key_hash: hash, model: 'openai/gpt-4o', usage: 0.001 });
          answers.push({ status, at: performance.now(), body: error });
          if (status === 200) acknowledged.push(id);
        }
      };
      const writers = Array.from({ length: 4 }, writer);
      await until(() => acknowledged.length >= 40, { what: 'recordings before the kill' });
      const ackedBeforeKill = acknowledged.length;

      process.kill(before.pid, 'SIGKILL');
      killedAt = performance.now();
      await until(() => !alive(before.pid), { what: 'the postmaster gone' });

      // While it is gone: REST answers 503 in the spec's envelope.
      let rest: { status: number; body: unknown } | undefined;
      await until(
        async () => {
          const res = await server.request('/api/v1/key');
          rest = { status: res.status, body: await res.json() };
          return res.status === 503 || server.databaseHealth.up;
        },
        { what: 'a 503 while the database is gone' },
      );
      // The server may already be back (a fast restart): then the recordings' 503s show it below.
      if (rest?.status === 503) {
        const envelope = ErrorEnvelopeSchema.parse(rest.body);
        expect(envelope.error).toMatchObject({ code: 503, message: 'Service temporarily unavailable' });
      }

      // The first successful answer after the loss, with PostgreSQL started again by the server.
      await until(() => answers.some((a) => a.at > killedAt && a.status === 200) && server.databaseHealth.up, {
        what: 'a successful recording after the kill',
        timeoutMs: scaled(60_000),
      });
      const firstBack = answers.find((a) => a.at > killedAt && a.status === 200)!;
      running = false;
      await Promise.all(writers);
      const after = await postmaster(clusterDir);
      expect(after.pid).not.toBe(before.pid);
      expect(alive(after.pid)).toBe(true);
      expect(after.port).toBe(before.port);

      // Between the kill and the first success: 503s only (never a 500), tRPC's httpStatus alike. A
      // restart fast enough leaves none: requests that found no connection waited for the new one.
      const meanwhile = answers.filter((a) => a.at > killedAt && a.at < firstBack.at);
      for (const a of meanwhile) {
        expect(a.status).toBe(503);
        expect((a.body as { data: { httpStatus: number } }).data.httpStatus).toBe(503);
      }
      expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);

      // No acknowledged write lost: every recording answered 200, before or after the kill, is stored.
      expect(acknowledged.length).toBeGreaterThan(ackedBeforeKill);
      const stored = await server.db.generation.count({ where: { id: { in: acknowledged } } });
      expect(stored).toBe(acknowledged.length);

      // One log line per change of state, none per request.
      expect(linesOf(server, 'database lost')).toHaveLength(1);
      expect(linesOf(server, 'started PostgreSQL again').length).toBeGreaterThanOrEqual(1);
      expect(linesOf(server, 'database back')).toHaveLength(1);
      expect(linesOf(server, 'internal error')).toEqual([]);
      const warnings = server.logs.filter((line) => (line.level as number) >= 40);
      const attempts = linesOf(server, 'started PostgreSQL again').length + linesOf(server, 'could not start PostgreSQL again').length;
      expect(warnings.length, JSON.stringify(warnings.map((line) => line.msg))).toBe(1 + attempts);

      // The job runner runs again: a job queued now is taken and done.
      server.jobs.handle('test.after-recovery', async () => ({ done: true }));
      const job = await server.jobs.enqueue(server.db, { kind: 'test.after-recovery', organizationId: null });
      await until(async () => (await server.db.job.findUniqueOrThrow({ where: { id: job.id } })).status === 'succeeded', {
        what: 'the job queued after recovery to run',
      });
      // The healthz and readyz of a server that healed.
      expect((await server.request('/healthz', { key: null })).status).toBe(200);
      expect((await server.request('/readyz', { key: null })).status).toBe(200);
    },
    scaled(120_000),
  );
});

describe('an external DATABASE_URL that goes away', () => {
  it(
    'answers 503 meanwhile, turns /healthz unhealthy after DATABASE_UNHEALTHY_AFTER_MS, and heals when it is back',
    async () => {
      const clusterRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-external-pg-'));
      closers.push(() => fs.rm(clusterRoot, { recursive: true, force: true }));
      let external = await startEmbeddedPostgres({ dataDir: clusterRoot });
      closers.push(() => external.stop());
      await ensureDatabaseExists(external.url, 'switchyard');
      const url = external.urlFor('switchyard');
      const server = await startTestServer({
        ...options,
        database: { url, drop: async () => undefined },
        env: { DATABASE_UNHEALTHY_AFTER_MS: '1500', JOB_POLL_MS: '200' },
      });
      closers.push(() => server.close());
      expect(await (await server.request('/healthz', { key: null })).json()).toEqual({ status: 'ok', version: VERSION });

      await external.stop();
      // Every operation answers 503 in the envelope, REST and tRPC alike.
      await until(async () => (await server.request('/api/v1/key')).status === 503, { what: 'GET /api/v1/key to answer 503' });
      const res = await server.request('/api/v1/key');
      expect(res.status).toBe(503);
      expect(ErrorEnvelopeSchema.parse(await res.json()).error).toMatchObject({ code: 503, message: 'Service temporarily unavailable' });
      const call = await trpc(server, 'keys.current', undefined, { query: true });
      expect(call.status).toBe(503);
      expect(call.error?.data.httpStatus).toBe(503);
      expect((await server.request('/readyz', { key: null })).status).toBe(503);

      // /healthz: alive for a while (a short outage does not get the server restarted), then unhealthy.
      await until(async () => (await server.request('/healthz', { key: null })).status === 503, { what: '/healthz to turn 503' });
      const unhealthy = (await (await server.request('/healthz', { key: null })).json()) as Record<string, unknown>;
      expect(unhealthy).toMatchObject({ status: 'unavailable', database: 'down' });
      expect(Date.now() - Date.parse(unhealthy.database_down_since as string)).toBeGreaterThanOrEqual(1500);

      // Back, on the same port: the server reconnects by itself.
      external = await startEmbeddedPostgres({ dataDir: clusterRoot, port: external.port });
      await until(async () => (await server.request('/api/v1/key')).status === 200, { what: 'GET /api/v1/key to answer 200 again' });
      // The pool's new connection tells the server at once (or its next probe does).
      await until(async () => (await server.request('/healthz', { key: null })).status === 200 && server.databaseHealth.up, { what: '/healthz healthy again' });
      expect(await (await server.request('/healthz', { key: null })).json()).toEqual({ status: 'ok', version: VERSION });
      expect((await server.request('/readyz', { key: null })).status).toBe(200);

      expect(linesOf(server, 'database lost')).toHaveLength(1);
      expect(linesOf(server, 'database back')).toHaveLength(1);
      expect(linesOf(server, 'started PostgreSQL again')).toEqual([]);
      expect(linesOf(server, 'internal error')).toEqual([]);
    },
    scaled(120_000),
  );
});

describe('an embedded PostgreSQL that cannot be started again', () => {
  it(
    'gives up after DATABASE_RESTART_ATTEMPTS and exits non-zero',
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-giveup-'));
      closers.push(() => fs.rm(dataDir, { recursive: true, force: true }));
      const proc = await start({ DATA_DIR: dataDir, DATABASE_RESTART_ATTEMPTS: '2' });
      const { pid, port } = await postmaster(path.join(dataDir, 'postgres', 'cluster'));

      // The postmaster killed, and its port taken by another process: it cannot listen there again.
      process.kill(pid, 'SIGKILL');
      // (It cuts every connection at once, as a port with nothing PostgreSQL-like behind it would.)
      const squatter = net.createServer((socket) => socket.destroy());
      closers.push(() => new Promise((resolve) => squatter.close(resolve)));
      await until(
        () =>
          new Promise<boolean>((resolve) => {
            squatter.once('error', () => resolve(false));
            squatter.listen(port, '127.0.0.1', () => resolve(true));
          }),
        { what: `port ${port} free to take`, detail: proc.output },
      );
      // Requests tell the server the database is gone.
      await fetch(`${proc.url}/api/v1/key`, { headers: { authorization: 'Bearer sk-sy-v1-' + '0'.repeat(64) } }).catch(() => undefined);

      let code: number | null | undefined;
      void proc.exited.then((c) => (code = c));
      await until(() => code !== undefined, { what: 'the server to exit', timeoutMs: scaled(45_000), detail: proc.output });
      expect(code).toBe(1);
      const output = proc.output();
      expect(output).toContain('database lost');
      expect(output).toContain('could not start PostgreSQL again (attempt 1 of 2)');
      expect(output).toContain('could not start PostgreSQL again (attempt 2 of 2)');
      expect(output).toContain('giving up');
    },
    scaled(120_000),
  );
});
