import { z } from 'zod';
import { TimestampSchema } from './common.js';
import { WorkspaceRefSchema } from './workspaces.js';

/** Narrowest first; each budget must be strictly smaller than every wider one. */
export const BudgetIntervalSchema = z.enum(['daily', 'weekly', 'monthly', 'lifetime']);
export type BudgetInterval = z.infer<typeof BudgetIntervalSchema>;

export const BudgetSchema = z
  .object({
    id: z.string(),
    workspace_id: z.string(),
    limit_usd: z.number(),
    reset_interval: BudgetIntervalSchema.describe('lifetime is a one-time budget that never resets'),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .describe('A workspace spending budget');
export type Budget = z.infer<typeof BudgetSchema>;

const includeByok = z.boolean().describe('Whether BYOK spend counts when budgets are enforced (workspace-wide)');

export const ListBudgetsInputSchema = z.object({ id: WorkspaceRefSchema });
export const ListBudgetsOutputSchema = z.object({ data: z.array(BudgetSchema), include_byok_in_budgets: includeByok });

export const GetBudgetInputSchema = z.object({ id: WorkspaceRefSchema, interval: BudgetIntervalSchema });
export const GetBudgetOutputSchema = z.object({ data: BudgetSchema, include_byok_in_budgets: includeByok });

/** Internal (tRPC): create or change the budget of one interval. */
export const SetBudgetInputSchema = z.object({
  workspace_id: WorkspaceRefSchema,
  reset_interval: BudgetIntervalSchema,
  limit_usd: z.number().nonnegative().max(1e15),
});
export type SetBudgetInput = z.infer<typeof SetBudgetInputSchema>;

/** Internal (tRPC): remove the budget of one interval. */
export const DeleteBudgetInputSchema = z.object({ workspace_id: WorkspaceRefSchema, reset_interval: BudgetIntervalSchema });
export type DeleteBudgetInput = z.infer<typeof DeleteBudgetInputSchema>;
export const DeleteBudgetOutputSchema = z.object({ deleted: z.literal(true) });
