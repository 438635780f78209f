// The one initTRPC call, and the base procedures every router builds on.
import { initTRPC } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { Forbidden, httpErrorOf, trpcCodeOf } from '../errors.js';
import { authenticate } from '../modules/keys/auth.service.js';
import type { Context } from './context.js';

const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta>()
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

/** Any valid, enabled, unexpired key. ctx.actor is the key with its organization and workspace. */
export const authedProcedure = t.procedure.use(async ({ ctx, next }) => {
  const actor = await authenticate(ctx.db, ctx.keyHash, ctx.now());
  return next({ ctx: { actor } });
});

/** Management keys only: others get 403 with the spec's message. */
export const managementProcedure = authedProcedure.use(({ ctx, next }) => {
  if (!ctx.actor.key.is_management_key) throw new Forbidden();
  return next();
});
