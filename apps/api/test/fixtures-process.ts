// Server processes for the tests: the build's dist/main.js, run as `pnpm start` runs it (plain node,
// NODE_FLAGS and START_ENV), or any command, for launchWith, with only the environment given (and
// PATH, HOME, the run's temporary settings: inheritedEnv). Every process a test file starts is
// killed after it. The build, not the sources through tsx: it is what users run, and it starts
// without compiling the whole server again each time. The API's test task depends on its build
// (turbo.json); a file run on its own refuses a build older than its sources, naming the command
// that makes it.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { NODE_FLAGS, START_ENV } from '../src/process/node-flags.js';
import { inheritedEnv } from '../src/testing/test-server.js';
import { scaled } from '@switchyard/db/testing';

export { inheritedEnv };

const appDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** What dist/main.js loads, by package: the build's output, and what that build reads. */
const BUILDS: readonly { dist: string; sources: readonly string[] }[] = [
  { dist: 'apps/api/dist', sources: ['apps/api/src'] },
  { dist: 'packages/db/dist', sources: ['packages/db/src', 'prisma/migrations'] },
  { dist: 'packages/schema/dist', sources: ['packages/schema/src'] },
  { dist: 'packages/rules/dist', sources: ['packages/rules/src'] },
];

/** The newest file under `dir` (relative to the repository) and its modification time; none: 0. */
function newestFile(dir: string): { file: string; mtimeMs: number } {
  let newest = { file: dir, mtimeMs: 0 };
  const root = path.join(repoRoot, dir);
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    // Prisma's generated client is no input of the build (turbo.json leaves it out too): turbo
    // rewrites it whenever it replays the generate task, after the build it came from.
    if (file.includes(`${path.sep}src${path.sep}generated${path.sep}`)) continue;
    const { mtimeMs } = statSync(file);
    if (mtimeMs > newest.mtimeMs) newest = { file: path.relative(repoRoot, file), mtimeMs };
  }
  return newest;
}

let built: true | undefined;
/** Throws, naming the file and the command, when a package's build is older than one of its sources. */
export function assertBuilt(): void {
  if (built) return;
  for (const { dist, sources } of BUILDS) {
    const output = newestFile(dist);
    for (const source of sources) {
      const input = newestFile(source);
      if (output.mtimeMs === 0 || input.mtimeMs > output.mtimeMs) {
        throw new Error(
          `${dist} is missing or older than ${input.file}: the tests run the built server (apps/api/dist/main.js); build it first: pnpm turbo run build --filter=@switchyard/api`,
        );
      }
    }
  }
  built = true;
}

/** node's arguments (in the API's folder) that run the built server with `nodeFlags`. */
export function mainArgs(nodeFlags: readonly string[] = NODE_FLAGS): string[] {
  assertBuilt();
  return [...nodeFlags, 'dist/main.js'];
}

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

/** dist/main.js under node with `nodeFlags` (those `pnpm start` gives, unless a test says otherwise) and START_ENV. */
export function launch(
  env: Record<string, string>,
  nodeFlags: readonly string[] = NODE_FLAGS,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  return launchWith(process.execPath, mainArgs(nodeFlags), { ...START_ENV, ...env });
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
