import { GetCreditsOutputSchema } from '@switchyard/schema';
import { z } from 'zod';
import { managementProcedure, router } from '../../trpc/init.js';
import { getCredits } from '../generations/credits.service.js';

// The organization's account: what it bought and spent.
export const accountRouter = router({
  credits: managementProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/credits',
        protect: true,
        tags: ['Account'],
        summary: 'Get credits',
        description: "The organization's lifetime credit added and spend recorded, in USD. Management key required.",
      },
    })
    .input(z.void())
    .output(GetCreditsOutputSchema)
    .query(async ({ ctx }) => ({ data: await getCredits(ctx.db, ctx.actor) })),
});
