// The deciders' change feed on its own: events in order with ids, what a reconnecting subscriber
// missed, a reload when it cannot be given (another process's id, or older than the ring), no
// heartbeat while the announcements are not heard, and the end of every subscription at close.
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../src/modules/decider/change-feed.js';

type Item = Awaited<ReturnType<AsyncGenerator<{ id: string | null; change: { type: string } }>['next']>>;

const feeds: ChangeFeed[] = [];
afterEach(() => {
  for (const feed of feeds.splice(0)) feed.close();
});

function feed(capacity = 100): ChangeFeed {
  const made = new ChangeFeed(capacity);
  feeds.push(made);
  return made;
}

/** The subscription's next item. */
const next = (items: AsyncGenerator<{ id: string | null; change: { type: string } }>): Promise<Item> => items.next();

describe('the change feed', () => {
  it('gives each change in order with its id, and a reconnecting subscriber what it missed', async () => {
    const changes = feed();
    const first = changes.subscribe(null, 60_000);
    const pending = next(first);
    changes.publish('key:a');
    changes.publish('routing:org_1');
    const one = (await pending).value!;
    expect(one.change).toMatchObject({ type: 'change', topic: 'key:a' });
    const two = (await next(first)).value!;
    expect(two.change).toMatchObject({ type: 'change', topic: 'routing:org_1' });
    await first.return(undefined);

    changes.publish('catalog');
    const again = changes.subscribe(one.id, 60_000);
    expect((await next(again)).value).toMatchObject({ id: two.id, change: { topic: 'routing:org_1' } });
    expect((await next(again)).value).toMatchObject({ change: { topic: 'catalog' } });
    await again.return(undefined);
  });

  it('tells a subscriber to reload when it cannot continue from its id', async () => {
    const changes = feed(2);
    const position = changes.position;
    for (const topic of ['key:a', 'key:b', 'key:c']) changes.publish(topic);
    // Older than the ring.
    const old = changes.subscribe(position, 60_000);
    expect((await next(old)).value).toMatchObject({ change: { type: 'reload', reason: 'missed' } });
    await old.return(undefined);
    // Another process's id (another replica, or this one before a restart).
    const foreign = changes.subscribe(`${feed().id}:1`, 60_000);
    expect((await next(foreign)).value).toMatchObject({ change: { type: 'reload', reason: 'unknown_position' } });
    await foreign.return(undefined);
    // A reconnected listener: every subscriber reloads.
    const live = changes.subscribe(changes.position, 60_000);
    const pending = next(live);
    changes.reloadAll();
    expect((await pending).value).toMatchObject({ change: { type: 'reload', reason: 'listener_reconnected' } });
    await live.return(undefined);
  });

  it('sends heartbeats while it hears the announcements, none while it does not', async () => {
    const changes = feed();
    const items = changes.subscribe(null, 20);
    expect((await next(items)).value).toMatchObject({ id: null, change: { type: 'heartbeat', position: changes.position } });
    changes.listening(false);
    const pending = next(items);
    // Silence: what comes next is the change, not a heartbeat, however long it takes.
    let settled = false;
    void pending.then(() => {
      settled = true;
    });
    // A listening feed's heartbeats are the clock: three of its periods pass without one here.
    const clock = feed().subscribe(null, 20);
    for (let i = 0; i < 3; i++) expect((await next(clock)).value).toMatchObject({ change: { type: 'heartbeat' } });
    await clock.return(undefined);
    expect(settled).toBe(false);
    changes.publish('key:a');
    expect((await pending).value).toMatchObject({ change: { type: 'change', topic: 'key:a' } });
    await items.return(undefined);
  });

  it('ends every subscription when it closes', async () => {
    const changes = feed();
    const items = changes.subscribe(null, 60_000);
    const pending = next(items);
    changes.close();
    expect(await pending).toEqual({ done: true, value: undefined });
  });
});
