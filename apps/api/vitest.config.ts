import os from 'node:os';
import { mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.js';

// The server's test files spend most of their time waiting: on PostgreSQL, and on the requests they
// send to the server they start in their own process. vitest's default (one worker less than the
// cores) runs them one after another on a 2-core machine and leaves a core idle; one worker per
// core, and never fewer than two, keeps both busy.
export default mergeConfig(shared, { test: { maxWorkers: Math.max(2, os.availableParallelism()) } });
