// trpc/trusted-output.ts: an output schema documented as the schema, its answers not parsed again.
import { ActivityOutputSchema } from '@switchyard/schema';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { getInputOutputParsers } from 'trpc-to-openapi';
import { appRouter } from '../src/router.js';
import { trustedOutput } from '../src/trpc/trusted-output.js';

describe('trustedOutput', () => {
  it('documents exactly what the schema documents', () => {
    const described = z.object({ data: z.array(z.object({ n: z.number().int().describe('a count') })) }).describe('a page');
    expect(z.toJSONSchema(trustedOutput(described))).toEqual(z.toJSONSchema(described));
    expect(z.toJSONSchema(trustedOutput(ActivityOutputSchema))).toEqual(z.toJSONSchema(ActivityOutputSchema));
  });

  it('returns the answer itself, unparsed and uncopied', async () => {
    const trusted = trustedOutput(ActivityOutputSchema);
    const answer = { data: [] };
    expect(trusted.parse(answer)).toBe(answer);
    expect(await trusted.parseAsync(answer)).toBe(answer);
    // The original is untouched: it still parses (and copies).
    expect(ActivityOutputSchema.parse(answer)).not.toBe(answer);
    expect(() => ActivityOutputSchema.parse({ data: [{}] })).toThrow();
  });

  // Each one's answers are checked by expectExactOutput in its own test file.
  it.each(['account.activity', 'keys.list', 'models.get', 'models.embeddings', 'generations.get'])('is the output of %s', (path) => {
    const { outputParser } = getInputOutputParsers(
      (appRouter._def.procedures as unknown as Record<string, Parameters<typeof getInputOutputParsers>[0]>)[path]!,
    );
    const answer = { data: [] };
    expect((outputParser as z.ZodType).parse(answer)).toBe(answer);
  });
});
