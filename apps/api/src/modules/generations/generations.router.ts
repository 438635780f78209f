import {
  AddCreditsInputSchema,
  CreditBalanceSchema,
  GenerationFeedbackInputSchema,
  GenerationFeedbackOutputSchema,
  GenerationIdQuerySchema,
  GetGenerationContentOutputSchema,
  GetGenerationOutputSchema,
  RecordGenerationInputSchema,
  RecordGenerationOutputSchema,
} from '@switchyard/schema';
import { authedProcedure, managementProcedure, platformProcedure, router } from '../../trpc/init.js';
import { addCredits } from './credits.service.js';
import { getGeneration, getGenerationContent, recordGeneration, submitFeedback } from './generations.service.js';

export const generationsRouter = router({
  get: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/generation',
        protect: true,
        tags: ['Generations'],
        summary: 'Get a generation',
        description: 'Request and usage metadata of a generation.',
      },
    })
    .input(GenerationIdQuerySchema)
    .output(GetGenerationOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getGeneration(ctx.db, ctx.actor, input) })),

  content: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/generation/content',
        protect: true,
        tags: ['Generations'],
        summary: 'Get the stored content of a generation',
        description: 'The stored prompt, completion and error content of a generation.',
      },
    })
    .input(GenerationIdQuerySchema)
    .output(GetGenerationContentOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getGenerationContent(ctx.db, ctx.actor, input) })),

  feedback: managementProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/generation/feedback',
        protect: true,
        tags: ['Generations'],
        summary: 'Submit feedback on a generation',
        description: 'Structured feedback on a generation made by the authenticated user. Management key required.',
      },
    })
    .input(GenerationFeedbackInputSchema)
    .output(GenerationFeedbackOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await submitFeedback(ctx.db, ctx.actor, input) })),

  // Internal (tRPC only, platform keys): the routing service records each generation after the
  // request; billing adds credits.
  record: platformProcedure
    .input(RecordGenerationInputSchema)
    .output(RecordGenerationOutputSchema)
    .mutation(({ ctx, input }) => recordGeneration(ctx, input, ctx.now())),

  addCredits: platformProcedure
    .input(AddCreditsInputSchema)
    .output(CreditBalanceSchema)
    .mutation(({ ctx, input }) => addCredits(ctx.db, input)),
});
