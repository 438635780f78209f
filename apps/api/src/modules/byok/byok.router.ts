import {
  ByokOutputSchema,
  CreateByokInputSchema,
  DeletedOutputSchema,
  GetByokInputSchema,
  ListByokInputSchema,
  ListByokOutputSchema,
  UpdateByokInputSchema,
} from '@switchyard/schema';
import { z } from 'zod';
import { managementProcedure, router } from '../../trpc/init.js';
import { createByok, deleteByok, getByok, listByok, resealOrganizationSecrets, updateByok } from './byok.service.js';
import { answers, WHY } from '@switchyard/schema';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

const tags = ['Providers'];

export const byokRouter = router({
  create: managementProcedure
    .meta({
      scope: 'byok:write',
      openapi: {
        method: 'POST',
        path: '/byok',
        protect: true,
        tags,
        summary: 'Create a BYOK credential',
        description: 'Stores a provider key, encrypted; no answer contains it. Management key required.',
      },
      successStatus: 201,
      statuses: answers({
        400: `provider not a lowercase slug, key under 8 characters, is_fallback with is_byok_only, allowed_api_key_hashes naming keys that are not the organization's; ${WHY.unknownWorkspace}; ${WHY.invalidBody}; ${WHY.idempotencyKey}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
      }),
      listed: [400, 401, 403, 500],
    })
    .input(CreateByokInputSchema.extend(IdempotencyField))
    .output(ByokOutputSchema)
    .mutation(idempotent('byok.create', async ({ ctx, input }) => ({ data: await createByok(ctx.deps, ctx.actor, input) }))),
  list: managementProcedure
    .meta({
      scope: 'byok:read',
      openapi: {
        method: 'GET',
        path: '/byok',
        protect: true,
        tags,
        summary: 'List BYOK credentials',
        description: "A workspace's credentials (default: the default workspace) in routing order. Management key required.",
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable}; provider not a lowercase slug; ${WHY.unknownWorkspace}`,
        403: WHY.managementOnly,
      }),
      listed: [400, 401, 500],
    })
    .input(ListByokInputSchema)
    .output(ListByokOutputSchema)
    .query(({ ctx, input }) => listByok(ctx.deps, ctx.actor, input)),
  get: managementProcedure
    .meta({
      scope: 'byok:read',
      openapi: {
        method: 'GET',
        path: '/byok/{id}',
        protect: true,
        tags,
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
    .query(async ({ ctx, input }) => ({ data: await getByok(ctx.deps, ctx.actor, input) })),
  update: managementProcedure
    .meta({
      scope: 'byok:write',
      openapi: {
        method: 'PATCH',
        path: '/byok/{id}',
        protect: true,
        tags,
        summary: 'Update a BYOK credential',
        description: 'Changes the fields given; `key` rotates the secret in place; null clears an allowlist. Management key required.',
      },
      statuses: answers({
        400: `a field refused (as for POST /byok); ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        404: "no credential with that id in the key's organization, or a deleted one",
      }),
      listed: [400, 401, 403, 404, 500],
    })
    .input(UpdateByokInputSchema)
    .output(ByokOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await updateByok(ctx.deps, ctx.actor, input) })),
  delete: managementProcedure
    .meta({
      scope: 'byok:write',
      openapi: {
        method: 'DELETE',
        path: '/byok/{id}',
        protect: true,
        tags,
        summary: 'Delete a BYOK credential',
        description: 'Destroys the encrypted secret and marks the credential deleted; its generations stay. Management key required.',
      },
      statuses: answers({
        403: WHY.managementOnly,
        404: `no credential with that id in the key's organization, or a deleted one; ${WHY.namesNothing}`,
      }),
      listed: [401, 404, 500],
    })
    .input(GetByokInputSchema)
    .output(DeletedOutputSchema)
    .mutation(({ ctx, input }) => deleteByok(ctx.deps, ctx.actor, input)),

  // Internal (tRPC only): re-encryption of the organization's secrets (BYOK keys, destination
  // config and signing secrets) after a SWITCHYARD_SECRET_KEY rotation.
  resealSecrets: managementProcedure
    .meta({ scope: 'byok:write' })
    .output(z.object({ resealed: z.number().int() }))
    .mutation(({ ctx }) => resealOrganizationSecrets(ctx.deps, ctx.actor)),
});
