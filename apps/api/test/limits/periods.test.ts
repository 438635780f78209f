import { describe, expect, it } from 'vitest';
import { periodStarts, utcDay } from '../../src/modules/keys/periods.js';

const iso = (d: Date) => d.toISOString();

describe('UTC usage periods', () => {
  it('starts the day at 00:00 UTC whatever the local offset of the instant', () => {
    expect(iso(periodStarts(new Date('2026-03-10T23:59:59.999-05:00')).day)).toBe('2026-03-11T00:00:00.000Z');
    expect(iso(utcDay(new Date('2026-03-10T00:00:00.000+01:00')))).toBe('2026-03-09T00:00:00.000Z');
  });

  it('starts the week on Monday: Sunday belongs to the week before', () => {
    expect(iso(periodStarts(new Date('2026-06-07T23:59:59Z')).week)).toBe('2026-06-01T00:00:00.000Z'); // Sunday
    expect(iso(periodStarts(new Date('2026-06-08T00:00:00Z')).week)).toBe('2026-06-08T00:00:00.000Z'); // Monday
    expect(iso(periodStarts(new Date('2026-06-03T12:00:00Z')).week)).toBe('2026-06-01T00:00:00.000Z'); // Wednesday
  });

  it('starts the month on the 1st, across year ends and leap days', () => {
    expect(iso(periodStarts(new Date('2026-12-31T23:59:59Z')).month)).toBe('2026-12-01T00:00:00.000Z');
    expect(iso(periodStarts(new Date('2027-01-01T00:00:00Z')).month)).toBe('2027-01-01T00:00:00.000Z');
    expect(iso(periodStarts(new Date('2028-02-29T10:00:00Z')).month)).toBe('2028-02-01T00:00:00.000Z');
    // A week that began in the previous year.
    expect(iso(periodStarts(new Date('2027-01-01T00:00:00Z')).week)).toBe('2026-12-28T00:00:00.000Z');
  });
});
