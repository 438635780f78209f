// Generation traces (decision 0035; docs/events.md#generation-traces): each
// recorded generation, as one trace, to the `otel-collector` and `s3` destinations of its workspace.
//
// - Emitted once: the recorder's batch transaction writes one `generation.recorded` event per
//   generation (cause `generation.recorded:<id>`), only for a workspace whose
//   is_observability_broadcast_enabled is on and that has a live, enabled trace destination, so that
//   recording elsewhere writes nothing more (TRACE_EVENTS_SQL, in limit-alerts.ts' statement).
// - Dispatched (dispatchTraceEvents, a step of the dispatch job, one replica a round): each event
//   becomes one delivery per trace destination of the workspace that takes it: enabled and live, the
//   workspace's broadcast still on, the request's region in its `regions`, its key in
//   `api_key_hashes` (null: every key), sampled at `sampling_rate`, and passing its filter rules
//   (filter-rules.ts). Sampling is a hash of the event and destination ids, so a repeated dispatch
//   decides the same way.
// - Sent (delivery.ts) as built at the attempt from the generation's row (trace-senders.ts: traceOf):
//   OpenTelemetry's GenAI attributes, bodies only when neither privacy_mode nor the workspace's io
//   logging says no, cost, identity and request-context attributes only under their
//   broadcast_generation_* flags. The trace id is the event id's 128 bits and the span id is derived
//   from it: every attempt, and every destination, carries the same ids.
import { createHash } from 'node:crypto';
import { inTransaction, statement, type Db, type Generation } from '@switchyard/db';
import type { FilterRules } from '@switchyard/schema';
import { z } from 'zod';
import { FilterJudge, type FilterFields } from '../destinations/filter-rules.js';

export const GENERATION_RECORDED = 'generation.recorded';
/** The payload's version (docs/events.md): `{ version, generation_id }`. */
export const GENERATION_TRACE_VERSION = 1;
/** The destination types that receive generation traces. */
export const TRACE_DESTINATION_TYPES: readonly string[] = ['otel-collector', 's3'];
/** The same types as an SQL list: 'otel-collector', 's3'. */
const TRACE_TYPES_SQL = TRACE_DESTINATION_TYPES.map((type) => `'${type}'`).join(', ');

/**
 * The trace events of a recorded batch, as rows (organization_id, workspace_id, type, cause,
 * payload) for the batch's events statement (named parameters): :generation_ids, their
 * :generation_organizations and :generation_workspaces. A workspace without broadcast, or without
 * a trace destination, gets none.
 */
export const TRACE_EVENTS_SQL = `SELECT g.organization_id, g.workspace_id, '${GENERATION_RECORDED}' AS type,
            '${GENERATION_RECORDED}:' || g.id AS cause,
            jsonb_build_object('version', ${GENERATION_TRACE_VERSION}, 'generation_id', g.id) AS payload
       FROM unnest(:generation_ids::text[], :generation_organizations::text[], :generation_workspaces::uuid[]) AS g(id, organization_id, workspace_id)
       JOIN workspaces w ON w.id = g.workspace_id AND w.is_observability_broadcast_enabled AND w.deleted_at IS NULL
      WHERE EXISTS (SELECT 1 FROM observability_destinations d
                     WHERE d.workspace_id = g.workspace_id AND d.type IN (${TRACE_TYPES_SQL})
                       AND d.enabled AND d.deleted_at IS NULL)`;

/** Trace events dispatched per transaction. */
const TRACE_DISPATCH_BATCH = 200;

const TAKE_TRACE_EVENTS = statement(
  `SELECT e.id::text AS id, e.workspace_id::text AS workspace_id, e.payload->>'generation_id' AS generation_id
     FROM events e
    WHERE e.dispatched_at IS NULL AND e.type = '${GENERATION_RECORDED}'
    ORDER BY e.created_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED`,
  z.object({ id: z.string(), workspace_id: z.string().nullable(), generation_id: z.string().nullable() }),
);

