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

/** PUT /workspaces/{workspace_ref}/budgets/{interval} (A12): create or replace one interval's budget. */
export const SetBudgetInputSchema = z.object({
  workspace_ref: WorkspaceRefSchema,
  interval: BudgetIntervalSchema,
  limit_usd: z.number().positive().max(1e15).describe('USD, > 0; strictly decreasing from lifetime to daily'),
  include_byok_in_budgets: includeByok.optional().describe('Workspace-wide (all intervals); omitted = unchanged'),
});
export type SetBudgetInput = z.infer<typeof SetBudgetInputSchema>;
export const SetBudgetOutputSchema = z.object({ data: BudgetSchema, include_byok_in_budgets: includeByok.optional() });

/** DELETE /workspaces/{workspace_ref}/budgets/{interval} (A13): deleted, whether or not a budget existed. */
export const DeleteBudgetInputSchema = z.object({ workspace_ref: WorkspaceRefSchema, interval: BudgetIntervalSchema });
export type DeleteBudgetInput = z.infer<typeof DeleteBudgetInputSchema>;
