// A real Redis for the tests that use it as the counter store: Debian's redis-server, started by the
// test file itself on a free loopback port in a temporary directory, without persistence (`--save ''
// --appendonly no`), and stopped, its directory removed, afterwards. Without redis-server those tests
// are skipped, saying why, except in CI (CI=true), where they fail: .ci/run installs it. A test can
// kill it (an outage) and start it again on the same port (kill(), restart()).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@switchyard/db';
import { scaled } from '@switchyard/db/testing';

const CANDIDATES = [process.env.REDIS_SERVER_PATH, '/usr/bin/redis-server', '/usr/local/bin/redis-server'];

/** The redis-server binary, or undefined when this machine has none. */
export const REDIS_SERVER = CANDIDATES.find((p): p is string => !!p && existsSync(p));

const inCI = process.env.CI === 'true';

/** Whether the Redis tests are skipped here: no redis-server, and not in CI (where its absence fails them). */
export const skipRedis = !REDIS_SERVER && !inCI;

/** Why, for the skipped tests' names. */
export const REDIS_SKIP_REASON = `skipped: no redis-server in ${CANDIDATES.filter(Boolean).join(', ')} (apt-get install redis-server, or set REDIS_SERVER_PATH)`;

export interface TestRedis {
  url: string;
  port: number;
  /** Kills the server (SIGKILL: an outage, not a shutdown); resolves once it has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence); resolves once it accepts connections. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

interface Running {
  proc: ChildProcess;
  exited: Promise<number | null>;
}

/** One redis-server process on `port`, once it accepts connections (or a rejection with its output). */
async function spawnRedis(server: string, port: number, dir: string, timeoutMs: number): Promise<Running> {
  const proc: ChildProcess = spawn(
    server,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'notice'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not get ready within ${timeoutMs} ms:\n${output}`)), timeoutMs);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc.stdout?.on('data', onData);
      proc.stderr?.on('data', onData);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`));
      });
    });
  } catch (error) {
    proc.kill('SIGKILL');
    throw error;
  }
  return { proc, exited };
}

const alive = (running: Running) => running.proc.exitCode === null && running.proc.signalCode === null;

/** Starts a redis-server; resolves once it accepts connections (or rejects with its output). */
export async function startRedis(timeoutMs = scaled(30_000)): Promise<TestRedis> {
  if (!REDIS_SERVER) throw new Error(`no redis-server (CI=true): ${REDIS_SKIP_REASON}`);
  const server = REDIS_SERVER;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-test-redis-'));
  const port = await freePort();
  let running: Running;
  try {
    running = await spawnRedis(server, port, dir, timeoutMs);
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async kill() {
      if (!alive(running)) return;
      running.proc.kill('SIGKILL');
      await running.exited;
    },
    async restart() {
      if (alive(running)) throw new Error('redis-server is running: kill() it first');
      running = await spawnRedis(server, port, dir, timeoutMs);
    },
    async stop() {
      if (alive(running)) {
        running.proc.kill('SIGTERM');
        // SIGTERM ends it at once (no persistence to write); SIGKILL if it has not within 10 s.
        const late = setTimeout(() => running.proc.kill('SIGKILL'), scaled(10_000));
        await running.exited;
        clearTimeout(late);
      }
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
