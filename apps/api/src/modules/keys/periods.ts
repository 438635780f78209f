// Usage periods are UTC: days start at 00:00 UTC, weeks run Monday to Sunday, months are calendar
// months (compat.md).
const DAY_MS = 86_400_000;

export interface PeriodStarts {
  day: Date;
  week: Date;
  month: Date;
}

export function periodStarts(now: Date): PeriodStarts {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const daysSinceMonday = (now.getUTCDay() + 6) % 7;
  return {
    day: new Date(day),
    week: new Date(day - daysSinceMonday * DAY_MS),
    month: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
  };
}

/** The UTC calendar day of an instant, as the DATE column stores it. */
export function utcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}
