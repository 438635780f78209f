// Delivery of the events outbox to destinations (issue 40; decision 0025, docs/events.md#delivery).
//
// - Dispatch (a periodic job of the runner, one replica a round under DISPATCH_LOCK): each event not
//   yet dispatched becomes one event_deliveries row per destination that receives it, and is marked
//   dispatched, in one statement. Alerts (ALERT_TYPES) go to the enabled, live `webhook`
//   destinations of the event's workspace (an organization-wide event: the organization's default
//   workspace), bypassing sampling and filter rules. Generation traces (generation.recorded) go to
//   the `otel-collector` and `s3` destinations that take them (generation-traces.ts: sampling, key
//   filter, regions, filter rules). Other event types (routing.refused) get no delivery row.
// - Workers (DeliveryWorker, on every replica): take due deliveries with FOR UPDATE SKIP LOCKED and
//   hold each under a lease (locked_until), so one worker at a time attempts a delivery; one whose
//   worker died is taken again when the lease ends (at least once). At most `concurrency` attempts
//   run at once per replica, each with its own deadline: a receiver that hangs holds one slot, never
//   the others, and nothing here runs on a request or the recording path.
// - An attempt is an HTTP request through the shared upstream policy (address policy, no redirects,
//   a deadline): to a webhook, signed per Standard Webhooks with the destination's secret (the
//   `standardwebhooks` package), `webhook-id` = the event id on every attempt; a trace as an OTLP
//   span or an S3 object (trace-senders.ts), built at the attempt from the generation's row, with
//   ids derived from the event id. A trace whose generation is gone is dead at once.
// - A failed attempt is retried after RETRY_DELAYS_S (about 27.6 hours in all); the last failure makes
//   the delivery dead. A destination whose attempts have all failed for DISABLE_AFTER_MS is turned
//   off (enabled: false, disabled_reason).
// - Time is deps.now(): tests drive the clock and never wait for a retry.
import { queryRows, statement, type Db, type ObservabilityDestination as DestinationRow } from '@switchyard/db';
import { DELIVERED_DESTINATION_TYPES, type DestinationStatus, type DestinationType } from '@switchyard/schema';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import type { Actor } from '../../access/callers.js';
import { findOwned } from '../../access/workspaces.js';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../../metrics.js';
import { RefusedUpstream, upstreamFetch, type UpstreamPolicy } from '../../upstream/index.js';
import type { SecretBox } from '../byok/secret-box.js';
import { openSigningSecret, plaintextConfig } from '../destinations/destinations.service.js';
import { isConnectionLost } from '../../db-errors.js';
import { dispatchTraceEvents, GENERATION_RECORDED, traceOf, traceSourceOf } from './generation-traces.js';
import { putTraceObject, SendFailed, sendOtlpTrace, type S3DestinationConfig } from './trace-senders.js';

/** Alerts: delivered to the webhook destinations of their workspace, with no sampling or filter. */
export const ALERT_TYPES: readonly string[] = ['limit.threshold_crossed', 'credits.low', 'key.expiring'];

/**
 * Seconds to wait after each failed attempt (after the 1st, the 2nd, ...): the schedule Standard
 * Webhooks' reference implementation uses. 8 attempts over about 27.6 hours; the 8th failing is final.
 */
export const RETRY_DELAYS_S: readonly number[] = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1;

/** A destination whose every attempt has failed for this long is turned off. */
export const DISABLE_AFTER_MS = 24 * 3_600_000;

/** The advisory lock of the dispatch job (any constant no other lock of this database uses). */
export const DISPATCH_LOCK = 0x4556_4453; // "EVDS"

/** Events dispatched per statement. */
const DISPATCH_BATCH = 500;

