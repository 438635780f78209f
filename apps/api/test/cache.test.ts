// TtlCache: the mechanism behind KeyCache and MemberOrderCache (their TTL and forget() are tested
// through the API in key.test.ts and organization-members.test.ts).
import { describe, expect, it } from 'vitest';
import { TtlCache } from '../src/cache.js';

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
