// The procedures of the management writes that change which guardrails apply to the organization's
// keys (guardrails, their assignments, and what cascades to them: a workspace's deletion, a
// member's removal). Once such a write is done, committed or not, the guardrails this process keeps
// for those keys (GET /model's check) are forgotten, so the next request reads them again. Other
// processes forget them when the database announces the write (cache-events.ts).
import { heavyManagementProcedure, managementProcedure } from '../../trpc/init.js';
import type { GuardrailCache } from './guardrail-cache.js';

async function forgettingAfter<T>(guardrails: GuardrailCache, organizationId: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } finally {
    guardrails.forgetOrganization(organizationId);
  }
}

/** managementProcedure, forgetting the organization's guardrails after the call. */
export const guardrailWriteProcedure = managementProcedure.use(({ ctx, next }) => forgettingAfter(ctx.deps.guardrails, ctx.actor.organizationId, next));

/** heavyManagementProcedure (the organization's share of the server) for the bulk assignments (up to 100 keys or members a call). */
export const heavyGuardrailWriteProcedure = heavyManagementProcedure.use(({ ctx, next }) =>
  forgettingAfter(ctx.deps.guardrails, ctx.actor.organizationId, next),
);
