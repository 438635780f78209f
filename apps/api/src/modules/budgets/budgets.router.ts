import {
  DeleteBudgetInputSchema,
  DeletedOutputSchema,
  GetBudgetInputSchema,
  GetBudgetOutputSchema,
  ListBudgetsInputSchema,
  ListBudgetsOutputSchema,
  SetBudgetInputSchema,
  SetBudgetOutputSchema,
} from '@switchyard/schema';
import { managementProcedure, router } from '../../trpc/init.js';
import { deleteBudget, getBudget, listBudgets, setBudget } from './budgets.service.js';

export const budgetsRouter = router({
  // Literal-suffix path first: trpc-to-openapi matches in router order.
  get: managementProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/workspaces/{id}/budgets/{interval}',
        protect: true,
        tags: ['Workspaces'],
        summary: 'Get the budget of one interval',
        description: 'Retrieves the budget of one interval (daily, weekly, monthly or lifetime). Management key required.',
      },
    })
    .input(GetBudgetInputSchema)
    .output(GetBudgetOutputSchema)
    .query(({ ctx, input }) => getBudget(ctx.db, ctx.actor, input)),
  list: managementProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/workspaces/{id}/budgets',
        protect: true,
        tags: ['Workspaces'],
        summary: 'List workspace budgets',
        description: 'Lists all budgets of a workspace. Management key required.',
      },
    })
    .input(ListBudgetsInputSchema)
    .output(ListBudgetsOutputSchema)
    .query(({ ctx, input }) => listBudgets(ctx.db, ctx.actor, input)),

  set: managementProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/workspaces/{workspace_ref}/budgets/{interval}',
        protect: true,
        tags: ['Workspaces'],
        summary: 'Create or replace the budget of one interval',
        description:
          'Limits must strictly decrease as the interval narrows (lifetime > monthly > weekly > daily); enforcement uses the new value at once. Management key required.',
      },
    })
    .input(SetBudgetInputSchema)
    .output(SetBudgetOutputSchema)
    .mutation(({ ctx, input }) => setBudget(ctx.db, ctx.actor, input)),
  delete: managementProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/workspaces/{workspace_ref}/budgets/{interval}',
        protect: true,
        tags: ['Workspaces'],
        summary: 'Delete the budget of one interval',
        description: 'Answers deleted also when the interval had no budget. Management key required.',
      },
    })
    .input(DeleteBudgetInputSchema)
    .output(DeletedOutputSchema)
    .mutation(({ ctx, input }) => deleteBudget(ctx.db, ctx.actor, input)),
});
