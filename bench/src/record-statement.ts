// The recording transaction's statements, for the recording database floor (floor.ts, `record`).
// The recorder's own statement and the events statement after it, as the server's package exports
// them; bench/test/record-statement.test.ts checks that they are what the server sends.
import { alertsQuery, RECORD_BATCH } from '@switchyard/api/statements';
import { orderedValues } from '@switchyard/db';

/** The recorder's statement: $1 the generation rows (JSON), $2 their extras (JSON), $3 now. */
export const RECORD_TEXT = RECORD_BATCH.text;

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
