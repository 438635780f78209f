// The vitest configuration every package shares: workspace packages resolve to their TypeScript
// sources, and one PostgreSQL server with a migrated template database serves the whole run.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { measureTimeScale, scaled, TIME_SCALE_ENV } from './packages/db/src/time-scale.js';

const source = ['@switchyard/source'];

// Every time limit of the run is multiplied by how busy the machine is when the run starts (the
// test processes inherit the factor). Set by hand, it is used as it is.
if (!process.env[TIME_SCALE_ENV]) {
  const { scale, stretch, loadPerCore } = measureTimeScale();
  process.env[TIME_SCALE_ENV] = String(scale);
  console.log(`test time scale ${scale} (CPU stretch ${stretch.toFixed(2)}, load per core ${loadPerCore.toFixed(2)}; ${TIME_SCALE_ENV} sets it)`);
}

export default defineConfig({
  resolve: { conditions: source },
  ssr: { resolve: { conditions: source } },
  test: {
    globalSetup: [fileURLToPath(new URL('./packages/db/src/vitest-setup.ts', import.meta.url))],
    // A worker keeps its modules from one test file to the next, instead of importing the server's
    // whole module graph again for each file (decision 0047). So no test file may leave state in a
    // module for the next: the servers, pools and spies a file makes, it closes or restores.
    isolate: false,
    testTimeout: scaled(60_000),
    hookTimeout: scaled(120_000),
    // expect.poll's own default (1 s) loses the race on a busy machine: wait as long as `until` does.
    expect: { poll: { timeout: scaled(30_000), interval: 20 } },
  },
});