/** The generations of a batch with what judging and tracing them needs. */
const SOURCES = statement(
  `SELECT g.id, g.model, g.provider_name, g.session_id, g.external_user, g.finish_reason, g.data_region,
          g.total_cost::float8 AS total_cost, g.tokens_prompt, g.tokens_completion,
          k.name AS api_key_name, k.hash AS api_key_hash,
          w.is_observability_broadcast_enabled AS broadcast,
          CASE WHEN $2::boolean THEN c.input END AS input, CASE WHEN $2::boolean THEN c.completion END AS completion
     FROM generations g
     JOIN api_keys k ON k.id = g.api_key_id
     JOIN workspaces w ON w.id = g.workspace_id
     LEFT JOIN generation_contents c ON c.generation_id = g.id
    WHERE g.id = ANY($1::text[])`,
  z.object({
    id: z.string(),
    model: z.string(),
    provider_name: z.string().nullable(),
    session_id: z.string().nullable(),
    external_user: z.string().nullable(),
    finish_reason: z.string().nullable(),
    data_region: z.string().nullable(),
    total_cost: z.number(),
    tokens_prompt: z.number(),
    tokens_completion: z.number(),
    api_key_name: z.string(),
    api_key_hash: z.string(),
    broadcast: z.boolean(),
    input: z.unknown(),
    completion: z.string().nullable(),
  }),
);

const DESTINATIONS = statement(
  `SELECT id::text AS id, workspace_id::text AS workspace_id, sampling_rate, regions, api_key_hashes, filter_rules
     FROM observability_destinations
    WHERE workspace_id = ANY($1::uuid[]) AND type IN (${TRACE_TYPES_SQL})
      AND enabled AND deleted_at IS NULL`,
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    sampling_rate: z.number(),
    regions: z.array(z.string()),
    api_key_hashes: z.unknown(),
    filter_rules: z.unknown(),
  }),
);

const INSERT_DELIVERIES = statement(
  `INSERT INTO event_deliveries (id, organization_id, event_id, destination_id, next_attempt_at)
   SELECT gen_random_uuid(), e.organization_id, d.event_id, d.destination_id, $3::timestamptz
     FROM unnest($1::uuid[], $2::uuid[]) AS d(event_id, destination_id)
     JOIN events e ON e.id = d.event_id
    ORDER BY d.event_id, d.destination_id
   ON CONFLICT (event_id, destination_id) DO NOTHING
   RETURNING 1 AS made`,
  z.object({ made: z.number() }),
);

const MARK_DISPATCHED = statement(
  `UPDATE events SET dispatched_at = $2::timestamptz WHERE id = ANY($1::uuid[]) RETURNING 1 AS marked`,
  z.object({ marked: z.number() }),
);

type Source = z.output<typeof SOURCES.row>;

/** The region a request was served in, as destinations' `regions` name it (eu is europe; none is global). */
export function regionOf(dataRegion: string | null): string {
  if (!dataRegion) return 'global';
  return dataRegion === 'eu' ? 'europe' : dataRegion;
}

/** Whether a destination sampled at `rate` takes this event: the same answer on every dispatch. */
export function sampledIn(eventId: string, destinationId: string, rate: number): boolean {
  if (rate >= 1) return true;
  const digest = createHash('sha256').update(`${eventId}:${destinationId}`).digest();
  return digest.readUInt32BE(0) / 0x1_0000_0000 < rate;
}

/** The text of a stored input (messages' string contents, one per line; other content as JSON). */
function inputText(input: unknown): string | null {
  const messages = (input as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages)) return null;
  return messages.map((m: { content?: unknown }) => (typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? null))).join('\n');
}

/** The fields filter rules name, of one generation. */
export function filterFieldsOf(source: Source): FilterFields {
  return {
    model: source.model,
    provider: source.provider_name,
    session_id: source.session_id,
    user_id: source.external_user,
    api_key_name: source.api_key_name,
    finish_reason: source.finish_reason,
    input: inputText(source.input),
    output: source.completion,
    total_cost: source.total_cost,
    total_tokens: source.tokens_prompt + source.tokens_completion,
    prompt_tokens: source.tokens_prompt,
    completion_tokens: source.tokens_completion,
  };
}

