// The output schema of a procedure whose answers are documented exactly but not parsed by tRPC on
// every answer (issue 17's trade: "validated in tests rather than on every answer").
import type { ZodType } from 'zod';

/**
 * For `.output()`: a copy of `schema` (same definition, so trpc-to-openapi documents it exactly and
 * the typed client infers the same type) whose parse returns the answer as it is. Three uses:
 * - long lists built field by field from rows their statement's schema has parsed (queryRows):
 *   GET /activity, GET /keys. tRPC would parse the whole answer again and copy every item: for
 *   GET /activity's 1,000 items at the large bench size, 0.7–1.4 ms of 4.5–7.0 ms of server CPU per
 *   answer (docs/decisions/0011-trusted-output.md). Their tests check every answer with `expectExactOutput`
 *   (test/fixtures.ts): the schema's output must be the answer itself, byte for byte;
 * - answers parsed with this schema when they were built: GET /model and GET /embeddings/models,
 *   parsed once per catalog snapshot (models/catalog-cache.ts snapshotAnswer);
 * - a single record built field by field from a row its statement's schema has parsed: GET /generation
 *   (generations.test.ts checks its answers with `expectExactOutput`).
 */
export function trustedOutput<S extends ZodType>(schema: S): S {
  const trusted = schema.clone();
  // tRPC's output middleware calls parse (parseAsync only when parse throws for an async schema).
  return Object.assign(trusted, {
    parse: (value: unknown) => value,
    parseAsync: async (value: unknown) => value,
  });
}
