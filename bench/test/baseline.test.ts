import { describe, expect, it } from 'vitest';
import { type Baseline, compareToBaseline, cpuRatios, guardReport, ratiosOf } from '../src/baseline.js';
import type { Measurement, ScenarioResult, SizeRun } from '../src/report.js';

/** A measurement with these CPU figures per answer (the rest does not enter the guard). */
const measured = (cpu: number | null, db?: number | null): Measurement => ({
  requests: 1000,
  seconds: 1,
  requestsPerSecond: 1000,
  p50Ms: 1,
  p99Ms: 2,
  non2xx: 0,
  errors: 0,
  statusCodes: { 200: 1000 },
  cpuMsPerRequest: cpu,
  ...(db === undefined ? {} : { dbCpuMsPerRequest: db }),
});

const scenario = (name: string, cpu: number, db: number | null, floors: ScenarioResult['floors']): ScenarioResult => ({
  name,
  kind: 'read',
  answerBytes: 10,
  peakRssBytes: null,
  ...measured(cpu, db),
  floors,
});

const run = (scenarios: ScenarioResult[]): SizeRun => ({
  size: 'small',
  seed: { generations: 1, keys: 1, members: 1, guardrails: 0, assignments: 0, models: 0 },
  seedSeconds: 0,
  serverRssAtRestBytes: null,
  serverRssAtEndBytes: null,
  scenarios,
});

describe('the regression guard', () => {
  it("divides by the database floor where there is one (server and database CPU), else by the express floor's server CPU", () => {
    const withDatabase = cpuRatios(scenario('a', 0.6, 0.4, { express: measured(0.1), database: measured(0.2, 0.1) }));
    expect(withDatabase?.floor).toBe('database');
    expect(withDatabase?.server).toBeCloseTo(3);
    expect(withDatabase?.db).toBeCloseTo(4);
    expect(cpuRatios(scenario('b', 0.3, 0.2, { node: measured(0.05), express: measured(0.1) }))).toEqual({
      floor: 'express',
      server: expect.closeTo(3),
      db: null,
    });
    // Without a floor there is nothing to divide by; without a figure, no ratio.
    expect(cpuRatios(scenario('c', 0.3, 0.2, null))).toBeNull();
    expect(cpuRatios(scenario('d', 0.3, null, { database: measured(null, 0.1) }))).toEqual({ floor: 'database', server: null, db: null });
  });

  it('keys the ratios by scenario and size, leaving out the scenarios without a floor', () => {
    const ratios = ratiosOf([run([scenario('GET /x', 0.2, null, { express: measured(0.1) }), scenario('upload', 1, 1, null)])]);
    expect(Object.keys(ratios)).toEqual(['GET /x [small]']);
  });

  it('flags a ratio that grew by more than 20%, not one that grew by less or shrank, and says which', () => {
    const baseline: Baseline = {
      started: '2026-01-01T00:00:00.000Z',
      loadAverage: [0.1, 0.2, 0.3],
      scenarios: {
        grew: { floor: 'database', server: 2, db: 1 },
        within: { floor: 'database', server: 2, db: 1 },
        moved: { floor: 'express', server: 2, db: null },
      },
    };
    const lines = compareToBaseline(
      {
        grew: { floor: 'database', server: 2.5, db: 1.1 },
        within: { floor: 'database', server: 2.39, db: 0.5 },
        moved: { floor: 'database', server: 9, db: 9 },
        added: { floor: 'express', server: 1, db: null },
      },
      baseline,
    );
    const by = Object.fromEntries(lines.map((line) => [line.scenario, line]));
    expect(by.grew?.grew).toEqual(['server']);
    expect(by.within?.grew).toEqual([]);
    // Measured against another floor than the baseline's: not compared.
    expect(by.moved).toMatchObject({ grew: [], otherFloor: true });
    expect(by.added).toMatchObject({ before: null, grew: [] });
    const report = guardReport(lines, baseline);
    expect(report[0]).toContain('run 2026-01-01T00:00:00.000Z');
    expect(report.find((line) => line.includes(' grew:'))).toMatch(/^GREW server .*server 2\.50x \(was 2\.00x\), db 1\.10x \(was 1\.00x\)/);
    expect(report.find((line) => line.includes(' within:'))).toMatch(/^ok /);
    expect(report.find((line) => line.includes(' moved:'))).toMatch(/^other floor /);
    expect(report.find((line) => line.includes(' added:'))).toMatch(/^new /);
  });

  it('says there is no baseline yet when the file is missing, and flags nothing', () => {
    const lines = compareToBaseline({ a: { floor: 'express', server: 5, db: null } }, null);
    expect(lines).toEqual([{ scenario: 'a', now: { floor: 'express', server: 5, db: null }, before: null, grew: [], otherFloor: false }]);
    const report = guardReport(lines, null);
    expect(report[0]).toContain('no baseline yet');
    expect(report[1]).toMatch(/^ok +a: server 5\.00x, db - vs the express floor$/);
  });
});
