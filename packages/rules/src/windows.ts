// The windows of the spend limits: calendar-exact UTC, daily from midnight, weekly from Monday,
// monthly from the 1st; lifetime never resets. GET /key's usage periods are the same
// (apps/api's keys/periods.ts takes periodStarts from here), so a limit and the usage it is
// shown beside always count the same days.

export type Interval = 'daily' | 'weekly' | 'monthly' | 'lifetime';

const DAY_MS = 86_400_000;

export interface PeriodStarts {
  day: Date;
  week: Date;
  month: Date;
}

/** The first instant of the UTC day, week (Monday) and month that contain `now`. */
export function periodStarts(now: Date): PeriodStarts {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const daysSinceMonday = (now.getUTCDay() + 6) % 7;
  return {
    day: new Date(day),
    week: new Date(day - daysSinceMonday * DAY_MS),
    month: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
  };
}

/** The first UTC day of the window that contains `now`, or null for lifetime. */
export function windowStart(interval: Interval, now: Date): Date | null {
  if (interval === 'lifetime') return null;
  const starts = periodStarts(now);
  return interval === 'daily' ? starts.day : interval === 'weekly' ? starts.week : starts.month;
}

/** When the window that contains `now` ends (the next one starts), or null for lifetime. */
export function windowEnd(interval: Interval, now: Date): Date | null {
  const start = windowStart(interval, now);
  if (!start) return null;
  if (interval === 'daily') return new Date(start.getTime() + DAY_MS);
  if (interval === 'weekly') return new Date(start.getTime() + 7 * DAY_MS);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

/** Each interval's window (first day, end) for the UTC day last asked about (every decision asks, for each limit). */
let windows: { day: number; of: Record<Interval, { since: string | null; resetsAt: string | null }> } | undefined;

function windowsOf(now: Date): Record<Interval, { since: string | null; resetsAt: string | null }> {
  const day = Math.floor(now.getTime() / DAY_MS);
  if (windows?.day !== day) {
    const of = (i: Interval) => ({ since: windowStart(i, now)?.toISOString().slice(0, 10) ?? null, resetsAt: windowEnd(i, now)?.toISOString() ?? null });
    windows = { day, of: { daily: of('daily'), weekly: of('weekly'), monthly: of('monthly'), lifetime: of('lifetime') } };
  }
  return windows.of;
}

/** The first UTC day (YYYY-MM-DD) of the window that contains `now`, or null for lifetime. */
export function sinceOf(interval: Interval, now: Date): string | null {
  return windowsOf(now)[interval].since;
}

/** When the window that contains `now` ends (ISO 8601), or null for lifetime. */
export function resetsAtOf(interval: Interval, now: Date): string | null {
  return windowsOf(now)[interval].resetsAt;
}

/** Whole seconds from `now` until `at` (at least 1), or null when there is no such instant. */
export const secondsUntil = (at: Date | null, now: Date): number | null => (at ? Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000)) : null);
