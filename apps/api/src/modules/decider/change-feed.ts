// The change stream of the deciders' snapshot: every cache announcement this process hears
// (cache-events.ts: the database's notifications, so a write through any replica arrives here too)
// becomes an event with an id, kept in a bounded ring so that a decider that reconnects with the id
// it saw last is given what it missed, or told to reload when the ring no longer holds it (or when
// the id is another process's: a decider may reconnect to another replica, or to a restarted one).
// While the listening connection was down, announcements were lost: the feed then tells every
// decider to reload, as the server's own caches drop everything.
import { randomUUID } from 'node:crypto';

/** A change, as the deciders read it: what the announcement names, or that everything must be read again. */
export type DeciderChange =
  | { type: 'change'; topic: string; at: string }
  | { type: 'reload'; reason: 'missed' | 'unknown_position' | 'listener_reconnected'; at: string }
  | { type: 'heartbeat'; at: string; position: string };

interface Entry {
  seq: number;
  change: Extract<DeciderChange, { type: 'change' | 'reload' }>;
}

/** Where a subscriber is: the feed's own id (per process start) and the sequence number within it. */
export const positionOf = (feedId: string, seq: number) => `${feedId}:${seq}`;

export class ChangeFeed {
  /** Distinguishes this process's ids from another's (or an earlier start's), whose sequence numbers mean nothing here. */
  readonly id = randomUUID();
  readonly #ring: Entry[] = [];
  #seq = 0;
  readonly #waiting = new Set<() => void>();
  #closed = false;
  /**
   * Whether the cache announcements are being heard. While they are not, heartbeats stop: a
   * heartbeat tells a decider that it has missed nothing, which it could then not know, so its
   * maximum staleness runs out as if the stream were cut.
   */
  #listening = true;

  constructor(
    /** How many events are kept for subscribers that reconnect. */
    private readonly capacity: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  get position(): string {
    return positionOf(this.id, this.#seq);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** A cache announcement ("key:<hash>", "routing:<organization id>", "catalog", ...). */
  publish(topic: string): void {
    this.#push({ type: 'change', topic, at: this.now().toISOString() });
  }

  /** The cache announcements' connection is down (false) or up (true). */
  listening(up: boolean): void {
    this.#listening = up;
  }

  /** Announcements may have been lost: every subscriber reads its snapshot again. */
  reloadAll(): void {
    this.#push({ type: 'reload', reason: 'listener_reconnected', at: this.now().toISOString() });
  }

  #push(change: Entry['change']): void {
    if (this.#closed) return;
    this.#ring.push({ seq: ++this.#seq, change });
    if (this.#ring.length > this.capacity) this.#ring.splice(0, this.#ring.length - this.capacity);
    this.#wake();
  }

  #wake(): void {
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const wake of waiting) wake();
  }

  /** Ends every subscription (the server is closing: its streams must not hold its drain). */
  close(): void {
    this.#closed = true;
    this.#wake();
  }

  /**
   * The events after `from` (a position this feed gave, or null: from now on), as they come, with a
   * heartbeat (carrying the current position) whenever `heartbeatMs` pass without one; until the
   * feed closes or `signal` aborts. A position the feed cannot continue from starts with a reload.
   */
  async *subscribe(from: string | null, heartbeatMs: number, signal?: AbortSignal): AsyncGenerator<{ id: string | null; change: DeciderChange }> {
    let next = this.#seq + 1;
    if (from !== null) {
      const [feedId, seqText] = from.split(':');
      const seq = Number(seqText);
      const oldest = this.#ring[0]?.seq ?? this.#seq + 1;
      if (feedId !== this.id || !Number.isInteger(seq) || seq > this.#seq) {
        yield { id: this.position, change: { type: 'reload', reason: 'unknown_position', at: this.now().toISOString() } };
      } else if (seq + 1 < oldest) {
        yield { id: this.position, change: { type: 'reload', reason: 'missed', at: this.now().toISOString() } };
      } else {
        next = seq + 1;
      }
    }
    while (!this.#closed && !signal?.aborted) {
      const oldest = this.#ring[0]?.seq ?? this.#seq + 1;
      if (next < oldest) {
        // Fell behind the ring while it was being written to (a slow reader).
        next = this.#seq + 1;
        yield { id: this.position, change: { type: 'reload', reason: 'missed', at: this.now().toISOString() } };
        continue;
      }
      if (next <= this.#seq) {
        const entry = this.#ring[next - oldest]!;
        next++;
        yield { id: positionOf(this.id, entry.seq), change: entry.change };
        continue;
      }
      const woken = await this.#wait(heartbeatMs, signal);
      if (!woken && !this.#closed && !signal?.aborted && this.#listening) {
        yield { id: null, change: { type: 'heartbeat', at: this.now().toISOString(), position: this.position } };
      }
    }
  }

  /** Until an event is pushed (true), or `ms` pass, or the signal aborts (false). */
  #wait(ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        this.#waiting.delete(wake);
        signal?.removeEventListener('abort', aborted);
        resolve(woken);
      };
      const wake = () => done(true);
      const aborted = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      this.#waiting.add(wake);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }
}
