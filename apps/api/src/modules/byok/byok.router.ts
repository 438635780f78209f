import {
  ByokCredentialSchema,
  ByokOutputSchema,
  CreateByokInputSchema,
  DisableByokInputSchema,
  GetByokInputSchema,
  ListByokInputSchema,
  ListByokOutputSchema,
  RotateByokSecretInputSchema,
} from '@switchyard/schema';
import { z } from 'zod';
import { managementProcedure, router } from '../../trpc/init.js';
import { createByok, disableByok, getByok, listByok, resealByokSecrets, rotateByokSecret } from './byok.service.js';
import { answers, WHY } from '../../http/statuses.js';

export const byokRouter = router({
  get: managementProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/byok/{id}',
        protect: true,
        tags: ['Providers'],
        summary: 'Get a BYOK credential',
        description: 'Returns one BYOK provider credential; the provider key is never returned. Management key required.',
      },
      statuses: answers({
        403: WHY.managementOnly,
        404: `no credential with that id in the key's organization, including ids that are no UUID; ${WHY.namesNothing}`,
      }),
      listed: [401, 404, 500],
    })
    .input(GetByokInputSchema)
    .output(ByokOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getByok(ctx.db, ctx.actor, input) })),

  // Internal (tRPC only).
  list: managementProcedure
    .input(ListByokInputSchema)
    .output(ListByokOutputSchema)
    .query(({ ctx, input }) => listByok(ctx.db, ctx.actor, input)),
  create: managementProcedure
    .input(CreateByokInputSchema)
    .output(ByokCredentialSchema)
    .mutation(({ ctx, input }) => createByok(ctx.db, ctx.secrets, ctx.actor, input)),
  rotateSecret: managementProcedure
    .input(RotateByokSecretInputSchema)
    .output(ByokCredentialSchema)
    .mutation(({ ctx, input }) => rotateByokSecret(ctx.db, ctx.secrets, ctx.actor, input)),
  disable: managementProcedure
    .input(DisableByokInputSchema)
    .output(ByokCredentialSchema)
    .mutation(({ ctx, input }) => disableByok(ctx.db, ctx.actor, input)),
  resealSecrets: managementProcedure
    .input(z.void())
    .output(z.object({ resealed: z.number().int() }))
    .mutation(({ ctx }) => resealByokSecrets(ctx.db, ctx.secrets, ctx.actor)),
});
