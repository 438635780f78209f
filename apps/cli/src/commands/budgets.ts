import { optionalNumber, positional, UsageError, type Command } from '../command.js';
import { renderRecord } from '../output.js';

const INTERVALS = ['daily', 'weekly', 'monthly', 'lifetime'] as const;
type Interval = (typeof INTERVALS)[number];

export const budgetCommands: Command[] = [
  {
    path: ['budgets', 'set'],
    summary: "Set a workspace's budget for one interval (each below every wider interval's)",
    args: ['<workspace>', '<daily|weekly|monthly|lifetime>'],
    options: { limit: { type: 'string', value: '<usd>', description: 'the budget in USD (required)' } },
    async run(ctx) {
      const interval = positional(ctx, 1, '<interval>');
      if (!(INTERVALS as readonly string[]).includes(interval)) throw new UsageError(`<interval> must be one of ${INTERVALS.join(', ')}`);
      const limit = optionalNumber(ctx, 'limit');
      if (limit === undefined) throw new UsageError('--limit is required');
      const budget = await ctx.client.budgets.set.mutate({
        workspace_id: positional(ctx, 0, '<workspace>'),
        reset_interval: interval as Interval,
        limit_usd: limit,
      });
      return { json: budget, human: renderRecord({ ...budget }) };
    },
  },
  {
    path: ['budgets', 'list'],
    summary: "List a workspace's budgets",
    args: ['<workspace>'],
    async run(ctx) {
      const budgets = await ctx.client.budgets.list.query({ id: positional(ctx, 0, '<workspace>') });
      return {
        json: budgets,
        human: `${budgets.data.length === 0 ? 'no budgets' : ''}${budgets.data
          .map((b) => `${b.reset_interval.padEnd(9)} ${b.limit_usd} USD`)
          .join('\n')}\ninclude_byok_in_budgets: ${budgets.include_byok_in_budgets}`.trim(),
      };
    },
  },
];
