import { optionalNumber, positional, UsageError, type Command, type CommandContext } from '../command.js';
import { renderRecord } from '../output.js';

const INTERVALS = ['daily', 'weekly', 'monthly', 'lifetime'] as const;
type Interval = (typeof INTERVALS)[number];

function intervalOf(ctx: CommandContext): Interval {
  const interval = positional(ctx, 1, '<interval>');
  if (!(INTERVALS as readonly string[]).includes(interval)) throw new UsageError(`<interval> must be one of ${INTERVALS.join(', ')}`);
  return interval as Interval;
}

export const budgetCommands: Command[] = [
  {
    path: ['budgets', 'set'],
    summary: "Set a workspace's budget for one interval (each below every wider interval's)",
    args: ['<workspace>', '<daily|weekly|monthly|lifetime>'],
    options: {
      limit: { type: 'string', value: '<usd>', description: 'the budget in USD (required)' },
      'include-byok': { type: 'boolean', description: "count BYOK spend in the workspace's budgets (all intervals)" },
      'exclude-byok': { type: 'boolean', description: "don't count BYOK spend in the workspace's budgets" },
    },
    async run(ctx) {
      const interval = intervalOf(ctx);
      const limit = optionalNumber(ctx, 'limit');
      if (limit === undefined) throw new UsageError('--limit is required');
      const byok = ctx.options['include-byok'] === true ? true : ctx.options['exclude-byok'] === true ? false : undefined;
      const budget = await ctx.client.budgets.set.mutate({
        workspace_ref: positional(ctx, 0, '<workspace>'),
        interval,
        limit_usd: limit,
        ...(byok === undefined ? {} : { include_byok_in_budgets: byok }),
      });
      return { json: budget, human: renderRecord({ ...budget.data, include_byok_in_budgets: budget.include_byok_in_budgets }) };
    },
  },
  {
    path: ['budgets', 'delete'],
    summary: "Delete a workspace's budget for one interval (done also when there was none)",
    args: ['<workspace>', '<daily|weekly|monthly|lifetime>'],
    async run(ctx) {
      const result = await ctx.client.budgets.delete.mutate({ workspace_ref: positional(ctx, 0, '<workspace>'), interval: intervalOf(ctx) });
      return { json: result, human: 'deleted' };
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
