// routing.authorize's reservation: the one statement (routing_reserve()) that holds an amount
// against every limit that applies, exact across replicas, with its values; the bench's database
// floor makes the same (through statements.ts). It holds an exact amount (min = wanted: a decision's
// estimated cost) or the most it can between min and wanted (a partial grant). Reservations of one
// organization waiting together go in one statement (routing_reserve_many()), decided in order.
import { type ApiKey, namedStatement } from '@switchyard/db';
import { z } from 'zod';
import { type LimitCheck, sqlCheck } from './spend.js';

const RESERVE = namedStatement(
  `SELECT reserved, granted::text AS granted, name, remaining::text AS remaining
   FROM routing_reserve(:reservation_id::uuid, :organization_id, :workspace_id::uuid, :key_id::uuid, :min::numeric, :wanted::numeric,
                        :checks::jsonb, :now::timestamptz, :expires_at::timestamptz)`,
  z.object({ reserved: z.boolean(), granted: z.string(), name: z.string().nullable(), remaining: z.string().nullable() }),
);

const RESERVE_MANY = namedStatement(
  `SELECT request, reserved, granted::text AS granted, name, remaining::text AS remaining
   FROM routing_reserve_many(:organization_id, :requests::jsonb)`,
  z.object({ request: z.number().int(), reserved: z.boolean(), granted: z.string(), name: z.string().nullable(), remaining: z.string().nullable() }),
);

/** What to hold: exactly `min` when min = wanted, else the most that every check has left up to `wanted`, at least `min`. */
export interface HoldRange {
  min: number;
  wanted: number;
}

/** The reservation's one statement and its values (also the bench's database floor, through statements.ts). */
export function reserveQuery(
  id: string,
  key: Pick<ApiKey, 'id' | 'organization_id' | 'workspace_id'>,
  amount: number | HoldRange,
  checks: readonly LimitCheck[],
  now: Date,
  ttlMs: number,
) {
  const range = typeof amount === 'number' ? { min: amount, wanted: amount } : amount;
  return {
    statement: RESERVE,
    values: {
      reservation_id: id,
      organization_id: key.organization_id,
      workspace_id: key.workspace_id,
      key_id: key.id,
      min: String(range.min),
      wanted: String(range.wanted),
      checks: JSON.stringify(checks.map(sqlCheck)),
      now,
      expires_at: new Date(now.getTime() + ttlMs),
    },
  };
}

/** One reservation's inputs, as reserveQuery takes them. */
export interface Reservation {
  id: string;
  key: Pick<ApiKey, 'id' | 'organization_id' | 'workspace_id'>;
  amount: HoldRange;
  checks: readonly LimitCheck[];
  now: Date;
  ttlMs: number;
}

/** Several reservations of one organization (the first's) in one statement, decided in their order. */
export function reserveManyQuery(reservations: readonly [Reservation, ...Reservation[]]) {
  return {
    statement: RESERVE_MANY,
    values: {
      organization_id: reservations[0].key.organization_id,
      requests: JSON.stringify(
        reservations.map((r) => ({
          id: r.id,
          workspace_id: r.key.workspace_id,
          key_id: r.key.id,
          min: String(r.amount.min),
          wanted: String(r.amount.wanted),
          checks: r.checks.map(sqlCheck),
          now: r.now.toISOString(),
          expires_at: new Date(r.now.getTime() + r.ttlMs).toISOString(),
        })),
      ),
    },
  };
}
