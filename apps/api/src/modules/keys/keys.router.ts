import { EVERY_KEY } from '../../access/rules.js';
import {
  CreateKeyInputSchema,
  CreateKeyOutputSchema,
  DeletedOutputSchema,
  GetKeyOutputSchema,
  KeyHashInputSchema,
  KeySecretsOutputSchema,
  ListKeysInputSchema,
  ListKeysOutputSchema,
  ManagedKeyOutputSchema,
  RotateKeyInputSchema,
  UpdateKeyInputSchema,
} from '@switchyard/schema';
import { authedProcedure, heavyManagementProcedure, managementProcedure, router } from '../../trpc/init.js';
import { createKey, deleteKey, getKey, getKeyInfo, keySecrets, listKeys, rotateKey, updateKey } from './keys.service.js';
import { answers, WHY } from '@switchyard/schema';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

const tags = ['API Keys'];

export const keysRouter = router({
  current: authedProcedure
    .meta({
      scope: EVERY_KEY,
      openapi: {
        method: 'GET',
        path: '/key',
        protect: true,
        tags,
        summary: 'Get the current API key',
        description: 'Returns information on the API key of the current authentication session.',
      },
      statuses: answers({}),
      listed: [401, 500],
    })
    .output(GetKeyOutputSchema)
    .query(async ({ ctx }) => ({ data: await getKeyInfo(ctx.deps, ctx.actor) })),

  create: managementProcedure
    .meta({
      scope: 'keys:write',
      openapi: {
        method: 'POST',
        path: '/keys',
        protect: true,
        tags,
        summary: 'Create a key',
        description: 'Creates a key; the secret is in this answer only. Management key required.',
      },
      successStatus: 201,
      statuses: answers({
        400: `name, limit, limit_reset, expires_at (seconds required, in the future) or external.api_key refused; creator_user_id not a member; scopes unknown, or on a regular key; ${WHY.unknownWorkspace}; ${WHY.invalidBody}; ${WHY.idempotencyKey}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: `${WHY.managementOnly}; ${WHY.ceiling}`,
      }),
      listed: [400, 401, 403, 429, 500],
    })
    .input(CreateKeyInputSchema.extend(IdempotencyField))
    .output(CreateKeyOutputSchema)
    .mutation(
      idempotent('keys.create', async ({ ctx, input }) => {
        const { secret, key } = await createKey(ctx.deps, ctx.actor, input);
        return { data: key, key: secret };
      }),
    ),
  list: heavyManagementProcedure
    .meta({
      scope: 'keys:read',
      openapi: {
        method: 'GET',
        path: '/keys',
        protect: true,
        tags,
        summary: 'List keys',
        description:
          'Keys of one workspace (default: the default workspace), newest first, with their usage. Disabled keys only with include_disabled=true. Management key required.',
      },
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unstorable}; include_disabled not true or false; hash_prefix not hex; ${WHY.unknownWorkspace}`,
        403: WHY.managementOnly,
      }),
      listed: [400, 401, 429, 500],
    })
    .input(ListKeysInputSchema)
    // Parsed on the way out: a page's cost is its statement's, and the parse does not show beside it (decision 0050).
    .output(ListKeysOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await listKeys(ctx.deps, ctx.actor, input) })),
  get: managementProcedure
    .meta({
      scope: 'keys:read',
      openapi: { method: 'GET', path: '/keys/{hash}', protect: true, tags, summary: 'Get a key', description: 'Management key required.' },
      statuses: answers({
        403: WHY.managementOnly,
        404: `no key with that hash in the key's organization, or a deleted one; ${WHY.namesNothing}`,
      }),
      listed: [401, 404, 429, 500],
    })
    .input(KeyHashInputSchema)
    .output(ManagedKeyOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getKey(ctx.deps, ctx.actor, input) })),
  update: managementProcedure
    .meta({
      scope: 'keys:write',
      openapi: {
        method: 'PATCH',
        path: '/keys/{hash}',
        protect: true,
        tags,
        summary: 'Update a key',
        description: 'Changes the fields given; a disabled key is refused from the next request on. Management key required.',
      },
      statuses: answers({
        400: `name, limit, limit_reset, include_byok_in_limit or scopes refused; scopes on a regular key; disabling or scoping the organization's last enabled, unscoped management key; ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: `${WHY.managementOnly}; ${WHY.ceiling}`,
        404: "no key with that hash in the key's organization, or a deleted one",
      }),
      listed: [400, 401, 404, 429, 500],
    })
    .input(UpdateKeyInputSchema)
    .output(ManagedKeyOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await updateKey(ctx.deps, ctx.actor, input) })),
  delete: managementProcedure
    .meta({
      scope: 'keys:write',
      openapi: {
        method: 'DELETE',
        path: '/keys/{hash}',
        protect: true,
        tags,
        summary: 'Delete a key',
        description: 'The key authenticates no request from then on; its generations and spend history stay. Management key required.',
      },
      statuses: answers({
        400: "deleting the organization's last enabled management key (unlisted; once declared, it also answers a hash no key can have: too long, NUL, a lone surrogate, a malformed percent-encoding)",
        403: `${WHY.managementOnly}; ${WHY.ceiling}`,
        404: "no key with that hash in the key's organization, or a deleted one",
      }),
      listed: [401, 404, 429, 500],
    })
    .input(KeyHashInputSchema)
    .output(DeletedOutputSchema)
    .mutation(({ ctx, input }) => deleteKey(ctx.deps, ctx.actor, input)),
  rotate: managementProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/keys/{hash}/rotate',
        protect: true,
        tags,
        summary: 'Rotate a key',
        description:
          'Gives the key a new secret, in this answer only; the key keeps its hash, name, limits, usage, guardrail assignments and allow-lists. The secrets in use keep working for grace_period_seconds (0 to 604800; default 0: they stop at once). Management key required.',
      },
      scope: 'keys:write',
      statuses: answers({
        400: `grace_period_seconds not an integer from 0 to 604800; a hash that is not 64 lowercase hex characters; ${WHY.invalidBody}; ${WHY.idempotencyKey}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: `${WHY.managementOnly}; ${WHY.ceiling}`,
        404: "no key with that hash in the key's organization, or a deleted one",
      }),
      // Not in the spec (this API's addition): it lists what it answers.
      listed: [400, 401, 403, 404, 500],
    })
    .input(RotateKeyInputSchema.extend(IdempotencyField))
    .output(CreateKeyOutputSchema)
    .mutation(
      idempotent('keys.rotate', async ({ ctx, input }) => {
        const { secret, key } = await rotateKey(ctx.deps, ctx.actor, input);
        return { data: key, key: secret };
      }),
    ),
  /** A key's secrets (tRPC only): the current one and those rotated away, with their ends and last uses. */
  secrets: managementProcedure
    .meta({ scope: 'keys:read' })
    .input(KeyHashInputSchema)
    .output(KeySecretsOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await keySecrets(ctx.deps, ctx.actor, input) })),
});
