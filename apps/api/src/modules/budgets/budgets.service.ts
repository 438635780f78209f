// Workspace budgets: at most one per interval, and each strictly smaller than the budget of every
// wider interval (lifetime > monthly > weekly > daily). include_byok_in_budgets is workspace-wide.
import { Prisma, type Budget as BudgetRow } from '@switchyard/db';
import type { Budget, BudgetInterval, DeleteBudgetInput, SetBudgetInput } from '@switchyard/schema';
import { Invalid, NotFound } from '../../lib/errors.js';
import type { Actor } from '../../access/callers.js';
import { tenantData } from '../../access/tenancy.js';
import { resolveWorkspace } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfTenant, changedFields, removed } from '../audit/audit.js';

/** Narrowest first. */
const WIDTH: Record<BudgetInterval, number> = { daily: 0, weekly: 1, monthly: 2, lifetime: 3 };

function budgetOf(row: BudgetRow): Budget {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    limit_usd: row.limit_usd.toNumber(),
    reset_interval: row.reset_interval,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } satisfies Budget;
}

/** The workspace's budgets, narrowest interval first, with its include_byok_in_budgets. */
export async function listBudgets(deps: Uses<'db'>, actor: Actor, input: { id: string }) {
  const { db } = deps;
  const workspace = await resolveWorkspace(db, actor, input.id);
  // The enum's declaration order: daily, weekly, monthly, lifetime.
  const rows = await db.budget.findMany({ where: { workspace_id: workspace.id }, orderBy: { reset_interval: 'asc' } });
  return { budgets: rows.map(budgetOf), include_byok_in_budgets: workspace.include_byok_in_budgets };
}

export async function getBudget(deps: Uses<'db'>, actor: Actor, input: { id: string; interval: BudgetInterval }) {
  const { db } = deps;
  const workspace = await resolveWorkspace(db, actor, input.id);
  const row = await db.budget.findUnique({
    where: { workspace_id_reset_interval: { workspace_id: workspace.id, reset_interval: input.interval } },
  });
  if (!row) throw new NotFound(`no ${input.interval} budget in workspace ${workspace.id}`);
  return { budget: budgetOf(row), include_byok_in_budgets: workspace.include_byok_in_budgets };
}

/**
 * PUT: creates or replaces one interval's budget, and sets include_byok_in_budgets when given. The
 * workspace row is locked for the check and the writes, so two concurrent changes cannot together
 * break the ordering; enforcement reads the new value from the next request on.
 */
export async function setBudget(deps: Uses<'db' | Audited>, actor: Actor, input: SetBudgetInput) {
  const audit = auditOfTenant(actor, deps);
  return deps.db.$transaction(async (tx) => {
    const workspace = await resolveWorkspace(tx, actor, input.workspace_ref);
    await tx.$executeRaw`SELECT 1 FROM workspaces WHERE id = ${workspace.id}::uuid FOR UPDATE`;
    const limit = new Prisma.Decimal(input.limit_usd);
    const others = await tx.budget.findMany({
      where: { workspace_id: workspace.id, reset_interval: { not: input.interval } },
      orderBy: { reset_interval: 'asc' },
    });
    const conflicts = others
      .filter((other) => {
        const wider = WIDTH[other.reset_interval] > WIDTH[input.interval];
        return wider ? !limit.lessThan(other.limit_usd) : !other.limit_usd.lessThan(limit);
      })
      .map((other) => ({ reset_interval: other.reset_interval, limit_usd: other.limit_usd.toNumber() }));
    if (conflicts.length > 0) {
      throw new Invalid('budgets must strictly decrease from wider to narrower intervals', {
        reason: 'each budget must be strictly smaller than the budget of every wider interval (lifetime > monthly > weekly > daily)',
        conflicts,
      });
    }
    const before = await tx.budget.findUnique({ where: { workspace_id_reset_interval: { workspace_id: workspace.id, reset_interval: input.interval } } });
    const row = await tx.budget.upsert({
      where: { workspace_id_reset_interval: { workspace_id: workspace.id, reset_interval: input.interval } },
      create: {
        ...tenantData(actor),
        workspace_id: workspace.id,
        reset_interval: input.interval,
        limit_usd: limit,
      },
      update: { limit_usd: limit },
    });
    let includeByok = workspace.include_byok_in_budgets;
    if (input.include_byok_in_budgets !== undefined && input.include_byok_in_budgets !== includeByok) {
      await tx.workspace.update({ where: { id: workspace.id }, data: { include_byok_in_budgets: input.include_byok_in_budgets } });
      includeByok = input.include_byok_in_budgets;
    }
    await appendAudit(tx, audit, {
      action: 'budgets.set',
      targetType: 'workspace',
      targetId: workspace.id,
      changes: changedFields(
        { interval: input.interval, limit_usd: before ? before.limit_usd.toNumber() : null, include_byok_in_budgets: workspace.include_byok_in_budgets },
        { interval: input.interval, limit_usd: row.limit_usd.toNumber(), include_byok_in_budgets: includeByok },
        ['limit_usd', 'include_byok_in_budgets'],
      ),
    });
    return { budget: budgetOf(row), include_byok_in_budgets: includeByok };
  });
}

/** DELETE: removes one interval's budget; deleted also when there was none (admin-api.md A13). */
export async function deleteBudget(deps: Uses<'db' | Audited>, actor: Actor, input: DeleteBudgetInput) {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const workspace = await resolveWorkspace(db, actor, input.workspace_ref);
  await db.$transaction(async (tx) => {
    const gone = await tx.budget.findMany({ where: { workspace_id: workspace.id, reset_interval: input.interval } });
    await tx.budget.deleteMany({ where: { workspace_id: workspace.id, reset_interval: input.interval } });
    await appendAudit(tx, audit, {
      action: 'budgets.delete',
      targetType: 'workspace',
      targetId: workspace.id,
      changes: removed({ interval: input.interval, limit_usd: gone[0] ? gone[0].limit_usd.toNumber() : null }),
    });
  });
  return { deleted: true as const };
}
