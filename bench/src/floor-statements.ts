// The statement each of these operations makes per answer, with its values, for the bench's
// database floor: an express app that makes the same round trip through node-postgres before
// answering fixed bytes, i.e. what any server of this schema pays at least for the answer on the
// same machine. The services build their statements' values through the same functions, which the
// server's package exports for this (`@switchyard/api/statements`).
import { GuardrailCache, limitChecks, type Reservation, reserveQuery, WorkspaceRoutingCache } from '@switchyard/api/statements';
import type { Db } from '@switchyard/db';

export {
  activityDays,
  activityQuery,
  createKeyQuery,
  generationQuery,
  guardrailsPageQuery,
  keysPageQuery,
  MemberOrderCache,
  membersByIdQuery,
  reserveQuery,
} from '@switchyard/api/statements';

/**
 * routing.authorize's reservation of `cost` for the key `hash` (a paid model, or not): its inputs,
 * with the checks as the service builds them from the key, the guardrails that apply to it and its
 * workspace's budgets, read now (through the same caches, keeping nothing).
 */
export async function reservationOf(
  db: Db,
  hash: string,
  options: { id: string; cost: number; paid: boolean; now: Date; ttlMs: number },
): Promise<Reservation> {
  const key = await db.apiKey.findUniqueOrThrow({ where: { hash } });
  const actor = { kind: 'tenant' as const, key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
  const [guardrails, workspace] = await Promise.all([
    new GuardrailCache(0).applicable(db, actor),
    new WorkspaceRoutingCache(0).of(db, key.organization_id, key.workspace_id),
  ]);
  if (!workspace) throw new Error(`the workspace of key ${hash} is gone`);
  const checks = limitChecks(key, guardrails, workspace, options.paid, options.now);
  const { id, organization_id, workspace_id } = key;
  return {
    id: options.id,
    key: { id, organization_id, workspace_id },
    amount: { min: options.cost, wanted: options.cost },
    checks,
    now: options.now,
    ttlMs: options.ttlMs,
  };
}

/** The routing_reserve() statement of that reservation, alone: what the server makes for a reservation that waits for no other. */
export async function reservationQuery(db: Db, hash: string, options: { id: string; cost: number; paid: boolean; now: Date; ttlMs: number }) {
  const r = await reservationOf(db, hash, options);
  return reserveQuery(r.id, r.key, r.amount, r.checks, r.now, r.ttlMs);
}
