// The fairness scenario: another organization's GET /key while one organization runs its
// full share of the heaviest analytics query. Its floor is the same GET /key load beside an
// unrelated CPU-bound process (this machine has 2 cores: the server's thread gets the other), so
// that the ratio says what one tenant's analytics cost another beyond taking a core's worth of CPU.
import { spawn } from 'node:child_process';
import { runAutocannon, type LoadSpec, type Measurement } from './load.js';

/** GET /key's connections in both runs: a steady load that leaves the server's thread room to answer. */
export const FAIRNESS_CONNECTIONS = 4;
/**
 * The analytics organization's connections: at least its share on any machine. ANALYTICS_CONCURRENCY's
 * default (the cores, from 2 to 4; the bench's pool of 20 does not lower it) gives one organization
 * at most half of it, rounded up: 1 query at once on 2 cores, 2 from 3 cores. Where the share is 1,
 * the second query always waits its turn, so that the slot is never idle.
 */
export const ANALYTICS_SHARE = 2;

export interface FairnessRun {
  /** GET /key of the other organization, beside a CPU-bound process. */
  floor: Measurement;
  /** The same while the first organization runs its analytics share. */
  measured: Measurement;
  /** The analytics queries answered meanwhile (their statuses), and their p50/p99. */
  analytics: Measurement;
}

interface Target {
  url: string;
  pid: number;
  dbPid: number | undefined;
  platformKey: string;
}

/** A second organization (made by the platform, as an operator would), whose management key reads GET /key. */
async function otherOrganization(target: Target): Promise<string> {
  const res = await fetch(`${target.url}/trpc/organizations.create`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.platformKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench neighbour', owner_email: `neighbour-${Date.now()}@example.com` }),
  });
  const body = (await res.json()) as { result?: { data: { management_key: string } }; error?: unknown };
  if (!res.ok || !body.result) throw new Error(`organizations.create answered ${res.status}: ${JSON.stringify(body.error)}`);
  return body.result.data.management_key;
}

/**
 * Spins one core. About every 16 million turns (some 20 ms) it asks for its parent's pid, and exits once the
 * bench that started it is gone (killed before it could stop it): a busy loop never reads a signal
 * of its parent's going, and an orphan would skew every later measurement on the machine.
 */
const BURN = 'const parent = process.ppid; for (let turn = 1; ; turn++) if ((turn & 0xffffff) === 0 && process.ppid !== parent) process.exit(0);';

/** A process that keeps one core busy until stopped, or until the bench is gone. */
function burner(): { stop(): Promise<void> } {
  const child = spawn(process.execPath, ['-e', BURN], { stdio: 'ignore' });
  return {
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

export async function runFairness(target: Target, analytics: LoadSpec, opts: { warmup: number; duration: number }): Promise<FairnessRun> {
  const key = await otherOrganization(target);
  const getKey = (): Promise<Measurement> =>
    runAutocannon({
      url: target.url,
      pid: target.pid,
      dbPid: target.dbPid,
      spec: { method: 'GET', path: '/api/v1/key', headers: { authorization: `Bearer ${key}` } },
      connections: FAIRNESS_CONNECTIONS,
      warmup: opts.warmup,
      duration: opts.duration,
      timeout: 10,
    });

  const busy = burner();
  let floor: Measurement;
  try {
    floor = await getKey();
  } finally {
    await busy.stop();
  }

  // The analytics load starts first and outlasts the measured run (its warm-up included).
  const load = runAutocannon({
    url: target.url,
    spec: analytics,
    connections: ANALYTICS_SHARE,
    warmup: 0,
    duration: opts.warmup + opts.duration + 2,
    timeout: 30,
  });
  const measured = await getKey();
  return { floor, measured, analytics: await load };
}
