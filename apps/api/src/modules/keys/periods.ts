// Usage periods are UTC: days start at 00:00 UTC, weeks run Monday to Sunday, months are calendar
// months (compat.md). They are the spend limits' windows, so their one definition is the routing
// rules' (@switchyard/rules).
export { type PeriodStarts, periodStarts } from '@switchyard/rules';

/** The UTC calendar day of an instant, as the DATE column stores it. */
export function utcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}
