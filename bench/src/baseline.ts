// The regression guard: each scenario's server and database CPU per answer as a multiple of its
// floor's, measured in the same run (so that a busier or faster machine moves both alike), beside
// the same multiples of the run committed as bench/baseline.json. A multiple that grew by more than
// GROWTH_LIMIT is flagged. A report, never a failure: `pnpm bench --write-baseline` replaces the file
// on purpose, with a run on a quiet machine.
import type { Floors, ScenarioResult, SizeRun } from './report.js';

/** A multiple that grew by more than this fraction over the baseline's is flagged. */
export const GROWTH_LIMIT = 0.2;

/**
 * A scenario's CPU per answer over its floor's: `server` the server's over the floor process's
 * (the database floor where the scenario has one, else the express floor), `db` the database's
 * over the database floor's (null without one). null where either figure is missing.
 */
export interface CpuRatios {
  floor: 'database' | 'express';
  server: number | null;
  db: number | null;
}

export interface Baseline {
  /** When the run was made, and the machine's load then: what the figures were measured beside. */
  started: string;
  loadAverage: number[];
  /** By `scenarioKey`. */
  scenarios: Record<string, CpuRatios>;
}

export const scenarioKey = (size: string, name: string) => `${name} [${size}]`;

const over = (a: number | null | undefined, b: number | null | undefined) => (a == null || b == null || b <= 0 ? null : a / b);

/** The scenario's ratios, or null when it has no floor to divide by. */
export function cpuRatios(s: Pick<ScenarioResult, 'cpuMsPerRequest' | 'dbCpuMsPerRequest'> & { floors: Floors | null }): CpuRatios | null {
  const database = s.floors?.database;
  const floor = database ?? s.floors?.express;
  if (!floor) return null;
  return {
    floor: database ? 'database' : 'express',
    server: over(s.cpuMsPerRequest, floor.cpuMsPerRequest),
    db: database ? over(s.dbCpuMsPerRequest, database.dbCpuMsPerRequest) : null,
  };
}

/** Every scenario's ratios in these runs, by `scenarioKey`. */
export function ratiosOf(runs: readonly SizeRun[]): Record<string, CpuRatios> {
  const ratios: Record<string, CpuRatios> = {};
  for (const run of runs) {
    for (const s of run.scenarios) {
      const r = cpuRatios(s);
      if (r) ratios[scenarioKey(run.size, s.name)] = r;
    }
  }
  return ratios;
}

export interface GuardLine {
  scenario: string;
  now: CpuRatios;
  before: CpuRatios | null;
  /** What grew by more than GROWTH_LIMIT: 'server', 'db'. */
  grew: ('server' | 'db')[];
  /** The baseline measured it against another floor: not comparable. */
  otherFloor: boolean;
}

/** Each scenario of this run beside the baseline's figures for it (`before` null when the baseline has none). */
export function compareToBaseline(now: Record<string, CpuRatios>, baseline: Baseline | null): GuardLine[] {
  return Object.entries(now).map(([scenario, current]) => {
    const before = baseline?.scenarios[scenario] ?? null;
    const otherFloor = before !== null && before.floor !== current.floor;
    const grew = (['server', 'db'] as const).filter((which) => {
      const a = before?.[which];
      const b = current[which];
      return !otherFloor && a != null && b != null && b > a * (1 + GROWTH_LIMIT);
    });
    return { scenario, now: current, before, grew, otherFloor };
  });
}

const times = (n: number | null | undefined) => (n == null ? '-' : `${n.toFixed(2)}x`);

/** The guard's report, one line a scenario; the first says where the baseline is from. */
export function guardReport(lines: readonly GuardLine[], baseline: Baseline | null): string[] {
  const head = baseline
    ? `CPU per answer over the floor's (same run), beside bench/baseline.json (run ${baseline.started}, load ${baseline.loadAverage.map((n) => n.toFixed(1)).join(' ')}); GREW: over ${GROWTH_LIMIT * 100}% more`
    : `CPU per answer over the floor's (same run); no baseline yet (bench/baseline.json is missing: pnpm bench --write-baseline writes it)`;
  return [
    head,
    ...lines.map((line) => {
      const pair = (which: 'server' | 'db') => `${which} ${times(line.now[which])}${baseline ? ` (was ${times(line.before?.[which])})` : ''}`;
      const flag = line.grew.length ? `GREW ${line.grew.join(', ')}` : line.otherFloor ? 'other floor' : baseline && !line.before ? 'new' : 'ok';
      return `${flag.padEnd(16)} ${line.scenario}: ${pair('server')}, ${pair('db')} vs the ${line.now.floor} floor`;
    }),
  ];
}