const DISPATCH = statement(
  `WITH batch AS (
     SELECT e.id, e.organization_id, e.workspace_id, e.type
       FROM events e
      WHERE e.dispatched_at IS NULL AND e.type <> '${GENERATION_RECORDED}'
      ORDER BY e.created_at
      LIMIT $2
      FOR UPDATE SKIP LOCKED
   ), made AS (
     INSERT INTO event_deliveries (id, organization_id, event_id, destination_id, next_attempt_at)
     SELECT gen_random_uuid(), b.organization_id, b.id, d.id, $1::timestamptz
       FROM batch b
       JOIN organizations o ON o.id = b.organization_id
       JOIN observability_destinations d
         ON d.organization_id = b.organization_id
        AND d.workspace_id = coalesce(b.workspace_id, o.default_workspace_id)
        AND d.type = 'webhook' AND d.enabled AND d.deleted_at IS NULL
      WHERE b.type = ANY($3::text[])
     ON CONFLICT (event_id, destination_id) DO NOTHING
     RETURNING 1
   ), marked AS (
     UPDATE events SET dispatched_at = $1::timestamptz WHERE id IN (SELECT id FROM batch) RETURNING 1
   )
   SELECT (SELECT count(*) FROM marked)::int AS events, (SELECT count(*) FROM made)::int AS deliveries`,
  z.object({ events: z.number(), deliveries: z.number() }),
);

/** Takes up to $3 due deliveries to live, enabled destinations, leased until $2. */
const TAKE = statement(
  `UPDATE event_deliveries ed
      SET locked_until = $2::timestamptz, attempts = ed.attempts + 1
    WHERE ed.id IN (
      SELECT x.id FROM event_deliveries x
        JOIN observability_destinations d ON d.id = x.destination_id
       WHERE x.status IN ('pending', 'failing')
         AND x.next_attempt_at <= $1::timestamptz
         AND (x.locked_until IS NULL OR x.locked_until <= $1::timestamptz)
         AND d.enabled AND d.deleted_at IS NULL
       ORDER BY x.next_attempt_at
       LIMIT $3
       FOR UPDATE OF x SKIP LOCKED)
    RETURNING ed.id::text AS id, ed.event_id::text AS event_id, ed.destination_id::text AS destination_id, ed.attempts`,
  z.object({ id: z.string(), event_id: z.string(), destination_id: z.string(), attempts: z.number() }),
);

const OUTBOX = statement(
  `SELECT (SELECT count(*) FROM events WHERE dispatched_at IS NULL)::int AS undispatched,
          (SELECT count(*) FROM event_deliveries x JOIN observability_destinations d ON d.id = x.destination_id
            WHERE x.status IN ('pending', 'failing') AND d.enabled AND d.deleted_at IS NULL)::int AS undelivered,
          least((SELECT min(created_at) FROM events WHERE dispatched_at IS NULL),
                (SELECT min(x.created_at) FROM event_deliveries x JOIN observability_destinations d ON d.id = x.destination_id
                  WHERE x.status IN ('pending', 'failing') AND d.enabled AND d.deleted_at IS NULL)) AS oldest_at`,
  z.object({ undispatched: z.number(), undelivered: z.number(), oldest_at: z.date().nullable() }),
);

/** The outbox's figures for the metrics (deployment-wide). */
export async function outboxState(db: Db): Promise<{ undispatched: number; undelivered: number; oldestAt: Date | null }> {
  const [row] = await queryRows(db, OUTBOX, []);
  return { undispatched: row!.undispatched, undelivered: row!.undelivered, oldestAt: row!.oldest_at };
}

/** Dispatches every event not yet dispatched, alerts then traces; answers how many deliveries were made. */
export async function dispatchEvents(db: Db, now: Date): Promise<{ events: number; deliveries: number }> {
  const total = { events: 0, deliveries: 0 };
  for (;;) {
    const [row] = await queryRows(db, DISPATCH, [now, DISPATCH_BATCH, ALERT_TYPES]);
    total.events += row!.events;
    total.deliveries += row!.deliveries;
    if (row!.events < DISPATCH_BATCH) break;
  }
  const traces = await dispatchTraceEvents(db, now);
  return { events: total.events + traces.events, deliveries: total.deliveries + traces.deliveries };
}

export interface DeliveryDeps {
  db: Db;
  secrets: SecretBox;
  policy: UpstreamPolicy;
  now: () => Date;
  logger: Logger;
  metrics?: Metrics;
  /** Attempts running at once on this replica. */
  concurrency: number;
  /** One attempt's deadline, connection to last byte. */
  timeoutMs: number;
  /** How often this replica looks for due deliveries (0: only when told, e.g. by the tests). */
  pollMs: number;
}

