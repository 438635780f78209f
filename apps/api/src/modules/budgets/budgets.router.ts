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
import { answers, WHY } from '@switchyard/schema';

export const budgetsRouter = router({
  get: managementProcedure
    .meta({
      scope: 'budgets:read',
      openapi: {
        method: 'GET',
        path: '/workspaces/{id}/budgets/{interval}',
        protect: true,
        tags: ['Workspaces'],
        summary: 'Get the budget of one interval',
        description: 'Retrieves the budget of one interval (daily, weekly, monthly or lifetime). Management key required.',
      },
      statuses: answers({
        400: `interval not one of daily, weekly, monthly, lifetime; ${WHY.longId}; ${WHY.unstorable}`,
        403: WHY.managementOnly,
        404: "no workspace with that UUID or slug in the key's organization, or no budget for that interval",
      }),
      listed: [400, 401, 404, 500],
    })
    .input(GetBudgetInputSchema)
    .output(GetBudgetOutputSchema)
    .query(async ({ ctx, input }) => {
      const { budget, include_byok_in_budgets } = await getBudget(ctx.deps, ctx.actor, input);
      return { data: budget, include_byok_in_budgets };
    }),
  list: managementProcedure
    .meta({
      scope: 'budgets:read',
      openapi: {
        method: 'GET',
        path: '/workspaces/{id}/budgets',
        protect: true,
        tags: ['Workspaces'],
        summary: 'List workspace budgets',
        description: 'Lists all budgets of a workspace. Management key required.',
      },
      statuses: answers({
        403: WHY.managementOnly,
        404: `no workspace with that UUID or slug in the key's organization; ${WHY.namesNothing}`,
      }),
      listed: [401, 404, 500],
    })
    .input(ListBudgetsInputSchema)
    .output(ListBudgetsOutputSchema)
    .query(async ({ ctx, input }) => {
      const { budgets, include_byok_in_budgets } = await listBudgets(ctx.deps, ctx.actor, input);
      return { data: budgets, include_byok_in_budgets };
    }),

  set: managementProcedure
    .meta({
      scope: 'budgets:write',
      openapi: {
        method: 'PUT',
        path: '/workspaces/{workspace_ref}/budgets/{interval}',
        protect: true,
        tags: ['Workspaces'],
        summary: 'Create or replace the budget of one interval',
        description:
          'Limits must strictly decrease as the interval narrows (lifetime > monthly > weekly > daily); enforcement uses the new value at once. Management key required.',
      },
      statuses: answers({
        400: `interval not daily, weekly, monthly or lifetime; limit_usd not > 0, or not strictly between the wider and narrower intervals' budgets (naming the conflicts); ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        404: WHY.noWorkspace,
      }),
      listed: [400, 401, 404, 500],
    })
    .input(SetBudgetInputSchema)
    .output(SetBudgetOutputSchema)
    .mutation(async ({ ctx, input }) => {
      const { budget, include_byok_in_budgets } = await setBudget(ctx.deps, ctx.actor, input);
      return { data: budget, include_byok_in_budgets };
    }),
  delete: managementProcedure
    .meta({
      scope: 'budgets:write',
      openapi: {
        method: 'DELETE',
        path: '/workspaces/{workspace_ref}/budgets/{interval}',
        protect: true,
        tags: ['Workspaces'],
        summary: 'Delete the budget of one interval',
        description: 'Answers deleted also when the interval had no budget. Management key required.',
      },
      statuses: answers({
        400: `interval not daily, weekly, monthly or lifetime; ${WHY.longId}; ${WHY.unstorable}`,
        403: WHY.managementOnly,
        404: WHY.noWorkspace,
      }),
      listed: [400, 401, 404, 500],
    })
    .input(DeleteBudgetInputSchema)
    .output(DeletedOutputSchema)
    .mutation(({ ctx, input }) => deleteBudget(ctx.deps, ctx.actor, input)),
});
