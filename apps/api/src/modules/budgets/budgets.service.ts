// Workspace budgets: at most one per interval, and each strictly smaller than the budget of every
// wider interval (lifetime > monthly > weekly > daily). include_byok_in_budgets is workspace-wide.
import { Prisma, type Budget as BudgetRow, type Db } from '@switchyard/db';
import type { Budget, BudgetInterval, DeleteBudgetInput, SetBudgetInput } from '@switchyard/schema';
import { Invalid, NotFound } from '../../errors.js';
import type { Actor } from '../../access/callers.js';
import { resolveWorkspace } from '../../access/workspaces.js';

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

export async function listBudgets(db: Db, actor: Actor, input: { id: string }) {
  const workspace = await resolveWorkspace(db, actor, input.id);
  // The enum's declaration order: daily, weekly, monthly, lifetime.
  const rows = await db.budget.findMany({ where: { workspace_id: workspace.id }, orderBy: { reset_interval: 'asc' } });
  return { data: rows.map(budgetOf), include_byok_in_budgets: workspace.include_byok_in_budgets };
}

export async function getBudget(db: Db, actor: Actor, input: { id: string; interval: BudgetInterval }) {
  const workspace = await resolveWorkspace(db, actor, input.id);
  const row = await db.budget.findUnique({
    where: { workspace_id_reset_interval: { workspace_id: workspace.id, reset_interval: input.interval } },
  });
  if (!row) throw new NotFound(`no ${input.interval} budget in workspace ${workspace.id}`);
  return { data: budgetOf(row), include_byok_in_budgets: workspace.include_byok_in_budgets };
}

/**
 * Creates or changes one interval's budget. The workspace row is locked for the check and the write,
 * so two concurrent changes cannot together break the ordering.
 */
export async function setBudget(db: Db, actor: Actor, input: SetBudgetInput): Promise<Budget> {
  return db.$transaction(async (tx) => {
    const workspace = await resolveWorkspace(tx, actor, input.workspace_id);
    await tx.$executeRaw`SELECT 1 FROM workspaces WHERE id = ${workspace.id}::uuid FOR UPDATE`;
    const limit = new Prisma.Decimal(input.limit_usd);
    const others = await tx.budget.findMany({
      where: { workspace_id: workspace.id, reset_interval: { not: input.reset_interval } },
      orderBy: { reset_interval: 'asc' },
    });
    const conflicts = others
      .filter((other) => {
        const wider = WIDTH[other.reset_interval] > WIDTH[input.reset_interval];
        return wider ? !limit.lessThan(other.limit_usd) : !other.limit_usd.lessThan(limit);
      })
      .map((other) => ({ reset_interval: other.reset_interval, limit_usd: other.limit_usd.toNumber() }));
    if (conflicts.length > 0) {
      throw new Invalid('budgets must strictly decrease from wider to narrower intervals', {
        reason: 'each budget must be strictly smaller than the budget of every wider interval (lifetime > monthly > weekly > daily)',
        conflicts,
      });
    }
    const row = await tx.budget.upsert({
      where: { workspace_id_reset_interval: { workspace_id: workspace.id, reset_interval: input.reset_interval } },
      create: {
        organization_id: actor.organizationId,
        workspace_id: workspace.id,
        reset_interval: input.reset_interval,
        limit_usd: limit,
      },
      update: { limit_usd: limit },
    });
    return budgetOf(row);
  });
}

export async function deleteBudget(db: Db, actor: Actor, input: DeleteBudgetInput) {
  const workspace = await resolveWorkspace(db, actor, input.workspace_id);
  const { count } = await db.budget.deleteMany({
    where: { workspace_id: workspace.id, reset_interval: input.reset_interval },
  });
  if (count === 0) throw new NotFound(`no ${input.reset_interval} budget in workspace ${workspace.id}`);
  return { deleted: true as const };
}