type Taken = z.output<typeof TAKE.row>;

/** Why an attempt failed, as status shows it (never a secret: no URL, no header). */
class AttemptFailed extends Error {}
/** An attempt that no retry can make succeed (a trace whose generation is gone): the delivery is dead at once. */
class Undeliverable extends AttemptFailed {}

/** The body of one event: the Standard Webhooks payload shape { type, timestamp, data }. */
export function webhookBody(event: { type: string; created_at: Date; payload: unknown }): string {
  return JSON.stringify({ type: event.type, timestamp: event.created_at.toISOString(), data: event.payload });
}

/** Headers a destination's config may not replace. */
const OWN_HEADERS = new Set(['content-type', 'content-length', 'host', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent']);

export class DeliveryWorker {
  readonly #deps: DeliveryDeps;
  readonly #running = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #looking: Promise<number> | undefined;

  constructor(deps: DeliveryDeps) {
    this.#deps = deps;
  }

  /** The lease of an attempt: twice its deadline and 5 s, so that a live attempt (and its outcome's write) is never taken twice. */
  get #leaseMs(): number {
    return 2 * this.#deps.timeoutMs + 5_000;
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#schedule();
  }

  /** Stops looking, and waits for the attempts in flight. */
  async stop(): Promise<void> {
    this.#started = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#looking?.catch(() => undefined);
    await Promise.allSettled([...this.#running]);
  }

  /** Looks for due deliveries now (after a dispatch made some); with the poll off (0), nothing runs in the background. */
  wake(): void {
    if (this.#started && this.#deps.pollMs > 0) setImmediate(() => void this.#fill().catch((error: unknown) => this.#warn(error)));
  }

  /**
   * Attempts every delivery due now, with this replica's concurrency, and waits for them: answers
   * how many attempts were made (tests call it with the poll off).
   */
  async deliverDue(): Promise<number> {
    let made = 0;
    for (;;) {
      const taken = await this.#take(this.#deps.concurrency);
      if (taken.length === 0) return made;
      made += taken.length;
      await Promise.all(taken.map((delivery) => this.#attempt(delivery)));
    }
  }

  #schedule(): void {
    if (!this.#started || this.#deps.pollMs <= 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#fill()
        .catch((error: unknown) => this.#warn(error))
        .finally(() => this.#schedule());
    }, this.#deps.pollMs);
    this.#timer.unref();
  }

  #warn(error: unknown): void {
    // The database gone: its health logs that once (and stops this worker).
    if (isConnectionLost(error)) return;
    this.#deps.logger.warn({ component: 'delivery', err: error }, 'could not take due deliveries; trying again');
  }

  /** Takes as many due deliveries as there are free slots and starts them (without waiting). */
  #fill(): Promise<number> {
    this.#looking ??= (async () => {
      const free = this.#deps.concurrency - this.#running.size;
      if (!this.#started || free <= 0) return 0;
      const taken = await this.#take(free);
      for (const delivery of taken) {
        const attempt = this.#attempt(delivery).finally(() => {
          this.#running.delete(attempt);
          this.wake();
        });
        this.#running.add(attempt);
      }
      return taken.length;
    })().finally(() => {
      this.#looking = undefined;
    });
    return this.#looking;
  }

  async #take(limit: number): Promise<Taken[]> {
    const now = this.#deps.now();
    return queryRows(this.#deps.db, TAKE, [now, new Date(now.getTime() + this.#leaseMs), limit]);
  }

  /** One attempt, and its outcome written; never throws. */
  async #attempt(delivery: Taken): Promise<void> {
    const { db, logger } = this.#deps;
    try {
      const [event, destination] = await Promise.all([
        db.event.findUnique({ where: { id: delivery.event_id } }),
        db.observabilityDestination.findUnique({ where: { id: delivery.destination_id } }),
      ]);
      // Both cascade: a delivery without them is gone too. A destination deleted meanwhile is not sent to.
      if (!event || !destination || destination.deleted_at || !destination.enabled) {
        await db.eventDelivery.updateMany({ where: { id: delivery.id }, data: { locked_until: null } });
        return;
      }
      let failure: string | null = null;
      let final = false;
      try {
        await this.#send(event, destination);
      } catch (error) {
        const known = error instanceof AttemptFailed || error instanceof SendFailed;
        if (!known) logger.warn({ component: 'delivery', delivery_id: delivery.id, err: error }, 'delivery attempt failed');
        failure = known ? error.message : 'the attempt failed';
        final = error instanceof Undeliverable;
      }
      if (failure === null) await this.#delivered(delivery);
      else if (final) await this.#dead(delivery, failure);
      else await this.#failed(delivery, destination, failure);
    } catch (error) {
      // The lease ends and another attempt follows: at least once.
      logger.warn(
        { component: 'delivery', delivery_id: delivery.id, err: error },
        'could not record a delivery attempt; it is attempted again when its lease ends',
      );
    }
  }

  async #send(event: { id: string; type: string; created_at: Date; payload: unknown }, destination: DestinationRow): Promise<void> {
    if (event.type === GENERATION_RECORDED) return this.#sendTrace(event, destination);
    if (destination.type !== 'webhook') throw new AttemptFailed(`${destination.type} destinations do not receive ${event.type} events`);
    const config = plaintextConfig(this.#deps.secrets, destination);
    const secret = openSigningSecret(this.#deps.secrets, destination);
    if (!secret) throw new AttemptFailed('the destination has no signing secret');
    const body = webhookBody(event);
    const at = this.#deps.now();
    const extra = Object.fromEntries(Object.entries(config.headers ?? {}).filter(([name]) => !OWN_HEADERS.has(name.toLowerCase())));
    let answer;
    try {
      answer = await upstreamFetch(this.#deps.policy, String(config.url), {
        method: config.method === 'PUT' ? 'PUT' : 'POST',
        headers: {
          ...extra,
          'content-type': 'application/json',
          'user-agent': 'Switchyard-Webhooks/1',
          'webhook-id': event.id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': new Webhook(secret).sign(event.id, at, body),
        },
        body,
        timeoutMs: this.#deps.timeoutMs,
        maxBodyBytes: 4096,
      });
    } catch (error) {
      if (error instanceof RefusedUpstream) throw new AttemptFailed(`the address is refused: ${error.message}`);
      throw new AttemptFailed((error as Error).message);
    }
    if (answer.status >= 200 && answer.status < 300) return;
    if (answer.status >= 300 && answer.status < 400) throw new AttemptFailed(`HTTP ${answer.status}: redirects are not followed`);
    throw new AttemptFailed(`HTTP ${answer.status}`);
  }

  /** A generation's trace, built now from its row for this destination's options, as a span or an object. */
  async #sendTrace(event: { id: string; payload: unknown }, destination: DestinationRow): Promise<void> {
    const generationId = (event.payload as { generation_id?: unknown } | null)?.generation_id;
    const source = typeof generationId === 'string' ? await traceSourceOf(this.#deps.db, generationId) : null;
    if (!source) throw new Undeliverable('the generation no longer exists');
    const trace = traceOf(event.id, source, destination);
    const config = plaintextConfig(this.#deps.secrets, destination);
    if (destination.type === 'otel-collector') {
      await sendOtlpTrace(this.#deps.policy, config as { endpoint: string; headers?: Record<string, string> }, trace, this.#deps.timeoutMs);
    } else if (destination.type === 's3') {
      await putTraceObject(this.#deps.policy, config as unknown as S3DestinationConfig, event.id, trace, source.apiKeyName, this.#deps.timeoutMs);
    } else {
      throw new AttemptFailed(`${destination.type} destinations do not receive generation traces`);
    }
  }

  async #delivered(delivery: Taken): Promise<void> {
    const { db, metrics } = this.#deps;
    const now = this.#deps.now();
    await db.eventDelivery.updateMany({
      where: { id: delivery.id, status: { in: ['pending', 'failing'] } },
      data: { status: 'delivered', delivered_at: now, last_attempt_at: now, last_error: null, locked_until: null },
    });
    await db.observabilityDestination.updateMany({ where: { id: delivery.destination_id, failing_since: { not: null } }, data: { failing_since: null } });
    metrics?.deliveries.inc({ result: 'delivered' });
  }

  /** A delivery that cannot succeed: dead now; the destination's failure streak is not its concern. */
  async #dead(delivery: Taken, error: string): Promise<void> {
    const now = this.#deps.now();
    await this.#deps.db.eventDelivery.updateMany({
      where: { id: delivery.id, status: { in: ['pending', 'failing'] } },
      data: { status: 'dead', last_error: error.slice(0, 500), last_attempt_at: now, locked_until: null },
    });
    this.#deps.metrics?.deliveries.inc({ result: 'dead' });
  }

  async #failed(delivery: Taken, destination: DestinationRow, error: string): Promise<void> {
    const { db, metrics, logger } = this.#deps;
    const now = this.#deps.now();
    const dead = delivery.attempts >= MAX_ATTEMPTS;
    const delayS = RETRY_DELAYS_S[Math.min(delivery.attempts, RETRY_DELAYS_S.length) - 1] ?? 0;
    await db.eventDelivery.updateMany({
      where: { id: delivery.id, status: { in: ['pending', 'failing'] } },
      data: {
        status: dead ? 'dead' : 'failing',
        next_attempt_at: new Date(now.getTime() + delayS * 1000),
        last_error: error.slice(0, 500),
        last_attempt_at: now,
        locked_until: null,
      },
    });
    metrics?.deliveries.inc({ result: dead ? 'dead' : 'failed' });
    // The failure streak starts at the first failure after a success; 24 h of it turn the destination off.
    await db.observabilityDestination.updateMany({ where: { id: destination.id, failing_since: null }, data: { failing_since: now } });
    const { count } = await db.observabilityDestination.updateMany({
      where: { id: destination.id, enabled: true, deleted_at: null, failing_since: { lte: new Date(now.getTime() - DISABLE_AFTER_MS) } },
      data: { enabled: false, disabled_reason: 'every delivery attempt failed for 24 hours' },
    });
    if (count > 0) {
      metrics?.destinationsDisabled.inc();
      logger.warn(
        { component: 'delivery', destination_id: destination.id, organization_id: destination.organization_id, last_error: error },
        'destination turned off: every delivery attempt failed for 24 hours',
      );
    }
  }
}

