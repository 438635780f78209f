// The server's one closing order (lib/resources.ts): what was opened last closes first, every close
// runs even when one before it fails, and closing twice closes once.
import { describe, expect, it } from 'vitest';
import { Resources } from '../../src/lib/resources.js';

describe('Resources', () => {
  it('closes last-opened first, each after the one before has settled', async () => {
    const resources = new Resources();
    const closed: string[] = [];
    const pool = resources.hold({ name: 'pool' }, async (r) => {
      await Promise.resolve();
      closed.push(r.name);
    });
    resources.defer(() => closed.push('drain'));
    resources.hold({ name: 'worker' }, async (r) => {
      // The later close has not started while this one is pending.
      await new Promise((resolve) => setImmediate(resolve));
      expect(closed).toEqual([]);
      closed.push(r.name);
    });
    expect(pool.name).toBe('pool');
    await resources.close();
    expect(closed).toEqual(['worker', 'drain', 'pool']);
  });

  it('runs every close when some fail, then rejects with the first failure', async () => {
    const resources = new Resources();
    const closed: string[] = [];
    resources.defer(() => closed.push('database'));
    resources.defer(() => {
      throw new Error('listener');
    });
    resources.defer(() => closed.push('jobs'));
    resources.defer(async () => {
      throw new Error('server');
    });
    await expect(resources.close()).rejects.toThrow('server');
    expect(closed).toEqual(['jobs', 'database']);
  });

  it('closes once, however often it is asked', async () => {
    const resources = new Resources();
    let closes = 0;
    resources.defer(() => {
      closes += 1;
    });
    const first = resources.close();
    expect(resources.close()).toBe(first);
    await first;
    await resources.close();
    expect(closes).toBe(1);
  });
});
