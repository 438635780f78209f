// Procedures that name their answer's schema in meta (ProcedureMeta.answer, trpc/init.ts) instead of
// declaring an output: tRPC adds no output layer to them and does not parse or copy their answers,
// yet the typed client sees the schema's type and the OpenAPI document the schema itself.
import type { inferRouterOutputs } from '@trpc/server';
import type {
  ActivityOutputSchema,
  GetGenerationOutputSchema,
  GetModelOutputSchema,
  ListEmbeddingsModelsOutputSchema,
  ListKeysOutputSchema,
} from '@switchyard/schema';
import { getInputOutputParsers } from 'trpc-to-openapi';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { BYTE_ROUTE_MOUNTS } from '../../src/modules.js';
import { openApiDocument } from '../../src/http/openapi.js';
import type { AppRouter } from '../../src/router.js';
import { appRouter } from '../../src/router.js';
import { proceduresOf } from '../../src/trpc/procedures.js';
import { routerProcedures } from '../fixtures.js';

type Outputs = inferRouterOutputs<AppRouter>;
type JsonSchema = { $ref?: string; type?: string; properties?: Record<string, unknown>; required?: string[] };

const answered = routerProcedures().filter((procedure) => procedure.meta?.answer);

describe('documented answers (meta.answer)', () => {
  it('are the four answers built from values a schema has already parsed whose parse would cost their read, and declare no output tRPC would parse and copy', () => {
    expect(answered.map(({ path }) => path).sort()).toEqual(['account.activity', 'generations.get', 'models.embeddings', 'models.get']);
    const procedures = proceduresOf(appRouter);
    for (const { path } of answered) expect(getInputOutputParsers(procedures[path]!).outputParser, path).toBeUndefined();
  });

  it("type the client's outputs as their schema's output", () => {
    expectTypeOf<Outputs['account']['activity']>().toEqualTypeOf<z.output<typeof ActivityOutputSchema>>();
    expectTypeOf<Outputs['generations']['get']>().toEqualTypeOf<z.output<typeof GetGenerationOutputSchema>>();
    expectTypeOf<Outputs['keys']['list']>().toEqualTypeOf<z.output<typeof ListKeysOutputSchema>>();
    expectTypeOf<Outputs['models']['embeddings']>().toEqualTypeOf<z.output<typeof ListEmbeddingsModelsOutputSchema>>();
    expectTypeOf<Outputs['models']['get']>().toEqualTypeOf<z.output<typeof GetModelOutputSchema>>();
  });

  it('are documented as the success response of their operation, with the fields of their schema', () => {
    const document = openApiDocument(appRouter, '/api/v1', BYTE_ROUTE_MOUNTS) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }> }>>;
      components: { schemas: Record<string, JsonSchema> };
    };
    const resolve = (schema: JsonSchema): JsonSchema =>
      schema.$ref ? resolve(document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]!) : schema;
    for (const { meta } of answered) {
      const { openapi, answer } = meta!;
      const success = document.paths[openapi!.path]![openapi!.method.toLowerCase()]!.responses['200']!;
      const documented = resolve(success.content!['application/json']!.schema);
      const expected = z.toJSONSchema(answer!, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
      expect(documented.type).toBe('object');
      expect(Object.keys(documented.properties ?? {}).sort()).toEqual(Object.keys(expected.properties ?? {}).sort());
      expect([...(documented.required ?? [])].sort()).toEqual([...(expected.required ?? [])].sort());
    }
  });
});
