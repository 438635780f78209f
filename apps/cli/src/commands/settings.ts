// The organization's own settings, with a management key: the thresholds of its spend alerts
// (settings.alerts, settings.updateAlerts; docs/events.md), and how long its generation content is
// kept (settings.retention, settings.updateRetention; docs/operations.md#retention).
import { type Command, optionalString, UsageError } from '../command.js';
import { renderRecord } from '../output.js';

/** --thresholds: a comma-separated list of percentages, "none" (no threshold alerts) or "default" (50,80,100). */
function thresholdsOf(value: string | undefined): number[] | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'default') return null;
  if (value === 'none') return [];
  const list = value.split(',').map((part) => part.trim());
  const numbers = list.map(Number);
  if (list.some((part) => part === '') || numbers.some((n) => !Number.isInteger(n) || n < 1 || n > 1000)) {
    throw new UsageError(`--thresholds must be whole percentages from 1 to 1000 separated by commas, "none" or "default", not "${value}"`);
  }
  return numbers;
}

/** --credits-low-usd: an amount in USD, or "off" (credits.low never fires). */
function creditsLowOf(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'off') return null;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`--credits-low-usd must be an amount >= 0 or "off", not "${value}"`);
  return n;
}

/** --days: whole days from 1 to 3650. */
function retentionDaysOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 1 || n > 3650) throw new UsageError(`--days must be whole days from 1 to 3650, not "${value}"`);
  return n;
}

export const settingsCommands: Command[] = [
  {
    path: ['settings', 'alerts'],
    summary: "Show the organization's alert thresholds (limit.threshold_crossed, credits.low); change them with the options",
    options: {
      thresholds: { type: 'string', value: '<percents>', description: 'e.g. 50,80,100; "none": no threshold alerts; "default": 50,80,100' },
      'credits-low-usd': { type: 'string', value: '<usd>', description: 'credits.low under this balance; "off": never' },
    },
    async run(ctx) {
      const alert_thresholds = thresholdsOf(optionalString(ctx, 'thresholds'));
      const credits_low_usd = creditsLowOf(optionalString(ctx, 'credits-low-usd'));
      const settings =
        alert_thresholds === undefined && credits_low_usd === undefined
          ? await ctx.client.settings.alerts.query()
          : await ctx.client.settings.updateAlerts.mutate({
              ...(alert_thresholds !== undefined ? { alert_thresholds } : {}),
              ...(credits_low_usd !== undefined ? { credits_low_usd } : {}),
            });
      const { alert_thresholds: shown, ...rest } = settings.data;
      return { json: settings, human: renderRecord({ alert_thresholds: shown.length === 0 ? 'none' : shown.join(','), ...rest }) };
    },
  },
  {
    path: ['settings', 'retention'],
    summary: "Show how long the organization's generation content is kept; change it with --days or --keep-forever",
    options: {
      days: { type: 'string', value: '<n>', description: 'delete stored content of generations older than n days (1-3650); the generations stay' },
      'keep-forever': { type: 'boolean', description: 'keep stored content for good (the default)' },
    },
    async run(ctx) {
      const days = retentionDaysOf(optionalString(ctx, 'days'));
      const forever = ctx.options['keep-forever'] === true;
      if (days !== undefined && forever) throw new UsageError('give --days or --keep-forever, not both');
      const settings =
        days === undefined && !forever
          ? await ctx.client.settings.retention.query()
          : await ctx.client.settings.updateRetention.mutate({ content_retention_days: forever ? null : days! });
      const { content_retention_days, ...rest } = settings.data;
      return { json: settings, human: renderRecord({ content_retention_days: content_retention_days === null ? 'forever' : content_retention_days, ...rest }) };
    },
  },
];
