// routing.authorize's reservation: the one statement (routing_reserve()) that holds an amount
// against every limit that applies, exact across replicas, with its values; the bench's database
// floor makes the same (through statements.ts). It holds an exact amount (min = wanted: a decision's
// estimated cost) or the most it can between min and wanted (a partial grant).
import { type ApiKey, namedStatement } from '@switchyard/db';
import { z } from 'zod';
import { type LimitCheck, sqlCheck } from './spend.js';

const RESERVE = namedStatement(
  `SELECT reserved, granted::text AS granted, name, remaining::text AS remaining
   FROM routing_reserve(:reservation_id::uuid, :organization_id, :workspace_id::uuid, :key_id::uuid, :min::numeric, :wanted::numeric,
                        :checks::jsonb, :now::timestamptz, :expires_at::timestamptz)`,
  z.object({ reserved: z.boolean(), granted: z.string(), name: z.string().nullable(), remaining: z.string().nullable() }),
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
