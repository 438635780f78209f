#!/usr/bin/env node
// Builds every package (turbo replays what it has cached), then asks turbo, without running
// anything, whether a second build would run any task. Every task must be a cache hit: a miss
// means a task's inputs are read before they are final (a file another task generates, say), and
// every later `pnpm start` would rebuild it. It also fails when the root package depends on a
// workspace package: turbo hashes the root's workspace dependencies into every task's hash, so an
// edit to that package would make every task of every package a miss.
//
//   node scripts/check-build-cache.mjs
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const root = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const workspaceDeps = Object.entries({ ...root.dependencies, ...root.devDependencies }).filter(([, range]) => String(range).startsWith('workspace:'));
if (workspaceDeps.length > 0) {
  console.error(
    `build cache: the root package.json depends on ${workspaceDeps.map(([name]) => name).join(', ')}: turbo then rebuilds everything after any edit to them; depend on them from the package that uses them`,
  );
  process.exit(1);
}

const turbo = (args, stdio) => execFileSync('pnpm', ['exec', 'turbo', ...args], { encoding: 'utf8', stdio, maxBuffer: 64 << 20 });

turbo(['run', 'build', '--output-logs=errors-only'], ['ignore', 'inherit', 'inherit']);
const plan = JSON.parse(turbo(['run', 'build', '--dry=json'], ['ignore', 'pipe', 'inherit']));
// A package without the script has a placeholder task that never runs.
const tasks = plan.tasks.filter((t) => t.command !== '<NONEXISTENT>');
const misses = tasks.filter((t) => t.cache.status !== 'HIT');
if (misses.length > 0) {
  console.error(`build cache: ${misses.length} of ${tasks.length} tasks would run again right after a build:`);
  for (const t of misses) console.error(`  ${t.taskId} (hash ${t.hash})`);
  process.exit(1);
}
console.log(`build cache: all ${tasks.length} build tasks are cache hits after a build`);
