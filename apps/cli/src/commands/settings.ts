// The organization's own settings, with a management key: the thresholds of its spend alerts
// (settings.alerts, settings.updateAlerts; docs/events.md).
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
];
