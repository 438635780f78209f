// Delivery of the events outbox to destinations (decision 0025, docs/events.md#delivery).
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
//   worker died is taken again when the lease ends (at least once). An attempt is one destination's:
//   one event for a webhook, up to TRACE_BATCH traces for a trace destination (one OTLP export). At
//   most `concurrency` attempts run at once per replica, each with its own deadline; of them, at most
//   ATTEMPTS_PER_DESTINATION to one destination (one while it is failing) and half to one
//   organization: a receiver that hangs holds one slot however many of its deliveries are due, one
//   tenant's receivers never all of them, and nothing here runs on a request or the recording path.
// - An attempt is an HTTP request through the shared upstream policy (address policy, no redirects,
//   a deadline): to a webhook, signed per Standard Webhooks with the destination's secret (the
//   `standardwebhooks` package), `webhook-id` = the event id on every attempt; a trace as an OTLP
//   span or an S3 object (trace-senders.ts), built at the attempt from the generation's row, with
//   ids derived from the event id. A trace whose generation is gone is dead at once.
// - A failed attempt is retried after RETRY_DELAYS_S (about 27.6 hours in all); the last failure makes
//   the delivery dead. A destination whose attempts have all failed for DISABLE_AFTER_MS is turned
//   off (enabled: false, disabled_reason).
// - Time is deps.now(): tests drive the clock and never wait for a retry.
import { namedStatement, queryRows, statement, type Db, type ObservabilityDestination as DestinationRow } from '@switchyard/db';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import { RefusedUpstream, upstreamFetch, type UpstreamPolicy } from '../../upstream/index.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { openSigningSecret, plaintextConfig, sendableHeaders } from '../destinations/destinations-secrets.js';
import { isConnectionLost } from '../../lib/db-errors.js';
import { dispatchTraceEvents, GENERATION_RECORDED, traceSourcesOf, type TraceSource } from './generation-traces.js';
import { AttemptFailed, Undeliverable } from './attempt-errors.js';
import type { OtlpDestinationConfig, S3DestinationConfig, TraceRecord } from './trace-senders.js';

/** The trace senders (OpenTelemetry's exporter, the AWS SDK: megabytes resident), loaded when a trace is first sent. */
let senders: Promise<typeof import('./trace-senders.js')> | undefined;
const traceSenders = () => (senders ??= import('./trace-senders.js'));

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

/** The most deliveries one attempt to a trace destination carries (one OTLP export; S3 objects written a few at once). */
export const TRACE_BATCH = 100;
/** Attempts in flight at once to one destination, per replica; one while its latest attempts fail. */
export const ATTEMPTS_PER_DESTINATION = 4;

/**
 * Takes the due deliveries (due at :now) of up to :destinations destinations, leased until
 * :locked_until, the one due longest first: live, enabled destinations that are not at their share
 * of this replica's attempts (:full, at ATTEMPTS_PER_DESTINATION; :in_flight with failing_since set:
 * failing, with an attempt in flight), whose organization is not at its share (:busy_organizations
 * with :busy_attempts attempts in flight each, at most :organization_share). Of each destination,
 * its oldest due deliveries: one for a webhook (one event a request), up to :trace_batch for a
 * trace destination (one attempt for all of them).
 */
