// TtlCache: the mechanism behind KeyCache and MemberOrderCache (their TTL and forget() are tested
// through the API in key.test.ts and organization-members.test.ts).
import { describe, expect, it } from 'vitest';
import { TtlCache } from '../../src/lib/cache.js';
import { until } from '../fixtures.js';

function counter() {
  const reads: string[] = [];
  const read =
    (key: string, value: unknown = key) =>
    () => {
      reads.push(key);
      return Promise.resolve(value);
    };
  return { reads, read };
}

describe('TtlCache', () => {
  it('shares one read between concurrent misses and reuses the value until the TTL', async () => {
    const cache = new TtlCache<string, unknown>(60_000, 10);
    const { reads, read } = counter();
    expect(await Promise.all([cache.get('a', read('a')), cache.get('a', read('a'))])).toEqual(['a', 'a']);
    expect(await cache.get('a', read('a'))).toBe('a');
    expect(reads).toEqual(['a']);
    cache.delete('a');
    await cache.get('a', read('a'));
    expect(reads).toEqual(['a', 'a']);
  });

  it('reads again after the TTL, and every time with TTL 0', async () => {
    const short = new TtlCache<string, unknown>(20, 10);
    const none = new TtlCache<string, unknown>(0, 10);
    const { reads, read } = counter();
    await short.get('a', read('a'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    await short.get('a', read('a'));
    await none.get('b', read('b'));
    await none.get('b', read('b'));
    expect(reads).toEqual(['a', 'a', 'b', 'b']);
  });

  it('keeps neither a failed read nor a value that keep() refuses', async () => {
    const cache = new TtlCache<string, unknown>(60_000, 10, (value) => value !== null);
    const { reads, read } = counter();
    const failing = () => {
      reads.push('x');
      return Promise.reject(new Error('down'));
    };
    await expect(cache.get('x', failing)).rejects.toThrow('down');
    await cache.get('x', read('x'));
    await cache.get('n', read('n', null));
    await cache.get('n', read('n', null));
    expect(reads).toEqual(['x', 'x', 'n', 'n']);
  });

  it('with refreshAheadMs, reads a value used near its end again in the background: no caller waits, and a key forgotten meanwhile keeps nothing', async () => {
    // Every use is within the last refreshAheadMs (= the TTL) of the value's time.
    const cache = new TtlCache<string, number>(60_000, 10, () => true, undefined, 60_000);
    const reads: number[] = [];
    let finish: () => void = () => undefined;
    const read = () => {
      const version = reads.length + 1;
      reads.push(version);
      return version === 1 ? Promise.resolve(version) : new Promise<number>((resolve) => (finish = () => resolve(version)));
    };
    expect(await cache.get('a', read)).toBe(1);
    // A hit: the value at once, and one read in the background (one at a time).
    expect(await cache.get('a', read)).toBe(1);
    expect(await cache.get('a', read)).toBe(1);
    expect(reads).toEqual([1, 2]);
    finish();
    await until(async () => (await cache.get('a', read)) === 2, { what: 'the refreshed value' });

    const forgetting = new TtlCache<string, string>(60_000, 10, () => true, undefined, 60_000);
    await forgetting.get('b', () => Promise.resolve('old'));
    let refreshed: (value: string) => void = () => undefined;
    expect(await forgetting.get('b', () => new Promise<string>((resolve) => (refreshed = resolve)))).toBe('old');
    forgetting.delete('b');
    refreshed('read before the change');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await forgetting.get('b', () => Promise.resolve('new'))).toBe('new');
  });

  it('with refreshAheadMs, a value that expires while its refresh is under way is answered by that refresh, not by a read of its own', async () => {
    const ttlMs = 40;
    const cache = new TtlCache<string, number>(ttlMs, 10, () => true, undefined, ttlMs);
    let reads = 0;
    let finish: () => void = () => undefined;
    const read = () => {
      const version = ++reads;
      return version === 1 ? Promise.resolve(version) : new Promise<number>((resolve) => (finish = () => resolve(version)));
    };
    expect(await cache.get('a', read)).toBe(1);
    // A hit starts the refresh; the read outlasts the value's time.
    expect(await cache.get('a', read)).toBe(1);
    const expired = performance.now() + ttlMs;
    await until(async () => performance.now() > expired, { what: 'the first value to expire' });
    const waiting = [cache.get('a', read), cache.get('a', read)];
    expect(reads).toBe(2);
    finish();
    expect(await Promise.all(waiting)).toEqual([2, 2]);

    // A refresh that fails is not shared once it has failed: the next caller reads for itself.
    const failing = new TtlCache<string, number>(ttlMs, 10, () => true, undefined, ttlMs);
    await failing.get('b', () => Promise.resolve(1));
    let fail: () => void = () => undefined;
    await failing.get('b', () => new Promise<number>((_, reject) => (fail = () => reject(new Error('down')))));
    const gone = performance.now() + ttlMs;
    await until(async () => performance.now() > gone, { what: 'the value to expire' });
    const shared = failing.get('b', () => Promise.resolve(3));
    fail();
    await expect(shared).rejects.toThrow('down');
    expect(await failing.get('b', () => Promise.resolve(3))).toBe(3);
  });

  it('when full, drops the oldest half of its entries', async () => {
    const cache = new TtlCache<string, unknown>(60_000, 4);
    const { reads, read } = counter();
    for (const key of ['a', 'b', 'c', 'd', 'e']) await cache.get(key, read(key));
    reads.length = 0;
    // Adding 'e' to a full cache dropped 'a' and 'b'; 'c', 'd' and 'e' are still held.
    for (const key of ['c', 'd', 'e', 'a']) await cache.get(key, read(key));
    expect(reads).toEqual(['a']);
  });
});
