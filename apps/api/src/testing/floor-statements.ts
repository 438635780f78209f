// The statement each of these operations makes per answer, with its values, for the bench's
// database floor: an express app that makes the same round trip through node-postgres before
// answering fixed bytes, i.e. what any server of this schema pays at least for the answer on the
// same machine. The services build their statements' values through these same functions.
import type { Db } from '@switchyard/db';
import { GuardrailCache } from '../modules/guardrails/guardrail-cache.js';
import { limitChecks } from '@switchyard/rules';
import { reserveQuery } from '../modules/routing/routing-queries.js';
import { WorkspaceRoutingCache } from '../modules/routing/routing.service.js';

export { activityDays, activityQuery } from '../modules/account/activity-queries.js';
export { generationQuery } from '../modules/generations/generations-queries.js';
export { guardrailsPageQuery } from '../modules/guardrails/guardrails-queries.js';
export { createKeyQuery, keysPageQuery } from '../modules/keys/keys-queries.js';
export { MemberOrderCache } from '../modules/members/member-order.js';
export { membersByIdQuery } from '../modules/members/members-queries.js';
export { reserveQuery };

/**
 * routing.authorize's reservation of `cost` for the key `hash` (a paid model, or not): its
 * routing_reserve() statement, with the checks as the service builds them from the key, the
 * guardrails that apply to it and its workspace's budgets, read now (through the same caches,
 * keeping nothing).
 */
export async function reservationQuery(db: Db, hash: string, options: { id: string; cost: number; paid: boolean; now: Date; ttlMs: number }) {
  const key = await db.apiKey.findUniqueOrThrow({ where: { hash } });
  const actor = { kind: 'tenant' as const, key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
  const [guardrails, workspace] = await Promise.all([
    new GuardrailCache(0).applicable(db, actor),
    new WorkspaceRoutingCache(0).of(db, key.organization_id, key.workspace_id),
  ]);
  if (!workspace) throw new Error(`the workspace of key ${hash} is gone`);
  const checks = limitChecks(key, guardrails, workspace, options.paid, options.now);
  return reserveQuery(options.id, key, options.cost, checks, options.now, options.ttlMs);
}