/** Whether a filter names the bodies (then the dispatch reads them). */
const namesBodies = (rules: FilterRules | null) =>
  rules?.enabled !== false && (rules?.groups ?? []).some((g) => g.rules.some((r) => r.field === 'input' || r.field === 'output'));

/**
 * Dispatches the generation.recorded events not yet dispatched: one delivery per destination that
 * takes each (see the top of this file), each batch in one transaction with its events marked.
 */
export async function dispatchTraceEvents(db: Db, now: Date): Promise<{ events: number; deliveries: number }> {
  const total = { events: 0, deliveries: 0 };
  const judge = new FilterJudge();
  for (;;) {
    const done = await inTransaction(db, async (query) => {
      const events = await query(TAKE_TRACE_EVENTS, [TRACE_DISPATCH_BATCH]);
      if (events.length === 0) return 0;
      const workspaces = [...new Set(events.map((e) => e.workspace_id).filter((w): w is string => w !== null))];
      const destinations = (await query(DESTINATIONS, [workspaces])).map((d) => ({
        ...d,
        api_key_hashes: Array.isArray(d.api_key_hashes) ? new Set(d.api_key_hashes as string[]) : null,
        filter_rules: (d.filter_rules as FilterRules | null) ?? null,
      }));
      const ids = [...new Set(events.map((e) => e.generation_id).filter((g): g is string => g !== null))];
      const bodies = destinations.some((d) => namesBodies(d.filter_rules));
      const sources = new Map(destinations.length === 0 || ids.length === 0 ? [] : (await query(SOURCES, [ids, bodies])).map((s) => [s.id, s] as const));
      const eventIds: string[] = [];
      const destinationIds: string[] = [];
      for (const event of events) {
        const source = event.generation_id ? sources.get(event.generation_id) : undefined;
        if (!source?.broadcast) continue;
        const fields = filterFieldsOf(source);
        const region = regionOf(source.data_region);
        for (const d of destinations) {
          if (d.workspace_id !== event.workspace_id || !d.regions.includes(region)) continue;
          if (d.api_key_hashes && !d.api_key_hashes.has(source.api_key_hash)) continue;
          if (!sampledIn(event.id, d.id, d.sampling_rate) || !judge.passes(d.filter_rules, fields)) continue;
          eventIds.push(event.id);
          destinationIds.push(d.id);
        }
      }
      if (eventIds.length > 0) total.deliveries += (await query(INSERT_DELIVERIES, [eventIds, destinationIds, now])).length;
      total.events += (await query(MARK_DISPATCHED, [events.map((e) => e.id), now])).length;
      return events.length;
    });
    if (done < TRACE_DISPATCH_BATCH) return total;
  }
}

/** The generation a trace is made of, at the attempt. */
export interface TraceSource {
  generation: Generation;
  apiKeyName: string;
  /** The workspace's is_observability_io_logging_enabled. */
  ioLogging: boolean;
  content: { input: unknown; completion: string } | null;
}

/** The generations of generation.recorded events (by id; those gone are absent), with their keys' names, workspaces' io logging and contents. */
export async function traceSourcesOf(db: Db, generationIds: readonly string[]): Promise<Map<string, TraceSource>> {
  const generations = await db.generation.findMany({
    where: { id: { in: [...new Set(generationIds)] } },
    include: {
      api_key: { select: { name: true, workspace: { select: { is_observability_io_logging_enabled: true } } } },
      content: { select: { input: true, completion: true } },
    },
  });
  return new Map(
    generations.map(({ api_key, content, ...row }) => [
      row.id,
      { generation: row, apiKeyName: api_key.name, ioLogging: api_key.workspace.is_observability_io_logging_enabled, content },
    ]),
  );
}
