// Prometheus metrics (prom-client), one registry per server: HTTP requests by route template,
// recording batches, the database pool, the in-memory caches and video downloads from providers,
// beside prom-client's process metrics and the build's info. Served on METRICS_PORT only (see
// server.ts), never on the public port. The list is in docs/metrics.md.
import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { VERSION } from './version.js';

/** What a cache reports: a lookup served from memory, or one that had to read. */
export interface CacheCounter {
  hit(): void;
  miss(): void;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

const PREFIX = 'switchyard_';

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time from a request to its answer, by route template (its _count is the number of requests)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly recordingBatchSize = new Histogram({
    name: `${PREFIX}recording_batch_size`,
    help: 'Generations written per recording batch (one SQL statement each)',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000],
    registers: [this.registry],
  });

  readonly reservationBatchSize = new Histogram({
    name: `${PREFIX}reservation_batch_size`,
    help: "Reservations decided per reservation statement (an organization's reservations waiting together go in one)",
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [this.registry],
  });

  readonly recordingCommitDuration = new Histogram({
    name: `${PREFIX}recording_commit_duration_seconds`,
    help: 'Time to write and commit one recording batch, by outcome (failed: the database refused it; its generations are then retried one by one)',
    labelNames: ['outcome'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly #cacheHits = new Counter({
    name: `${PREFIX}cache_hits_total`,
    help: 'Lookups served from memory, by cache',
    labelNames: ['cache'] as const,
    registers: [this.registry],
  });

  readonly #cacheMisses = new Counter({
    name: `${PREFIX}cache_misses_total`,
    help: 'Lookups that read the database, by cache',
    labelNames: ['cache'] as const,
    registers: [this.registry],
  });

  readonly upstreamVideoBytes = new Counter({
    name: `${PREFIX}upstream_video_bytes_total`,
    help: "Bytes of video received from providers' URLs (and passed on to clients)",
    registers: [this.registry],
  });

  readonly upstreamVideoFailures = new Counter({
    name: `${PREFIX}upstream_video_failures_total`,
    help: 'Video downloads from providers that failed: before_answer (the client got 502/524), or mid_stream (the connection was cut)',
    labelNames: ['stage'] as const,
    registers: [this.registry],
  });

  /** The concurrency limits that report their slots, by kind. */
  readonly #slots = new Map<string, () => { running: number; waiting: number }>();

  readonly routingDecisions = new Counter({
    name: `${PREFIX}routing_decisions_total`,
    help: 'routing.authorize decisions, by outcome (allowed, refused) and code (the refusal code; "ok" when allowed)',
    labelNames: ['outcome', 'code'] as const,
    registers: [this.registry],
  });

  readonly limiterRejections = new Counter({
    name: `${PREFIX}limiter_rejections_total`,
    help: 'Requests a limit of the limiter (limits/) refused, by limit name (free_model_minute: the free-model quota per minute)',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly counterStoreUp = new Gauge({
    name: `${PREFIX}counter_store_up`,
    help: "1 while the limiter's counter store (COUNTER_STORE_URL's Redis, or the server's database) answers, 0 while it cannot be reached; the limits' callers then do as COUNTER_STORE_FAILURE_* says",
    labelNames: ['store'] as const,
    registers: [this.registry],
  });

  readonly refusalEvents = new Counter({
    name: `${PREFIX}refusal_events_total`,
    help: 'Routing refusals as events (the events outbox), by outcome: written (a row this process inserted), deduplicated (folded into an event of the same key, code and minute, in memory or by the unique cause), dropped (the pending map was full, or the organization is gone)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly refusalEventFlushes = new Counter({
    name: `${PREFIX}refusal_event_flushes_total`,
    help: 'Batched writes of refusal events to the events outbox, by result (ok, failed: retried at the next tick)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly reservationsExpired = new Counter({
    name: `${PREFIX}reservations_expired_total`,
    help: 'Routing reservations deleted by the sweep because neither a recording nor routing.release came in time',
    registers: [this.registry],
  });

  /** The database pool's connections now. */
  readonly #pool: () => PoolStats;

  constructor(pool: () => PoolStats | undefined) {
    this.#pool = () => pool() ?? { total: 0, idle: 0, waiting: 0 };
    // prom-client's process and Node.js metrics under their usual names (process_cpu_seconds_total,
    // nodejs_heap_size_total_bytes, ...), which stock dashboards look for: no project prefix.
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: `${PREFIX}build_info`,
      help: 'Always 1; the labels name the running build: the server version and the Node.js version',
      labelNames: ['version', 'node_version'] as const,
      registers: [this.registry],
    }).set({ version: VERSION, node_version: process.version }, 1);
    const stats = this.#pool;
    new Gauge({
      name: `${PREFIX}db_pool_connections`,
      help: 'Database connections of the pool, by state (in_use: lent to a query or transaction)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const { total, idle } = stats();
        this.set({ state: 'in_use' }, total - idle);
        this.set({ state: 'idle' }, idle);
      },
    });
    const slots = this.#slots;
    new Gauge({
      name: `${PREFIX}query_slots`,
      help: 'Statements of a limited kind (analytics, activity) running in a slot, or waiting in the server for one',
      labelNames: ['kind', 'state'] as const,
      registers: [this.registry],
      collect() {
        for (const [kind, state] of slots) {
          const { running, waiting } = state();
          this.set({ kind, state: 'running' }, running);
          this.set({ kind, state: 'waiting' }, waiting);
        }
      },
    });
    new Gauge({
      name: `${PREFIX}db_pool_waiting`,
      help: 'Queries waiting for a database connection',
      registers: [this.registry],
      collect() {
        this.set(stats().waiting);
      },
    });
  }

  /**
   * One database read shared by the gauges of a scrape (a failed or skipped read answers null: the
   * gauges keep their last values), skipped while `busy` says the pool should not be asked.
   */
  #readPerScrape<T>(read: () => Promise<T>, busy: (pool: PoolStats) => boolean): () => Promise<T | null> {
    let pending: Promise<T | null> | undefined;
    const pool = this.#pool;
    return () => {
      if (pending) return pending;
      if (busy(pool())) return Promise.resolve(null);
      pending = read()
        .catch(() => null)
        .finally(() => {
          pending = undefined;
        });
      return pending;
    };
  }

  /**
   * Reports the open routing reservations, read from the database at each scrape: every replica
   * reports the same deployment-wide figures (aggregate with max, not sum). A scrape never queues
   * for a connection: while the pool has none idle (and has opened any), the gauges keep their last
   * values.
   */
  reservations(read: () => Promise<{ count: number; amount: number }>): void {
    // One read per scrape, shared by both gauges; a failed or skipped read keeps the last values.
    const once = this.#readPerScrape(read, ({ total, idle, waiting }) => total > 0 && (idle === 0 || waiting > 0));
    new Gauge({
      name: `${PREFIX}reservations_open`,
      help: 'Routing reservations holding an amount (not settled, released or expired), deployment-wide; the same on every replica',
      registers: [this.registry],
      async collect() {
        const open = await once();
        if (open) this.set(open.count);
      },
    });
    new Gauge({
      name: `${PREFIX}reservations_open_usd`,
      help: 'USD held by open routing reservations, deployment-wide; the same on every replica',
      registers: [this.registry],
      async collect() {
        const open = await once();
        if (open) this.set(open.amount);
      },
    });
  }

  /** Delivery attempts of events to destinations (decision 0025), by result. */
  readonly deliveries = new Counter({
    name: `${PREFIX}event_deliveries_total`,
    help: 'Delivery attempts of events to destinations, by result: delivered (the receiver answered 2xx), failed (retried later), dead (the last retry failed: given up)',
    labelNames: ['result'] as const,
    registers: [],
  });

  /** Destinations turned off by delivery (every attempt failing for 24 hours). */
  readonly destinationsDisabled = new Counter({
    name: `${PREFIX}destinations_disabled_total`,
    help: 'Destinations that delivery turned off (enabled: false) because every attempt failed for 24 hours',
    registers: [],
  });

  /**
   * Reports the events outbox, read from the database at each scrape (deployment-wide, the same on
   * every replica): events not yet dispatched, deliveries not yet done (pending or failing, to enabled
   * destinations), and the age of the oldest of either. Skipped while queries already wait for a
   * connection (the gauges keep their last values).
   */
  outbox(read: () => Promise<{ undispatched: number; undelivered: number; oldestAt: Date | null }>, now: () => Date): void {
    for (const counter of [this.deliveries, this.destinationsDisabled]) this.registry.registerMetric(counter);
    for (const result of ['delivered', 'failed', 'dead']) this.deliveries.inc({ result }, 0);
    const once = this.#readPerScrape(read, ({ total, idle, waiting }) => total > 0 && idle === 0 && waiting > 0);
    new Gauge({
      name: `${PREFIX}outbox_backlog`,
      help: 'The events outbox not yet done, deployment-wide, by stage: dispatch (events not yet turned into deliveries), delivery (deliveries pending or failing, to enabled destinations)',
      labelNames: ['stage'] as const,
      registers: [this.registry],
      async collect() {
        const state = await once();
        if (!state) return;
        this.set({ stage: 'dispatch' }, state.undispatched);
        this.set({ stage: 'delivery' }, state.undelivered);
      },
    });
    new Gauge({
      name: `${PREFIX}outbox_oldest_age_seconds`,
      help: 'Age of the oldest event not yet dispatched or delivered (0 when none), deployment-wide',
      registers: [this.registry],
      async collect() {
        const state = await once();
        if (state) this.set(state.oldestAt ? Math.max(0, (now().getTime() - state.oldestAt.getTime()) / 1000) : 0);
      },
    });
  }

  /** Reports a concurrency limit's slots (analytics queries, GET /activity statements) as `kind`. */
  slots(kind: string, state: () => { running: number; waiting: number }): void {
    this.#slots.set(kind, state);
  }

  /** The counter a named cache reports to. */
  cache(name: string): CacheCounter {
    const hits = this.#cacheHits.labels(name);
    const misses = this.#cacheMisses.labels(name);
    // Both series exist from the start, at 0.
    hits.inc(0);
    misses.inc(0);
    return { hit: () => hits.inc(), miss: () => misses.inc() };
  }
}

/** The metrics endpoint's own server: GET /metrics in Prometheus' text format, nothing else. */
export function metricsServer(metrics: Metrics): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at GET /metrics\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (error: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${error.message}\n`),
    );
  });
}
