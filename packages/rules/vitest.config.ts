import { defineConfig } from 'vitest/config';

// Pure functions: no database, so none of the shared configuration's PostgreSQL set-up.
export default defineConfig({
  resolve: { conditions: ['@switchyard/source'] },
  ssr: { resolve: { conditions: ['@switchyard/source'] } },
});
