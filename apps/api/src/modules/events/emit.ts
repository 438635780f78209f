// The events outbox (table `events`, migration "events_outbox"; decision 0018): an event is emitted
// exactly once, as one row per cause. `cause` is unique, and every write is an INSERT ... ON
// CONFLICT (cause) DO NOTHING: a second emit of the same cause, by another transaction or another
// replica, is a no-op that keeps the first row and its id. delivery.ts delivers these rows (at least
// once, always with the row's id); nothing here delivers.
import { randomUUID } from 'node:crypto';
import { type Db, namedStatement, Prisma, queryRows, rawRows } from '@switchyard/db';
import { z } from 'zod';

/** One event to emit. */
export interface EventInput {
  /** What happened, e.g. `routing.refused`; the payload's shape follows from it (docs/routing.md#refusal-events). */
  type: string;
  /** What caused it, unique across every event: the same cause is emitted once. */
  cause: string;
  organizationId: string;
  /** The workspace the event concerns; null for organization-wide events. */
  workspaceId: string | null;
  payload: Prisma.InputJsonObject;
  /** When it happened (default: the database's now()). */
  at?: Date;
}

/** A client for emitEvent: the Prisma client, or a transaction's (to emit with what caused the event). */
type Client = Pick<Prisma.TransactionClient, '$queryRaw' | '$queryRawUnsafe'>;

const INSERTED = z.object({ id: z.string() });

/**
 * Emits one event: inside `tx`'s transaction when it is one, so that the event commits (or rolls
 * back) with what caused it. Answers the new row's id, or null when its cause was already emitted
 * (or is being emitted by a transaction that then commits).
 */
export async function emitEvent(tx: Client, event: EventInput): Promise<{ id: string | null }> {
  const [row] = await rawRows(
    tx,
    INSERTED,
    Prisma.sql`INSERT INTO events (id, organization_id, workspace_id, type, cause, payload, created_at)
      VALUES (${randomUUID()}::uuid, ${event.organizationId}, ${event.workspaceId}::uuid, ${event.type}, ${event.cause},
        ${JSON.stringify(event.payload)}::jsonb, coalesce(${event.at ?? null}::timestamptz, now()))
      ON CONFLICT (cause) DO NOTHING
      RETURNING id::text AS id`,
  );
  return { id: row?.id ?? null };
}

/** What became of each event of a batch. */
export type BatchOutcome = 'written' | 'duplicate' | 'orphaned';

/*
 * One statement for a whole batch, any size (arrays, not one placeholder per value). Rows are
 * inserted in cause order, so that two replicas writing overlapping batches take the unique
 * index's locks in the same order and cannot deadlock. An event of an organization that no longer
 * exists is skipped (orphaned), not left to fail every later batch on the foreign key.
 */
const INSERT_BATCH = namedStatement(
  `WITH batch AS (
     SELECT * FROM unnest(:ids::uuid[], :organization_ids::text[], :workspace_ids::uuid[], :types::text[], :causes::text[], :payloads::jsonb[],
                          :created_ats::timestamptz[])
       AS b(id, organization_id, workspace_id, type, cause, payload, created_at)
   ), inserted AS (
     INSERT INTO events (id, organization_id, workspace_id, type, cause, payload, created_at)
     SELECT b.id, b.organization_id, b.workspace_id, b.type, b.cause, b.payload, b.created_at
       FROM batch b JOIN organizations o ON o.id = b.organization_id
      ORDER BY b.cause
     ON CONFLICT (cause) DO NOTHING
     RETURNING cause
   )
   SELECT b.cause,
          CASE WHEN i.cause IS NOT NULL THEN 'written'
               WHEN EXISTS (SELECT 1 FROM organizations o WHERE o.id = b.organization_id) THEN 'duplicate'
               ELSE 'orphaned' END AS outcome
     FROM batch b LEFT JOIN inserted i ON i.cause = b.cause`,
  z.object({ cause: z.string(), outcome: z.enum(['written', 'duplicate', 'orphaned']) }),
);

/**
 * Emits a batch of events in one statement, outside any transaction (for writers that collect
 * events in memory, like RefusalEvents). Answers each cause's outcome: written (this call inserted
 * it), duplicate (already emitted) or orphaned (its organization is gone). Causes must be distinct.
 */
export async function emitEvents(db: Db, events: readonly (EventInput & { at: Date })[]): Promise<Map<string, BatchOutcome>> {
  if (events.length === 0) return new Map();
  const rows = await queryRows(db, INSERT_BATCH, {
    ids: events.map(() => randomUUID()),
    organization_ids: events.map((e) => e.organizationId),
    workspace_ids: events.map((e) => e.workspaceId),
    types: events.map((e) => e.type),
    causes: events.map((e) => e.cause),
    payloads: events.map((e) => JSON.stringify(e.payload)),
    created_ats: events.map((e) => e.at),
  });
  return new Map(rows.map((r) => [r.cause, r.outcome]));
}