const EMPTY_COUNTS = { pending: 0, failing: 0, delivered: 0, dead: 0 };

/** destinations.status (tRPC): how delivery to one of the organization's destinations is going. */
export async function destinationStatus(db: Db, actor: Actor, input: { id: string }): Promise<DestinationStatus> {
  const row = await findOwned(actor, 'destination', input.id, (where) => db.observabilityDestination.findFirst({ where: { ...where, deleted_at: null } }));
  const [groups, lastError, lastDelivered] = await Promise.all([
    db.eventDelivery.groupBy({ by: ['status'], where: { destination_id: row.id }, _count: { _all: true } }),
    db.eventDelivery.findFirst({
      where: { destination_id: row.id, last_error: { not: null } },
      orderBy: { last_attempt_at: 'desc' },
      select: { last_error: true, last_attempt_at: true },
    }),
    db.eventDelivery.aggregate({ where: { destination_id: row.id, status: 'delivered' }, _max: { delivered_at: true } }),
  ]);
  const counts = { ...EMPTY_COUNTS };
  for (const group of groups) if (group.status in counts) counts[group.status as keyof typeof counts] = group._count._all;
  return {
    destination_id: row.id,
    enabled: row.enabled,
    delivery: DELIVERED_DESTINATION_TYPES.includes(row.type as DestinationType) ? 'supported' : 'not_supported',
    disabled_reason: row.disabled_reason,
    ...counts,
    last_error: lastError?.last_error ?? null,
    last_error_at: lastError?.last_attempt_at?.toISOString() ?? null,
    last_delivered_at: lastDelivered._max.delivered_at?.toISOString() ?? null,
    failing_since: row.failing_since?.toISOString() ?? null,
  };
}
