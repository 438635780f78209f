// How many POST /analytics/query statements a process runs at once (ANALYTICS_CONCURRENCY), the
// others waiting in arrival order. Each one holds a pooled connection for its whole statement and
// its groups' histograms in memory until it has answered: unbounded, 32 concurrent large queries
// took the server past its memory budget (docs/decisions/0006-concurrency-slots-for-analytics-and-activity.md)
// and could hold every pooled connection, which the rest of the API shares. One organization gets
// at most half of the slots (rounded up), so that another organization's query never waits for all
// of one tenant's. GET /activity's statements have a limit of their own of this kind (config.ts
// activityConcurrency, activity.service.ts): their answers are as large, but a short statement
// should not wait for analytics queries of up to ANALYTICS_QUERY_TIMEOUT_MS.
import pLimit, { type LimitFunction } from 'p-limit';
import { Timeout } from './errors.js';

export class FairShareLimit {
  readonly #all: LimitFunction;
  readonly #perOrganization: number;
  /** Each organization's own limit, while it has queries running or waiting. */
  readonly #byOrganization = new Map<string, LimitFunction>();

  /** `what` names what waits, in the 408's message. */
  constructor(
    concurrency: number,
    private readonly what = 'analytics query',
  ) {
    this.#all = pLimit(concurrency);
    this.#perOrganization = Math.ceil(concurrency / 2);
  }

  /** Statements running (holding a slot), and those waiting for one, in this process. */
  get state(): { running: number; waiting: number } {
    let waiting = this.#all.pendingCount;
    for (const own of this.#byOrganization.values()) waiting += own.pendingCount;
    return { running: this.#all.activeCount, waiting };
  }

  /**
   * Runs `query` once the organization and the process each have a slot free. When the slot came
   * after `waitMs`, the query is not run: 408 (Timeout), as if it had run past its limit, and the
   * slot goes to the next. Nor is it run when its client has gone by then (`clientGone`): a tenant
   * that sends queries and hangs up does not keep the slots busy with answers nobody reads.
   */
  run<T>(organizationId: string, waitMs: number, query: () => Promise<T>, clientGone: () => boolean = () => false): Promise<T> {
    const deadline = performance.now() + waitMs;
    const whenFree = () => {
      // Nobody reads this answer; 408 keeps it out of the server errors the log reports.
      if (clientGone()) return Promise.reject(new Timeout(`the client left before the ${this.what} had its turn`));
      if (performance.now() > deadline) return Promise.reject(new Timeout(`${this.what} waited past ${waitMs} ms for its turn`));
      return query();
    };
    let own = this.#byOrganization.get(organizationId);
    if (!own) {
      own = pLimit(this.#perOrganization);
      this.#byOrganization.set(organizationId, own);
    }
    const limit = own;
    return limit(() => this.#all(whenFree)).finally(() => {
      if (limit.activeCount === 0 && limit.pendingCount === 0 && this.#byOrganization.get(organizationId) === limit) {
        this.#byOrganization.delete(organizationId);
      }
    });
  }
}
