#!/usr/bin/env node
// Runs a command (the test suite) with TMPDIR set to a directory of its own, then fails if the
// command left anything in it: every temporary file or directory a test makes must be gone by the
// end of the run. The directory itself is removed either way.
//
//   node scripts/with-own-tmp.mjs <command> [args...]
//
// Exit status: the command's own when it failed; 1 when it passed but left something behind.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node scripts/with-own-tmp.mjs <command> [args...]');
  process.exit(2);
}

// Short, so that Unix socket paths under it stay within their 107 bytes.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-test-'));
// mkdtemp makes it 0700. Run as root, an embedded PostgreSQL runs as the `postgres` user, which
// must pass through this directory to reach a data directory a test makes in it: others may
// traverse it (0711), not list it.
fs.chmodSync(tmp, 0o711);
// tsx (which the tests' server processes load) keeps a compile cache in the temporary directory
// (tsx-<uid>/) for later runs, and so does Node 22's module compile cache (node-compile-cache/),
// which pnpm turns on for itself: a run that is to leave nothing there runs without either.
const child = spawn(command, args, {
  stdio: 'inherit',
  env: { ...process.env, TMPDIR: tmp, TSX_DISABLE_CACHE: '1', NODE_DISABLE_COMPILE_CACHE: '1' },
});
// A supervisor's signal goes to the command too; its exit decides ours.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));

child.on('exit', (code, signal) => {
  const left = listLeftovers(tmp);
  fs.rmSync(tmp, { recursive: true, force: true });
  if (left.length > 0) {
    console.error(`\nThe test run left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in its temporary directory (${tmp}):`);
    for (const entry of left) console.error(`  ${entry}`);
    console.error('Each test must remove what it makes (an afterAll, or a synchronous removal on exit).');
  }
  if (signal) process.kill(process.pid, signal);
  process.exit(code !== 0 ? (code ?? 1) : left.length > 0 ? 1 : 0);
});

/** The top-level entries of `dir`, with the size of each (files and directories alike). */
function listLeftovers(dir) {
  return fs.readdirSync(dir).map((name) => {
    const full = path.join(dir, name);
    return `${name} (${formatBytes(sizeOf(full))})`;
  });
}

function sizeOf(full) {
  const stat = fs.lstatSync(full, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.size;
  let total = 0;
  for (const name of fs.readdirSync(full)) total += sizeOf(path.join(full, name));
  return total;
}

function formatBytes(n) {
  return n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`;
}
