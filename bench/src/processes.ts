// Child processes of the bench (the real server and the floor servers) and the sampling of their
// resident memory. Every child listens on 127.0.0.1 only and is stopped when the bench ends.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const children = new Set<ChildProcess>();

/** Stops every child still running: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopAllChildren(graceMs = 10_000): Promise<void> {
  await Promise.all([...children].map((child) => stopChild(child, graceMs)));
}

export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    children.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  children.delete(child);
}

/** Starts `script` under the current node with an IPC channel; output goes to `logFile`. */
export function startChild(script: string, args: string[], env: NodeJS.ProcessEnv, logFile: string, execArgv: string[] = []): ChildProcess {
  const out = fs.openSync(logFile, 'a');
  const child = fork(script, args, { env, stdio: ['ignore', out, out, 'ipc'], execArgv });
  fs.closeSync(out);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Resolves once `check` succeeds; rejects when the child exits first or `timeoutMs` passes. */
export async function waitUntil(child: ChildProcess, what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    }
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} was not ready within ${timeoutMs / 1000} s`);
}

export function waitForMessage(child: ChildProcess, message: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`no "${message}" from pid ${child.pid} within ${timeoutMs / 1000} s`)), timeoutMs);
    const onMessage = (m: unknown) => m === message && done();
    const onExit = (code: number | null) => done(new Error(`pid ${child.pid} exited (${code}) before "${message}"`));
    function done(error?: Error) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Resident set size of a process in bytes (VmRSS of /proc/<pid>/status); null if unreadable. */
export function readRss(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system, all threads) a process has used so far, in ms: fields 14 and 15 of
 * /proc/<pid>/stat, in clock ticks of 10 ms (Linux's USER_HZ). null where unreadable.
 */
export function readCpuMs(pid: number): number | null {
  try {
    const fields = statFields(pid);
    return (fields[11]! + fields[12]!) * 10;
  } catch {
    return null;
  }
}

/** The fields of /proc/<pid>/stat from the third (state) on, as numbers: [0] is field 3. */
function statFields(pid: number | string): number[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after it are space-separated.
  return stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
}

/**
 * CPU time (ms) a process and each of its children have used so far, keyed by pid and start time
 * (a pid may be reused): for PostgreSQL, the postmaster and every backend and worker. The root's
 * includes the time of the children it has reaped (cutime, cstime). null where unreadable.
 */
export function readTreeCpu(rootPid: number): Map<string, number> | null {
  // Fields 4 (parent), 14-17 (utime, stime, cutime, cstime) and 22 (start time).
  const stat = (pid: number | string) => {
    const fields = statFields(pid);
    return { parent: fields[1]!, key: `${pid}:${fields[19]}`, own: (fields[11]! + fields[12]!) * 10, reaped: (fields[13]! + fields[14]!) * 10 };
  };
  // A child reaped while the children are listed would be in neither the root's reaped time nor
  // the list: read again (up to a few times) until the root's reaped time held still meanwhile.
  for (let attempt = 0; ; attempt++) {
    let root: ReturnType<typeof stat>;
    try {
      root = stat(rootPid);
    } catch {
      return null;
    }
    const byProcess = new Map([[root.key, root.own + root.reaped]]);
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const child = stat(entry);
        if (child.parent === rootPid) byProcess.set(child.key, child.own);
      } catch {
        // The process ended between the listing and the read.
      }
    }
    let after: ReturnType<typeof stat>;
    try {
      after = stat(rootPid);
    } catch {
      return null;
    }
    if (after.reaped === root.reaped || attempt === 4) return byProcess;
  }
}

/**
 * The CPU time the tree used between two readings. Each process alive at the end counts its time
 * less what it had used at the start (all of it if it started since). A child that exited in
 * between was reaped by the root, whose reaped time grew by all of that child's time: less what it
 * had used at the start. (Summing the whole tree at each reading instead made the database's time
 * negative when a floor's backends, stopped just before, were still exiting at the start.)
 */
export function cpuSince(start: Map<string, number>, end: Map<string, number>): number {
  let total = 0;
  for (const [key, ms] of end) total += ms - (start.get(key) ?? 0);
  for (const [key, ms] of start) if (!end.has(key)) total -= ms;
  return total;
}

/** Samples a process's RSS every `intervalMs` until stopped; returns the peak seen. */
export function sampleRss(pid: number, intervalMs = 20): { stop(): number | null } {
  let peak: number | null = readRss(pid);
  const timer = setInterval(() => {
    const rss = readRss(pid);
    if (rss !== null && (peak === null || rss > peak)) peak = rss;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const rss = readRss(pid);
      if (rss !== null && (peak === null || rss > peak)) peak = rss;
      return peak;
    },
  };
}

export const scriptPath = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));
