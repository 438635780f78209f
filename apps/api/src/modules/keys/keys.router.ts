import {
  CreateKeyInputSchema,
  CreateKeyOutputSchema,
  GetKeyOutputSchema,
  KeyHashInputSchema,
  KeySummarySchema,
  ListKeysInputSchema,
  ListKeysOutputSchema,
  UpdateKeyInputSchema,
} from '@switchyard/schema';
import { z } from 'zod';
import { authedProcedure, managementProcedure, router } from '../../trpc/init.js';
import { createKey, getKey, getKeyInfo, listKeys, updateKey } from './keys.service.js';
import { answers, WHY } from '../../http/statuses.js';

export const keysRouter = router({
  current: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/key',
        protect: true,
        tags: ['API Keys'],
        summary: 'Get the current API key',
        description: 'Returns information on the API key of the current authentication session.',
      },
      statuses: answers({}),
      listed: [401, 500],
    })
    .input(z.void())
    .output(GetKeyOutputSchema)
    .query(async ({ ctx }) => ({ data: await getKeyInfo(ctx.db, ctx.actor, ctx.now()) })),

  // Internal (tRPC only): key administration.
  create: managementProcedure
    .input(CreateKeyInputSchema)
    .output(CreateKeyOutputSchema)
    .mutation(({ ctx, input }) => createKey(ctx.db, ctx.actor, input)),
  list: managementProcedure
    .input(ListKeysInputSchema)
    .output(ListKeysOutputSchema)
    .query(({ ctx, input }) => listKeys(ctx.db, ctx.actor, input)),
  get: managementProcedure
    .input(KeyHashInputSchema)
    .output(KeySummarySchema)
    .query(({ ctx, input }) => getKey(ctx.db, ctx.actor, input.hash)),
  update: managementProcedure
    .input(UpdateKeyInputSchema)
    .output(KeySummarySchema)
    .mutation(({ ctx, input }) => updateKey(ctx.db, ctx.keys, ctx.actor, input)),
});
