// The job runner (jobs/runner.ts) on a real database, with two replicas: each queued job runs once
// while its replica lives, again when its replica died (its lease ended), never twice at once;
// outcomes are kept; a singleton key queues one job however many ask; a periodic job runs on one
// replica a round; stop() waits for what runs, and start() runs again.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobFailure } from '../../src/jobs/runner.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { testServer, until } from '../fixtures.js';
import { inProcessReplica, type InProcessReplica } from '../fixtures-replica.js';

let server: TestServer;
let replica: InProcessReplica;

beforeAll(async () => {
  server = await testServer();
  replica = await inProcessReplica(server, { env: { JOB_POLL_MS: '50' } });
});
afterAll(async () => {
  await replica?.close();
  await server?.close();
});

/** A handler that records which replica ran which job, and holds each job until `release()`. */
function recorder() {
  const runs: Array<{ id: string; on: string }> = [];
  let release: () => void = () => undefined;
  let gate = Promise.resolve();
  return {
    runs,
    hold() {
      gate = new Promise((resolve) => {
        release = resolve;
      });
    },
    release: () => release(),
    on: (name: string) => async (job: { id: string }) => {
      runs.push({ id: job.id, on: name });
      await gate;
      return { ran_on: name };
    },
  };
}

describe('queued jobs', () => {
  it('run once each, on one replica or the other, their results kept', async () => {
    const kind = `test.${randomUUID()}`;
    const seen = recorder();
    server.jobs.handle(kind, seen.on('server'));
    replica.jobs.handle(kind, seen.on('replica'));
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push((await server.jobs.enqueue(server.db, { kind, organizationId: server.organizationId })).id);
    await Promise.all([server.jobs.drain(), replica.jobs.drain()]);
    await until(async () => (await server.db.job.count({ where: { kind, status: 'succeeded' } })) === 20);
    expect(seen.runs.map((r) => r.id).sort()).toEqual([...ids].sort());
    const rows = await server.db.job.findMany({ where: { kind } });
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'succeeded', attempts: 1, error_message: null, locked_until: null });
      expect(row.started_at).not.toBeNull();
      expect(row.finished_at).not.toBeNull();
      expect(row.result).toEqual({ ran_on: seen.runs.find((r) => r.id === row.id)!.on });
    }
  });

  it('a job whose replica died is taken again once its lease ends, not before', async () => {
    const kind = `test.${randomUUID()}`;
    const seen = recorder();
    server.jobs.handle(kind, seen.on('server'));
    const job = await server.db.job.create({ data: { kind, organization_id: null } });
    // Another replica took it and died: running, its lease still on.
    await server.db.job.update({ where: { id: job.id }, data: { status: 'running', attempts: 1, locked_until: new Date(Date.now() + 60_000) } });
    await server.jobs.drain();
    expect(seen.runs).toEqual([]);
    await server.db.job.update({ where: { id: job.id }, data: { locked_until: new Date(Date.now() - 1_000) } });
    await server.jobs.drain();
    expect(seen.runs.map((r) => r.id)).toEqual([job.id]);
    expect(await server.db.job.findUniqueOrThrow({ where: { id: job.id } })).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('keeps a stable message for a failed job: its own for a JobFailure, "the job failed" (and a log line) otherwise', async () => {
    const kind = `test.${randomUUID()}`;
    let n = 0;
    server.jobs.handle(kind, async () => {
      n++;
      if (n === 1) throw new JobFailure('the directory is gone');
      throw new Error('secret internals');
    });
    const first = await server.jobs.enqueue(server.db, { kind, organizationId: null });
    await server.jobs.drain();
    const second = await server.jobs.enqueue(server.db, { kind, organizationId: null });
    await server.jobs.drain();
    expect(await server.db.job.findUniqueOrThrow({ where: { id: first.id } })).toMatchObject({ status: 'failed', error_message: 'the directory is gone' });
    expect(await server.db.job.findUniqueOrThrow({ where: { id: second.id } })).toMatchObject({ status: 'failed', error_message: 'the job failed' });
    expect(server.logs.some((line) => line.msg === 'job failed' && line.job_id === second.id)).toBe(true);
  });

  it('with a singleton key, concurrent enqueues on two replicas queue one job, and a new one once it ended', async () => {
    const kind = `test.${randomUUID()}`;
    const seen = recorder();
    seen.hold();
    server.jobs.handle(kind, seen.on('server'));
    const asks = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? replica : server).jobs.enqueue((i % 2 ? replica : server).db, {
          kind,
          organizationId: server.organizationId,
          singleton: `${kind} ${server.organizationId}`,
        }),
      ),
    );
    expect(new Set(asks.map((job) => job.id)).size).toBe(1);
    const draining = server.jobs.drain();
    await until(() => seen.runs.length === 1);
    // Running: still the same job.
    expect((await server.jobs.enqueue(server.db, { kind, organizationId: server.organizationId, singleton: `${kind} ${server.organizationId}` })).id).toBe(
      asks[0]!.id,
    );
    seen.release();
    await draining;
    const next = await server.jobs.enqueue(server.db, { kind, organizationId: server.organizationId, singleton: `${kind} ${server.organizationId}` });
    expect(next.id).not.toBe(asks[0]!.id);
    await server.jobs.drain();
  });

  it('stop() waits for the job in progress; start() takes up the queue again', async () => {
    const kind = `test.${randomUUID()}`;
    const seen = recorder();
    seen.hold();
    replica.jobs.handle(kind, seen.on('replica'));
    const job = await replica.jobs.enqueue(replica.db, { kind, organizationId: null });
    await until(() => seen.runs.length === 1);
    let stopped = false;
    const stopping = replica.jobs.stop().then(() => {
      stopped = true;
    });
    // While the held job runs, stop() has not returned, and the job is still running.
    await until(async () => (await server.db.job.findUniqueOrThrow({ where: { id: job.id } })).status === 'running');
    expect(stopped).toBe(false);
    seen.release();
    await stopping;
    expect((await server.db.job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe('succeeded');
    // Stopped: a queued job waits; started again, the replica's poll takes it.
    const waiting = await server.db.job.create({ data: { kind, organization_id: null } });
    replica.jobs.start();
    await until(async () => (await server.db.job.findUniqueOrThrow({ where: { id: waiting.id } })).status === 'succeeded');
  });
});

describe('periodic jobs', () => {
  it('run on one replica at a time: the other skips the round', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let runs = 0;
    const job = {
      name: 'test round',
      intervalMs: 0,
      lock: 0x7465_7374,
      run: async () => {
        runs++;
        await gate;
        return 'ran';
      },
    };
    const first = server.jobs.runPeriodic(job);
    await until(() => runs === 1);
    expect(await replica.jobs.runPeriodic(job)).toBeNull();
    release();
    expect(await first).toBe('ran');
    expect(runs).toBe(1);
    expect(await replica.jobs.runPeriodic(job)).toBe('ran');
  });
});
