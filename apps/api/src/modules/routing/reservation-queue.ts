// Reservations of one organization are decided one after another under its reservation lock, so
// one organization's reservations a second are bounded by how long each holds the lock: its
// statement, its commit's flush, and the wait for the next backend to be scheduled once the lock
// is free. This queue takes the lock once for all the reservations of an organization that wait
// in this process: while one statement of the organization is under way, the reservations that
// arrive wait for it and then go together in one statement (routing_reserve_many()), decided in
// their order, each seeing the ones before it. Nothing waits for a timer: a reservation alone goes
// at once, in routing_reserve(), the statement the bench's database floor makes.
import type { TransactionRows } from '@switchyard/db';
import { type Reservation, reserveManyQuery, reserveQuery } from './routing-queries.js';

/** What routing_reserve() answers for one reservation: a row per check. */
export interface ReservationRow {
  reserved: boolean;
  granted: string;
  name: string | null;
  remaining: string | null;
}

interface Waiting {
  reservation: Reservation;
  resolve(rows: ReservationRow[]): void;
  reject(error: unknown): void;
}

/** How many reservations go in one statement at most: a long statement holds the lock for the others' replicas too. */
export const MAX_RESERVATIONS_PER_STATEMENT = 64;

export interface ReservationQueueOptions {
  /** Called after each statement with how many reservations it decided. */
  observe?: (size: number) => void;
  maxPerStatement?: number;
}

export class ReservationQueue {
  /** Per organization, the reservations waiting for its statement under way (present while one is). */
  readonly #waiting = new Map<string, Waiting[]>();
  readonly #observe: (size: number) => void;
  readonly #max: number;

  constructor(
    /** Makes a statement and answers its rows (the server: queryRows on its database). */
    private readonly run: TransactionRows,
    options: ReservationQueueOptions = {},
  ) {
    this.#observe = options.observe ?? (() => {});
    this.#max = options.maxPerStatement ?? MAX_RESERVATIONS_PER_STATEMENT;
  }

  /** Decides the reservation, alone or with others of its organization; answers its own rows. */
  reserve(reservation: Reservation): Promise<ReservationRow[]> {
    const organizationId = reservation.key.organization_id;
    return new Promise((resolve, reject) => {
      const queued = this.#waiting.get(organizationId);
      if (queued) {
        queued.push({ reservation, resolve, reject });
        return;
      }
      this.#waiting.set(organizationId, []);
      void this.#drain(organizationId, [{ reservation, resolve, reject }]);
    });
  }

  async #drain(organizationId: string, first: Waiting[]): Promise<void> {
    let batch = first;
    while (batch.length > 0) {
      await this.#decide(batch);
      const queued = this.#waiting.get(organizationId) ?? [];
      batch = queued.splice(0, this.#max);
    }
    this.#waiting.delete(organizationId);
  }

  async #decide(batch: Waiting[]): Promise<void> {
    this.#observe(batch.length);
    if (batch.length === 1) {
      const [one] = batch as [Waiting];
      await this.#alone(one);
      return;
    }
    try {
      const many = reserveManyQuery(batch.map((w) => w.reservation) as [Reservation, ...Reservation[]]);
      const rows = await this.run(many.statement, many.values);
      const answers = batch.map((): ReservationRow[] => []);
      for (const { request, ...row } of rows) answers[request - 1]!.push(row);
      for (const [i, w] of batch.entries()) w.resolve(answers[i]!);
    } catch {
      // The statement failed as a whole (nothing of it committed): each one alone, so that each
      // gets its own answer or its own error.
      for (const w of batch) await this.#alone(w);
    }
  }

  async #alone(w: Waiting): Promise<void> {
    const { id, key, amount, checks, now, ttlMs } = w.reservation;
    const one = reserveQuery(id, key, amount, checks, now, ttlMs);
    try {
      w.resolve(await this.run(one.statement, one.values));
    } catch (error) {
      w.reject(error);
    }
  }
}