const TAKE = namedStatement(
  `WITH due AS (
     SELECT x.destination_id, min(x.next_attempt_at) AS first_due
       FROM event_deliveries x
      WHERE x.status IN ('pending', 'failing')
        AND x.next_attempt_at <= :now::timestamptz
        AND (x.locked_until IS NULL OR x.locked_until <= :now::timestamptz)
      GROUP BY x.destination_id
   ), ready AS (
     SELECT r.destination_id, r.type
       FROM (SELECT due.destination_id, due.first_due, d.type, d.organization_id,
                    row_number() OVER (PARTITION BY d.organization_id ORDER BY due.first_due) AS n
               FROM due JOIN observability_destinations d ON d.id = due.destination_id
              WHERE d.enabled AND d.deleted_at IS NULL
                AND NOT (d.id = ANY(:full::uuid[]))
                AND NOT (d.failing_since IS NOT NULL AND d.id = ANY(:in_flight::uuid[]))) r
       LEFT JOIN unnest(:busy_organizations::text[], :busy_attempts::int[]) AS busy(organization_id, attempts) ON busy.organization_id = r.organization_id
      WHERE r.n + coalesce(busy.attempts, 0) <= :organization_share
      ORDER BY r.first_due
      LIMIT :destinations
   ), picked AS (
     SELECT p.id FROM ready CROSS JOIN LATERAL (
       SELECT y.id FROM event_deliveries y
        WHERE y.destination_id = ready.destination_id AND y.status IN ('pending', 'failing')
          AND y.next_attempt_at <= :now::timestamptz
          AND (y.locked_until IS NULL OR y.locked_until <= :now::timestamptz)
        ORDER BY y.next_attempt_at
        LIMIT CASE WHEN ready.type = 'webhook' THEN 1 ELSE :trace_batch::int END
        FOR UPDATE SKIP LOCKED) p
   )
   UPDATE event_deliveries ed
      SET locked_until = :locked_until::timestamptz, attempts = ed.attempts + 1
     FROM picked
    WHERE ed.id = picked.id AND (ed.locked_until IS NULL OR ed.locked_until <= :now::timestamptz)
   RETURNING ed.id::text AS id, ed.event_id::text AS event_id, ed.destination_id::text AS destination_id, ed.organization_id, ed.attempts`,
  z.object({ id: z.string(), event_id: z.string(), destination_id: z.string(), organization_id: z.string(), attempts: z.number() }),
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
type EventRow = { id: string; type: string; created_at: Date; payload: unknown };
/** An attempt's outcome for one delivery: null delivered; final: no retry can make it succeed. */
type Outcome = { error: string; final: boolean } | null;

/** The body of one event: the Standard Webhooks payload shape { type, timestamp, data }. */
export function webhookBody(event: { type: string; created_at: Date; payload: unknown }): string {
  return JSON.stringify({ type: event.type, timestamp: event.created_at.toISOString(), data: event.payload });
}

export class DeliveryWorker {
  readonly #deps: DeliveryDeps;
  readonly #running = new Set<Promise<void>>();
  /** This replica's attempts in flight, by destination and by organization. */
  readonly #perDestination = new Map<string, number>();
  readonly #perOrganization = new Map<string, number>();
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
   * how many deliveries were attempted (tests call it with the poll off).
   */
  async deliverDue(): Promise<number> {
    let made = 0;
    for (;;) {
      const taken = await this.#take(this.#deps.concurrency);
      if (taken.length === 0) return made;
      made += taken.length;
      await Promise.all(byDestination(taken).map((group) => this.#attempt(group)));
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

  /** Takes the due deliveries of as many destinations as there are free slots and starts them (without waiting). */
  #fill(): Promise<number> {
    this.#looking ??= (async () => {
      const free = this.#deps.concurrency - this.#running.size;
      if (!this.#started || free <= 0) return 0;
      const taken = await this.#take(free);
      for (const group of byDestination(taken)) {
        const { destination_id: destination, organization_id: organization } = group[0]!;
        count(this.#perDestination, destination, 1);
        count(this.#perOrganization, organization, 1);
        const attempt = this.#attempt(group).finally(() => {
          this.#running.delete(attempt);
          count(this.#perDestination, destination, -1);
          count(this.#perOrganization, organization, -1);
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

  /** An organization's share of this replica's attempts: half of them (at least one). */
  get #organizationShare(): number {
    return Math.max(1, Math.ceil(this.#deps.concurrency / 2));
  }

  async #take(destinations: number): Promise<Taken[]> {
    const now = this.#deps.now();
    const busy = [...this.#perDestination];
    const organizations = [...this.#perOrganization];
    return queryRows(this.#deps.db, TAKE, {
      now,
      locked_until: new Date(now.getTime() + this.#leaseMs),
      destinations,
      trace_batch: TRACE_BATCH,
      full: busy.filter(([, n]) => n >= ATTEMPTS_PER_DESTINATION).map(([id]) => id),
      in_flight: busy.map(([id]) => id),
      busy_organizations: organizations.map(([id]) => id),
      busy_attempts: organizations.map(([, n]) => n),
      organization_share: this.#organizationShare,
    });
  }

  /** One attempt (one destination, one or more of its deliveries), and its outcomes written; never throws. */
  async #attempt(group: Taken[]): Promise<void> {
    const { db, logger } = this.#deps;
    const ids = group.map((d) => d.id);
    try {
      const [events, destination] = await Promise.all([
        db.event.findMany({ where: { id: { in: group.map((d) => d.event_id) } } }),
        db.observabilityDestination.findUnique({ where: { id: group[0]!.destination_id } }),
      ]);
      // Both cascade: a delivery without them is gone too. A destination deleted meanwhile is not sent to.
      if (!destination || destination.deleted_at || !destination.enabled) {
        await db.eventDelivery.updateMany({ where: { id: { in: ids } }, data: { locked_until: null } });
        return;
      }
      const byId = new Map(events.map((e) => [e.id, e]));
      const present = group.filter((d) => byId.has(d.event_id));
      const outcomes = await this.#send(
        present.map((d) => ({ delivery: d, event: byId.get(d.event_id)! })),
        destination,
      );
      await this.#record(present, destination, outcomes);
    } catch (error) {
      // The leases end and other attempts follow: at least once.
      logger.warn({ component: 'delivery', delivery_ids: ids, err: error }, 'could not record a delivery attempt; it is attempted again when its lease ends');
    }
  }

  /** What became of each delivery of an attempt (by delivery id): null delivered, else why not. */
  async #send(items: { delivery: Taken; event: EventRow }[], destination: DestinationRow): Promise<Map<string, Outcome>> {
    const outcomes = new Map<string, Outcome>();
    const traces = items.filter((i) => i.event.type === GENERATION_RECORDED);
    await this.#sendAlerts(
      items.filter((i) => i.event.type !== GENERATION_RECORDED),
      destination,
      outcomes,
    );
    if (traces.length > 0) await this.#sendTraces(traces, destination, outcomes);
    return outcomes;
  }

  /** Records `error` as the outcome of these deliveries (logged, unless it is an AttemptFailed: a known refusal). */
  #failed(outcomes: Map<string, Outcome>, error: unknown, ids: readonly string[]): void {
    const known = error instanceof AttemptFailed;
    if (!known) this.#deps.logger.warn({ component: 'delivery', delivery_ids: ids, err: error }, 'delivery attempt failed');
    const outcome = { error: known ? (error as Error).message : 'the attempt failed', final: error instanceof Undeliverable };
    for (const id of ids) outcomes.set(id, outcome);
  }

  /** Alerts: one webhook request each. */
  async #sendAlerts(items: { delivery: Taken; event: EventRow }[], destination: DestinationRow, outcomes: Map<string, Outcome>): Promise<void> {
    for (const item of items) {
      try {
        await this.#sendWebhook(item.event, destination);
        outcomes.set(item.delivery.id, null);
      } catch (error) {
        this.#failed(outcomes, error, [item.delivery.id]);
      }
    }
  }

  /** Generation traces: one OTLP export, or one object each in S3, for all of the attempt's. */
  async #sendTraces(traces: { delivery: Taken; event: EventRow }[], destination: DestinationRow, outcomes: Map<string, Outcome>): Promise<void> {
    const fail = (error: unknown, ids: readonly string[]) => this.#failed(outcomes, error, ids);
    try {
      if (destination.type !== 'otel-collector' && destination.type !== 's3') {
        throw new AttemptFailed(`${destination.type} destinations do not receive generation traces`);
      }
      const { traceOf, sendOtlpTraces, putTraceObjects } = await traceSenders();
      const sources = await traceSourcesOf(
        this.#deps.db,
        traces.map((t) => generationIdOf(t.event)).filter((id): id is string => id !== null),
      );
      const sendable: { delivery: Taken; trace: TraceRecord; source: TraceSource; eventId: string }[] = [];
      for (const { delivery, event } of traces) {
        const source = sources.get(generationIdOf(event) ?? '');
        if (!source) fail(new Undeliverable('the generation no longer exists'), [delivery.id]);
        else sendable.push({ delivery, source, eventId: event.id, trace: traceOf(event.id, source, destination) });
      }
      if (sendable.length === 0) return;
      const config = plaintextConfig(this.#deps.secrets, destination);
      if (destination.type === 'otel-collector') {
        const ids = sendable.map((s) => s.delivery.id);
        try {
          await sendOtlpTraces(
            this.#deps.policy,
            config as unknown as OtlpDestinationConfig,
            sendable.map((s) => s.trace),
            this.#deps.timeoutMs,
          );
          for (const id of ids) outcomes.set(id, null);
        } catch (error) {
          fail(error, ids);
        }
      } else {
        const results = await putTraceObjects(
          this.#deps.policy,
          config as unknown as S3DestinationConfig,
          sendable.map((s) => ({ eventId: s.eventId, trace: s.trace, apiKeyName: s.source.apiKeyName })),
          this.#deps.timeoutMs,
        );
        for (const [i, s] of sendable.entries()) {
          const result = results[i];
          if (result === null) outcomes.set(s.delivery.id, null);
          else fail(result, [s.delivery.id]);
        }
      }
    } catch (error) {
      fail(
        error,
        traces.map((t) => t.delivery.id).filter((id) => !outcomes.has(id)),
      );
    }
  }

  async #sendWebhook(event: EventRow, destination: DestinationRow): Promise<void> {
    if (destination.type !== 'webhook') throw new AttemptFailed(`${destination.type} destinations do not receive ${event.type} events`);
    const config = plaintextConfig(this.#deps.secrets, destination);
    const secret = openSigningSecret(this.#deps.secrets, destination);
    if (!secret) throw new AttemptFailed('the destination has no signing secret');
    const body = webhookBody(event);
    const at = this.#deps.now();
    const extra = sendableHeaders(config);
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

  /** Writes an attempt's outcomes: delivered, dead (final failures), or failing with the next retry (or dead after the last). */
  async #record(group: Taken[], destination: DestinationRow, outcomes: Map<string, Outcome>): Promise<void> {
    const { db, metrics, logger } = this.#deps;
    const now = this.#deps.now();
    const open = { status: { in: ['pending', 'failing'] } };
    const delivered = group.filter((d) => outcomes.get(d.id) === null);
    const failed = group.filter((d) => outcomes.get(d.id));
    // Deliveries without an outcome (their event gone meanwhile) are released.
    const none = group.filter((d) => !outcomes.has(d.id)).map((d) => d.id);
    if (none.length > 0) await db.eventDelivery.updateMany({ where: { id: { in: none } }, data: { locked_until: null } });
    if (delivered.length > 0) {
      await db.eventDelivery.updateMany({
        where: { id: { in: delivered.map((d) => d.id) }, ...open },
        data: { status: 'delivered', delivered_at: now, last_attempt_at: now, last_error: null, locked_until: null },
      });
      await db.observabilityDestination.updateMany({ where: { id: destination.id, failing_since: { not: null } }, data: { failing_since: null } });
      metrics?.deliveries.inc({ result: 'delivered' }, delivered.length);
    }
    if (failed.length === 0) return;
    // One write per (error, final, attempts): the deliveries of one attempt mostly share all three.
    const writes = new Map<string, { ids: string[]; error: string; status: 'failing' | 'dead'; next: Date }>();
    let retried = false;
    for (const d of failed) {
      const outcome = outcomes.get(d.id)!;
      const dead = outcome.final || d.attempts >= MAX_ATTEMPTS;
      retried ||= !outcome.final;
      const delayS = outcome.final ? 0 : (RETRY_DELAYS_S[Math.min(d.attempts, RETRY_DELAYS_S.length) - 1] ?? 0);
      const key = `${outcome.error}\n${dead}\n${delayS}`;
      const write = writes.get(key) ?? { ids: [], error: outcome.error, status: dead ? 'dead' : 'failing', next: new Date(now.getTime() + delayS * 1000) };
      write.ids.push(d.id);
      writes.set(key, write);
    }
    for (const write of writes.values()) {
      await db.eventDelivery.updateMany({
        where: { id: { in: write.ids }, ...open },
        data: { status: write.status, next_attempt_at: write.next, last_error: write.error.slice(0, 500), last_attempt_at: now, locked_until: null },
      });
      metrics?.deliveries.inc({ result: write.status === 'dead' ? 'dead' : 'failed' }, write.ids.length);
    }
    // Only failures a retry might cure count against the destination (a generation gone does not).
    if (!retried) return;
    const lastError = [...writes.values()].at(-1)!.error;
    // The failure streak starts at the first failure after a success; 24 h of it turn the destination off.
    await db.observabilityDestination.updateMany({ where: { id: destination.id, failing_since: null }, data: { failing_since: now } });
    const { count } = await db.observabilityDestination.updateMany({
      where: { id: destination.id, enabled: true, deleted_at: null, failing_since: { lte: new Date(now.getTime() - DISABLE_AFTER_MS) } },
      data: { enabled: false, disabled_reason: 'every delivery attempt failed for 24 hours' },
    });
    if (count > 0) {
      metrics?.destinationsDisabled.inc();
      logger.warn(
        { component: 'delivery', destination_id: destination.id, organization_id: destination.organization_id, last_error: lastError },
        'destination turned off: every delivery attempt failed for 24 hours',
      );
    }
  }
}

/** Adds `by` to a key's count, forgetting keys that reach 0. */
function count(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}

/** The deliveries taken, one group per destination (one attempt each). */
function byDestination(taken: readonly Taken[]): Taken[][] {
  const groups = new Map<string, Taken[]>();
  for (const delivery of taken) {
    const group = groups.get(delivery.destination_id);
    if (group) group.push(delivery);
    else groups.set(delivery.destination_id, [delivery]);
  }
  return [...groups.values()];
}

const generationIdOf = (event: EventRow): string | null => {
  const id = (event.payload as { generation_id?: unknown } | null)?.generation_id;
  return typeof id === 'string' ? id : null;
};
