// The one initTRPC call, and the base procedures every router builds on.
import { initTRPC } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { OperationStatuses } from '../http/statuses.js';
import { httpErrorOf, trpcCodeOf } from '../errors.js';
import { authenticate } from '../modules/keys/auth.service.js';
import { assertStorable } from '../storable-input.js';
import type { Context } from './context.js';

const t = initTRPC
  .context<Context>()
  // A REST operation (meta.openapi) also declares the statuses it answers (http/statuses.ts).
  .meta<OpenApiMeta<Partial<OperationStatuses>>>()
  .create({
    // tRPC clients get the same status and message as REST clients; no stack, no internals.
    errorFormatter({ shape, error }) {
      const http = httpErrorOf(error);
      const code = trpcCodeOf(http.status);
      return {
        message: http.message,
        code: TRPC_ERROR_CODES_BY_KEY[code],
        data: {
          code,
          httpStatus: http.status,
          path: shape.data.path,
          ...(http.metadata ? { metadata: http.metadata } : {}),
        },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

export const publicProcedure = t.procedure;

/**
 * Authentication and (for management procedures) the key's kind in one middleware: tRPC copies a
 * call's options at every middleware layer, so each layer saved is saved per call.
 */
function guard(management: boolean) {
  return t.middleware(async ({ ctx, next, getRawInput }) => {
    const actor = await authenticate(ctx.db, ctx.keys, ctx.keyHash, ctx.now(), { management });
    // After the key (401 and 403 come first), before the input's schema and any query.
    assertStorable(await getRawInput());
    return next({ ctx: { actor } });
  });
}

/** Any valid, enabled, unexpired key. ctx.actor is the key with its organization and workspace. */
export const authedProcedure = t.procedure.use(guard(false));

/** Management keys only: others get 403 with the spec's message. */
export const managementProcedure = t.procedure.use(guard(true));
