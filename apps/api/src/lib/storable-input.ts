import { unstorableInput } from '@switchyard/schema';
import { Invalid } from './errors.js';

/**
 * Refuses (400) input PostgreSQL cannot store or no schema allows: NUL, lone surrogates, nesting
 * deeper than MAX_INPUT_DEPTH, anywhere in the value. Runs before the input's schema and before any
 * query, for procedures (the tRPC guard, which REST calls go through too) and raw express routes.
 */
export function assertStorable(input: unknown): void {
  const problem = unstorableInput(input);
  if (problem) {
    throw new Invalid(`input ${problem.reason} at "${problem.path}"`, { issues: [{ path: problem.path, message: problem.reason }] });
  }
}
