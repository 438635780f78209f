// routing.authorize's reservation: the one statement (routing_reserve()) that holds an estimated cost
// against every limit that applies, exact across replicas, with its values; the bench's database
// floor makes the same (floor-statements.ts).
import { type ApiKey, namedStatement } from '@switchyard/db';
import { z } from 'zod';
import { type LimitCheck, sqlCheck } from './spend.js';

const RESERVE = namedStatement(
  `SELECT reserved, name, remaining::text AS remaining
   FROM routing_reserve(:reservation_id::uuid, :organization_id, :workspace_id::uuid, :key_id::uuid, :amount::numeric, :checks::jsonb,
                        :now::timestamptz, :expires_at::timestamptz)`,
  z.object({ reserved: z.boolean(), name: z.string().nullable(), remaining: z.string().nullable() }),
);

/** The reservation's one statement and its values (also the bench's database floor: floor-statements.ts). */
export function reserveQuery(
  id: string,
  key: Pick<ApiKey, 'id' | 'organization_id' | 'workspace_id'>,
  cost: number,
  checks: readonly LimitCheck[],
  now: Date,
  ttlMs: number,
) {
  return {
    statement: RESERVE,
    values: {
      reservation_id: id,
      organization_id: key.organization_id,
      workspace_id: key.workspace_id,
      key_id: key.id,
      amount: String(cost),
      checks: JSON.stringify(checks.map(sqlCheck)),
      now,
      expires_at: new Date(now.getTime() + ttlMs),
    },
  };
}
