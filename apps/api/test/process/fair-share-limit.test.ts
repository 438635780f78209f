// FairShareLimit on its own: slots per process and per organization, and the wait's deadline. (The
// limit on real queries, through the server and PostgreSQL, is in analytics-query.test.ts.)
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { httpErrorOf, Timeout } from '../../src/lib/errors.js';
import { FairShareLimit } from '../../src/lib/fair-share-limit.js';
import { until } from '../fixtures.js';

/** A query that runs until its release() is called, recording that it started. */
function heldQuery(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<string>((resolve) => (release = () => resolve(name)));
  return {
    run: () => {
      started.push(name);
      return done;
    },
    release: () => release(),
  };
}

describe('FairShareLimit', () => {
  it('runs at most half the slots (rounded up) for one organization, and lets another take the rest', async () => {
    const limit = new FairShareLimit(4);
    const started: string[] = [];
    const queries = ['a1', 'a2', 'a3', 'b1', 'b2', 'b3'].map((name) => ({ name, ...heldQuery(started, name) }));
    const answers = queries.map((q) => limit.run(q.name[0]!, 60_000, q.run));
    await until(() => started.length === 4);
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(limit.state).toEqual({ running: 4, waiting: 2 });
    queries[0]!.release(); // a1 done: a3 takes its organization's slot back
    await until(() => started.length === 5);
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2', 'a3']);
    expect(limit.state).toEqual({ running: 4, waiting: 1 });
    for (const q of queries) q.release();
    expect(await Promise.all(answers)).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
  });

  it('answers 408 instead of running a query whose slot came after its wait, and frees the slot', async () => {
    const limit = new FairShareLimit(2); // one slot per organization
    const started: string[] = [];
    const first = heldQuery(started, 'first');
    const late = heldQuery(started, 'late');
    const firstAnswer = limit.run('org', 60_000, first.run);
    const lateAnswer = limit.run('org', 10, late.run);
    const lateError = lateAnswer.catch((error: unknown) => error);
    const queuedAt = performance.now();
    await until(() => performance.now() - queuedAt > 10); // past the late one's 10 ms
    first.release();
    expect(await firstAnswer).toBe('first');
    expect(await lateError).toBeInstanceOf(Timeout);
    expect(httpErrorOf(await lateError).status).toBe(408);
    expect(started).toEqual(['first']);
    // The slot is free again.
    const next = heldQuery(started, 'next');
    const nextAnswer = limit.run('org', 60_000, next.run);
    await until(() => started.includes('next'));
    next.release();
    expect(await nextAnswer).toBe('next');
  });

  it('does not run a query whose client has gone by its turn, and gives the slot to the next', async () => {
    const limit = new FairShareLimit(2); // one slot per organization
    const started: string[] = [];
    const first = heldQuery(started, 'first');
    let gone = false;
    const firstAnswer = limit.run('org', 60_000, first.run);
    const leftError = limit.run('org', 60_000, heldQuery(started, 'left').run, () => gone).catch((error: unknown) => error);
    const next = heldQuery(started, 'next');
    const nextAnswer = limit.run('org', 60_000, next.run, () => false);
    await until(() => started.length === 1 && limit.state.waiting === 2);
    gone = true;
    first.release();
    expect(await firstAnswer).toBe('first');
    expect(await leftError).toBeInstanceOf(Timeout);
    await until(() => started.length === 2);
    expect(started).toEqual(['first', 'next']);
    expect(limit.state).toEqual({ running: 1, waiting: 0 });
    next.release();
    expect(await nextAnswer).toBe('next');
  });

  it('frees the slot when a query fails', async () => {
    const limit = new FairShareLimit(2);
    await expect(limit.run('org', 60_000, () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await limit.run('org', 60_000, () => Promise.resolve('answered'))).toBe('answered');
  });
});

describe('ANALYTICS_CONCURRENCY', () => {
  it('is as many as the cores by default, from 2 to 4 (fewer with a smaller pool), and refused unless below DATABASE_POOL_MAX (analytics never holds every pooled connection)', () => {
    expect(loadConfig({}, 1).analyticsConcurrency).toBe(2);
    expect(loadConfig({}, 2).analyticsConcurrency).toBe(2);
    expect(loadConfig({}, 3).analyticsConcurrency).toBe(3);
    expect(loadConfig({}, 64).analyticsConcurrency).toBe(4);
    expect(loadConfig({}).analyticsConcurrency).toBe(Math.min(4, Math.max(2, os.availableParallelism())));
    expect(loadConfig({ ANALYTICS_CONCURRENCY: '19' }).analyticsConcurrency).toBe(19);
    expect(() => loadConfig({ ANALYTICS_CONCURRENCY: '20' })).toThrow(/ANALYTICS_CONCURRENCY=20: must be less than DATABASE_POOL_MAX \(20\)/);
    expect(() => loadConfig({ ANALYTICS_CONCURRENCY: '4', DATABASE_POOL_MAX: '4' })).toThrow(/ANALYTICS_CONCURRENCY/);
    // Unset with a smaller pool: one less than the pool, and 1 with a pool of one.
    expect(loadConfig({ DATABASE_POOL_MAX: '3' }, 64).analyticsConcurrency).toBe(2);
    expect(loadConfig({ DATABASE_POOL_MAX: '2' }, 1).analyticsConcurrency).toBe(1);
    expect(loadConfig({ DATABASE_POOL_MAX: '1' }).analyticsConcurrency).toBe(1);
    expect(loadConfig({ DATABASE_POOL_MAX: '1', ANALYTICS_CONCURRENCY: '1' }).analyticsConcurrency).toBe(1);
    expect(() => loadConfig({ ANALYTICS_CONCURRENCY: '0' })).toThrow(/ANALYTICS_CONCURRENCY/);
  });

  it('gives GET /activity as many slots as ANALYTICS_CONCURRENCY (4 when unset, whatever the cores), unless the two kinds together would hold every pooled connection (then what is left but one, at least 1)', () => {
    expect(loadConfig({}, 64).activityConcurrency).toBe(4); // 4 + 4 of 20
    expect(loadConfig({}, 2).activityConcurrency).toBe(4); // 2 + 4 of 20: not the cores
    expect(loadConfig({ DATABASE_POOL_MAX: '5' }, 2).activityConcurrency).toBe(2); // 2 + 2 of 5
    expect(loadConfig({ ANALYTICS_CONCURRENCY: '2', DATABASE_POOL_MAX: '5' }).activityConcurrency).toBe(2);
    expect(loadConfig({ ANALYTICS_CONCURRENCY: '12' }).activityConcurrency).toBe(7); // 12 + 7 of 20
    expect(loadConfig({ DATABASE_POOL_MAX: '5' }, 64).activityConcurrency).toBe(1); // 4 + 1 of 5
    expect(loadConfig({ DATABASE_POOL_MAX: '1' }).activityConcurrency).toBe(1);
  });
});
