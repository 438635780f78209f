// Server processes for the tests: src/main.ts run the way `pnpm start` runs the build, through tsx
// (or any command, for launchWith), with only the environment given (and PATH, HOME, the run's
// temporary settings: inheritedEnv; src/main.ts
// also START_ENV, as `pnpm start` gives it). Every process a test file starts is killed after it.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { NODE_FLAGS, START_ENV } from '../src/process/node-flags.js';
import { inheritedEnv } from '../src/testing/server.js';
import { scaled } from '@switchyard/db/testing';

export { inheritedEnv };

const appDir = fileURLToPath(new URL('..', import.meta.url));

export interface Proc {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** src/main.ts under node with `nodeFlags` (those `pnpm start` gives, unless a test says otherwise) and START_ENV. */
export function launch(
  env: Record<string, string>,
  nodeFlags: readonly string[] = NODE_FLAGS,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  return launchWith(process.execPath, [...nodeFlags, '--conditions=@switchyard/source', '--import', 'tsx', 'src/main.ts'], { ...START_ENV, ...env });
}

export function launchWith(
  file: string,
  args: string[],
  env: Record<string, string>,
  cwd: string = appDir,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(file, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...inheritedEnv(), PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return { child, output: () => out, exited };
}

/** Waits (up to `timeoutMs`, 60 s unless told) for the output to match; returns the first group. */
export async function waitFor(proc: ReturnType<typeof launch>, pattern: RegExp, timeoutMs = scaled(60_000)): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = pattern.exec(proc.output().replace(/\x1b\[[0-9;]*m/g, ''));
    if (match) return match[1] ?? match[0];
    if (proc.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${pattern} in the output:\n${proc.output()}`);
}

export async function start(env: Record<string, string>, nodeFlags: readonly string[] = NODE_FLAGS): Promise<Proc> {
  const proc = launch(env, nodeFlags);
  try {
    return { ...proc, url: await waitFor(proc, /"url":"(http:\/\/[^"]+)","msg":"listening"/) };
  } catch (error) {
    proc.child.kill('SIGKILL');
    throw new Error(`server did not start: ${(error as Error).message}`);
  }
}

/** Stops a server with SIGTERM and answers its exit code. */
export async function stop(proc: Proc): Promise<number | null> {
  proc.child.kill('SIGTERM');
  return proc.exited;
}
