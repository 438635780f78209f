import { ActivityInputSchema, ActivityOutputSchema, GetCreditsOutputSchema } from '@switchyard/schema';
import type { z } from 'zod';
import { managementProcedure, router } from '../../trpc/init.js';
import { getCredits } from '../generations/credits.service.js';
import { getActivity } from './activity.service.js';
import { answers, WHY } from '@switchyard/schema';

// The organization's account: what it bought and spent.
export const accountRouter = router({
  credits: managementProcedure
    .meta({
      scope: 'analytics:read',
      openapi: {
        method: 'GET',
        path: '/credits',
        protect: true,
        tags: ['Account'],
        summary: 'Get credits',
        description: "The organization's lifetime credit added and spend recorded, in USD. Management key required.",
      },
      statuses: answers({
        403: WHY.managementOnly,
      }),
      listed: [401, 403, 500],
    })
    .output(GetCreditsOutputSchema)
    .query(async ({ ctx }) => ({ data: await getCredits(ctx.deps, ctx.actor) })),

  activity: managementProcedure
    .meta({
      scope: 'analytics:read',
      openapi: {
        method: 'GET',
        path: '/activity',
        protect: true,
        tags: ['Account'],
        summary: 'Get activity',
        description:
          'Usage by UTC day, model and provider over the last 30 completed UTC days, optionally of one day, key, member or ' +
          'workspace; group_by=workspace gives one row per workspace. Management key required.',
      },
      statuses: answers({
        400: `date not one of the last 30 completed UTC days, not YYYY-MM-DD; group_by not workspace; ${WHY.unstorable}`,
        403: WHY.managementOnly,
        404: "api_key_hash, user_id or workspace_id names nothing in the key's organization",
      }),
      listed: [400, 401, 403, 404, 500],
      // Built field by field from rows their statement's schema parsed: documented, not parsed again.
      answer: ActivityOutputSchema,
    })
    .input(ActivityInputSchema)
    .query(async ({ ctx, input }): Promise<z.output<typeof ActivityOutputSchema>> => ({ data: await getActivity(ctx.deps, ctx.actor, input) })),
});
