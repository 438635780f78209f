// routing.authorize's reservation: the one statement (routing_reserve()) that holds an estimated cost
// against every limit that applies, exact across replicas, with its values; the bench's database
// floor makes the same (floor-statements.ts).
import { type ApiKey, statement } from '@switchyard/db';
import { z } from 'zod';
import { type LimitCheck, sqlCheck } from './spend.js';

const RESERVE = statement(
  `SELECT reserved, name, remaining::text AS remaining FROM routing_reserve($1::uuid, $2, $3::uuid, $4::uuid, $5::numeric, $6::jsonb, $7::timestamptz, $8::timestamptz)`,
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
    values: [id, key.organization_id, key.workspace_id, key.id, String(cost), JSON.stringify(checks.map(sqlCheck)), now, new Date(now.getTime() + ttlMs)],
  };
}
