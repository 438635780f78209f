// How much slower than a quiet machine the tests run here: the factor every time limit in the
// tests is multiplied by, so that a busy machine makes the suite slower, never red. Measured once,
// when the test runner loads its configuration, and handed to every test process through
// SWITCHYARD_TEST_TIME_SCALE (which a developer may also set by hand to force a factor).
import os from 'node:os';

export const TIME_SCALE_ENV = 'SWITCHYARD_TEST_TIME_SCALE';

/** The factor's bounds: never tighter than the limits as written, never so loose that a hang goes unseen. */
const MIN = 1;
const MAX = 10;

/** A fixed amount of single-threaded CPU work: what a busy machine gives less of. */
function work(): number {
  let x = 0;
  for (let i = 0; i < 6_000_000; i++) x = (x * 31 + i) % 1_000_003;
  return x;
}

function clamp(value: number): number {
  return Math.round(Math.min(MAX, Math.max(MIN, value)) * 10) / 10;
}

/**
 * Measures the factor: how much longer than its own CPU time a fixed piece of work takes on the
 * wall clock (the median of a few timings: the share of a core this process is given), or the run
 * queue's length per core when that is larger (load that comes and goes between timings).
 */
export function measureTimeScale(): { scale: number; stretch: number; loadPerCore: number } {
  const stretches: number[] = [];
  work(); // warm the JIT: the first run measures the compiler, not the machine
  for (let i = 0; i < 5; i++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    work();
    const wall = performance.now() - start;
    const used = process.cpuUsage(cpu);
    stretches.push(wall / Math.max(1, (used.user + used.system) / 1000));
  }
  stretches.sort((a, b) => a - b);
  const stretch = stretches[2]!;
  const loadPerCore = os.loadavg()[0]! / os.availableParallelism();
  return { scale: clamp(Math.max(stretch, loadPerCore)), stretch, loadPerCore };
}

/** The run's factor (SWITCHYARD_TEST_TIME_SCALE; 1 outside a test run that set it). */
export function timeScale(): number {
  const set = Number(process.env[TIME_SCALE_ENV]);
  return Number.isFinite(set) && set > 0 ? set : 1;
}

/** `ms` scaled by the run's factor: a time limit in a test, never a time a test waits for. */
export function scaled(ms: number): number {
  return Math.ceil(ms * timeScale());
}
