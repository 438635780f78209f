// The recording transaction's statements, for the recording database floor (floor.ts, `record`).
// The recorder (apps/api/src/modules/generations/recorder.ts) keeps its statement in a constant of
// its own module, not in a function the server's package exports, so its text is repeated here;
// bench/test/record-statement.test.ts checks that it is the text the server sends, byte for byte.
// Its rollup part and the events statement after it are built by the server's own functions.
import { alertsQuery, rollupCtes } from '@switchyard/api/statements';
import { orderedValues } from '@switchyard/db';

/** The recorder's statement: $1 the generation rows (JSON), $2 their extras (JSON), $3 now. */
export const RECORD_TEXT = `
  WITH ins AS (
    INSERT INTO generations SELECT * FROM jsonb_populate_recordset(NULL::generations, $1::jsonb) ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING *
  ), new AS (
    SELECT ins.*, x.byok, x.day, x.content, x.reservation, o.store_content AND x.content IS NOT NULL AS store
    FROM ins
    JOIN jsonb_to_recordset($2::jsonb) AS x(id text, byok numeric, day date, content jsonb, reservation uuid) ON x.id = ins.id
    JOIN organizations o ON o.id = ins.organization_id
  ), settled AS (
    DELETE FROM spend_reservations r USING new WHERE r.id = new.reservation AND r.api_key_id = new.api_key_id
  ), content AS (
    INSERT INTO generation_contents (generation_id, organization_id, input, completion, reasoning, error, created_at)
    SELECT id, organization_id, content->'input', coalesce(content->'output'->>'completion', ''),
           content->'output'->>'reasoning', nullif(content->'error', 'null'::jsonb), $3
    FROM new WHERE store
  ), rollup AS (
    INSERT INTO key_usage_daily (api_key_id, day, organization_id, usage, byok_usage, request_count, free_request_count)
    SELECT api_key_id, day, organization_id, sum(usage), sum(byok), count(*), count(*) FILTER (WHERE is_free)
    FROM new GROUP BY api_key_id, day, organization_id ORDER BY api_key_id, day
    ON CONFLICT (api_key_id, day) DO UPDATE SET
      usage = key_usage_daily.usage + EXCLUDED.usage,
      byok_usage = key_usage_daily.byok_usage + EXCLUDED.byok_usage,
      request_count = key_usage_daily.request_count + EXCLUDED.request_count,
      free_request_count = key_usage_daily.free_request_count + EXCLUDED.free_request_count
  ), activity AS (
    INSERT INTO activity_daily (organization_id, day, api_key_id, model, provider_name, workspace_id, user_id,
                                requests, prompt_tokens, completion_tokens, reasoning_tokens, usage, byok_usage)
    SELECT organization_id, day, api_key_id, model, coalesce(provider_name, ''), min(workspace_id::text)::uuid, min(user_id),
           count(*), sum(tokens_prompt), sum(tokens_completion), sum(coalesce(native_tokens_reasoning, 0)), sum(usage), sum(byok)
    FROM new GROUP BY organization_id, day, api_key_id, model, coalesce(provider_name, '')
    ORDER BY api_key_id, day, model, coalesce(provider_name, '')
    ON CONFLICT (api_key_id, day, model, provider_name) DO UPDATE SET
      requests = activity_daily.requests + EXCLUDED.requests,
      prompt_tokens = activity_daily.prompt_tokens + EXCLUDED.prompt_tokens,
      completion_tokens = activity_daily.completion_tokens + EXCLUDED.completion_tokens,
      reasoning_tokens = activity_daily.reasoning_tokens + EXCLUDED.reasoning_tokens,
      usage = activity_daily.usage + EXCLUDED.usage,
      byok_usage = activity_daily.byok_usage + EXCLUDED.byok_usage
  ), key_locks AS MATERIALIZED (
    SELECT id FROM api_keys WHERE id IN (SELECT api_key_id FROM new) ORDER BY id FOR NO KEY UPDATE
  ), key_totals AS (
    UPDATE api_keys k SET usage = k.usage + s.usage, byok_usage = k.byok_usage + s.byok, updated_at = $3
    FROM (SELECT api_key_id, sum(usage) AS usage, sum(byok) AS byok FROM new GROUP BY api_key_id) s
    WHERE k.id = s.api_key_id AND k.id IN (SELECT id FROM key_locks)
  ), org_sums AS (
    SELECT organization_id, sum(usage) AS usage FROM new GROUP BY organization_id HAVING sum(usage) <> 0 OR sum(byok) <> 0
  ), org_locks AS MATERIALIZED (
    SELECT id FROM organizations WHERE id IN (SELECT organization_id FROM org_sums) ORDER BY id FOR NO KEY UPDATE
  ), credits AS (
    UPDATE organizations o SET credit_balance = o.credit_balance - s.usage, total_usage = o.total_usage + s.usage, updated_at = $3
    FROM org_sums s
    WHERE o.id = s.organization_id AND o.id IN (SELECT id FROM org_locks) AND s.usage <> 0
  ),${rollupCtes('new')}
  SELECT id, store AS content_stored, organization_id, workspace_id::text AS workspace_id, api_key_id::text AS api_key_id FROM new`;

/** A recorded row's scope, as the statement answers it (what the events statement needs). */
export interface RecordedRow {
  id: string;
  content_stored: boolean;
  organization_id: string;
  workspace_id: string;
  api_key_id: string;
}

/** The events statement (spend alerts and generation traces) of a batch recorded at `now`, its values in $1.. order. */
export function eventsStatement(recorded: readonly RecordedRow[], now: Date): { text: string; values: unknown[] } {
  const query = alertsQuery(recorded, now);
  return { text: query.statement.text, values: [...orderedValues(query.statement, query.values)] };
}

/** The few pg client calls a recording transaction makes (a pool's client, or a Client). */
export interface RecordingClient {
  query(q: { name?: string; text: string; values?: unknown[] } | string): Promise<{ rows: unknown[] }>;
}

/**
 * One recording transaction as the recorder writes a batch, on `client`: BEGIN, the recorder's
 * statement for `ids.length` generations (each the template row with its id and created `now`,
 * recorded with `content`), the events statement of what it recorded, COMMIT (ROLLBACK on failure).
 * Answers the rows it recorded.
 */
export async function writeRecording(
  client: RecordingClient,
  template: { row: Record<string, unknown>; content: unknown },
  ids: readonly string[],
  now: Date,
): Promise<RecordedRow[]> {
  const createdAt = now.toISOString();
  const rows = ids.map((id) => ({ ...template.row, id, created_at: createdAt }));
  // As the service builds them: no BYOK spend, the UTC day of the time recorded, no reservation.
  const extras = ids.map((id) => ({ id, byok: '0', day: createdAt.slice(0, 10), content: template.content, reservation: null }));
  await client.query('BEGIN');
  try {
    const recorded = (await client.query({ name: 'floor-record', text: RECORD_TEXT, values: [JSON.stringify(rows), JSON.stringify(extras), now] }))
      .rows as RecordedRow[];
    if (recorded.length > 0) {
      const events = eventsStatement(recorded, now);
      await client.query({ name: 'floor-events', text: events.text, values: events.values });
    }
    await client.query('COMMIT');
    return recorded;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
