// The output schema of a procedure that answers a long list, documented exactly but not parsed on
// every answer (issue 17's trade: "validated in tests rather than on every answer").
import type { ZodType } from 'zod';

/**
 * For `.output()` of a procedure whose answer is a long list built field by field from rows that
 * their statement's schema has already parsed (queryRows): a copy of `schema` (same definition, so
 * trpc-to-openapi documents it exactly and the typed client infers the same type) whose parse
 * returns the answer as it is. tRPC would otherwise parse the whole answer again and copy every
 * item: for GET /activity's 1,000 items at the large bench size that was 0.7–1.4 ms of 4.5–7.0 ms
 * of server CPU per answer (README, Benchmarks). The route's tests check its answers instead, with
 * `expectExactOutput` (test/fixtures.ts): the schema's output must be the answer itself, byte for
 * byte, so that not parsing changes nothing a client sees.
 */
export function trustedOutput<S extends ZodType>(schema: S): S {
  const trusted = schema.clone();
  // tRPC's output middleware calls parse (parseAsync only when parse throws for an async schema).
  return Object.assign(trusted, {
    parse: (value: unknown) => value,
    parseAsync: async (value: unknown) => value,
  });
}
