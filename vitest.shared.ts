// The vitest configuration every package shares: workspace packages resolve to their TypeScript
// sources, and one PostgreSQL server with a migrated template database serves the whole run.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = ['@switchyard/source'];

export default defineConfig({
  resolve: { conditions: source },
  ssr: { resolve: { conditions: source } },
  test: {
    globalSetup: [fileURLToPath(new URL('./packages/db/src/vitest-setup.ts', import.meta.url))],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll's own default (1 s) loses the race on a busy machine: wait as long as `until` does.
    expect: { poll: { timeout: 30_000, interval: 20 } },
  },
});
