import {
  AddCreditsInputSchema,
  CreditBalanceSchema,
  GenerationFeedbackInputSchema,
  GenerationFeedbackOutputSchema,
  GenerationIdQuerySchema,
  GetGenerationContentOutputSchema,
  GetGenerationOutputSchema,
  RecordGenerationBatchInputSchema,
  RecordGenerationBatchOutputSchema,
  RecordGenerationInputSchema,
  RecordGenerationOutputSchema,
  type RecordedGenerationResult,
  type RecordGenerationBatchOutput,
} from '@switchyard/schema';
import { envelopeOf, logIfInternal } from '../../lib/errors.js';
import type { Context } from '../../trpc/context.js';
import { authedProcedure, managementProcedure, platformItemsProcedure, platformProcedure, router } from '../../trpc/init.js';
import { addCredits } from './credits.service.js';
import { getGeneration, getGenerationContent, recordGeneration, recordGenerations, type RecordingOutcome, submitFeedback } from './generations.service.js';
import { answers, WHY } from '@switchyard/schema';
import type { z } from 'zod';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

/**
 * generations.recordBatch's answer: each failed item's error as generations.record's envelope would
 * carry it (the internal ones logged); the outcomes as they are when none failed.
 */
function batchAnswer(logger: Context['deps']['logger'], outcomes: RecordingOutcome[]): RecordGenerationBatchOutput {
  if (outcomes.every((o): o is Extract<RecordingOutcome, RecordedGenerationResult> => o.status !== 'error')) return { results: outcomes };
  return {
    results: outcomes.map((o): RecordedGenerationResult => {
      if (o.status !== 'error') return o;
      logIfInternal(logger, o.error, { procedure: 'generations.recordBatch', generation_id: o.id });
      return { id: o.id, status: 'error', error: envelopeOf(o.error).error };
    }),
  };
}

export const generationsRouter = router({
  get: authedProcedure
    .meta({
      scope: 'analytics:read',
      openapi: {
        method: 'GET',
        path: '/generation',
        protect: true,
        tags: ['Generations'],
        summary: 'Get a generation',
        description: 'Request and usage metadata of a generation.',
      },
      statuses: answers({
        402: "the organization's credit balance is negative (the message carries the link to add credits)",
        403: WHY.scopedKey,
        404: `no generation with that id visible to the key (a regular key sees its own workspace's, made by its user or by itself), or no id, or the id given twice; ${WHY.namesNothing}`,
      }),
      listed: [401, 402, 404, 429, 500, 502, 524, 529],
      // Built field by field from the row its statement's schema parsed: documented, not parsed again.
      answer: GetGenerationOutputSchema,
    })
    .input(GenerationIdQuerySchema)
    .query(async ({ ctx, input }): Promise<z.output<typeof GetGenerationOutputSchema>> => ({ data: await getGeneration(ctx.deps, ctx.actor, input) })),

  content: authedProcedure
    .meta({
      scope: 'generations:read',
      openapi: {
        method: 'GET',
        path: '/generation/content',
        protect: true,
        tags: ['Generations'],
        summary: 'Get the stored content of a generation',
        description: 'The stored prompt, completion and error content of a generation.',
      },
      statuses: answers({
        403: WHY.scopedKey,
        404: `no generation with that id visible to the key, or its content was not stored; or no id, or the id given twice; ${WHY.namesNothing}`,
      }),
      listed: [401, 403, 404, 429, 500, 502, 524, 529],
    })
    .input(GenerationIdQuerySchema)
    .output(GetGenerationContentOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getGenerationContent(ctx.deps, ctx.actor, input) })),

  feedback: managementProcedure
    .meta({
      scope: 'analytics:write',
      openapi: {
        method: 'POST',
        path: '/generation/feedback',
        protect: true,
        tags: ['Generations'],
        summary: 'Submit feedback on a generation',
        description: 'Structured feedback on a generation made by the authenticated user. Management key required.',
      },
      statuses: answers({
        400: `${WHY.invalidBody}: category not one of the seven, generation_id empty or over 200 characters, comment over 1000 characters; ${WHY.unstorable}; a body over 1 MB (413 is not listed)`,
        403: WHY.managementOnly,
        404: "no generation with that id made by the key's user",
      }),
      listed: [400, 401, 404, 429, 500],
    })
    .input(GenerationFeedbackInputSchema)
    .output(GenerationFeedbackOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await submitFeedback(ctx.deps, ctx.actor, input) })),

  // Internal (tRPC only, platform keys): the routing service records each generation after the
  // request; billing adds credits.
  record: platformProcedure
    .input(RecordGenerationInputSchema)
    .output(RecordGenerationOutputSchema)
    .mutation(({ ctx, input }) => recordGeneration(ctx.deps, ctx.platform, input)),

  // Internal: what the routing service's recorder (@switchyard/client's createGenerationRecorder)
  // sends: up to 1,000 generations a call, each recorded or refused on its own.
  recordBatch: platformItemsProcedure
    .input(RecordGenerationBatchInputSchema)
    .output(RecordGenerationBatchOutputSchema)
    .mutation(async ({ ctx, input }) => batchAnswer(ctx.deps.logger, await recordGenerations(ctx.deps, ctx.platform, input))),

  addCredits: platformProcedure
    .input(AddCreditsInputSchema.extend(IdempotencyField))
    .output(CreditBalanceSchema)
    .mutation(idempotent('generations.addCredits', ({ ctx, input }) => addCredits(ctx.deps, ctx.platform, input))),
});
