// The one initTRPC call, and the base procedures every router builds on.
import { initTRPC } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { Forbidden, httpErrorOf, Invalid, trpcCodeOf } from '../errors.js';
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

const pathParamNames = new Map<string, string[]>();

/**
 * REST path parameters arrive percent-encoded (`gpt-4%3Afree`, and `%2F` must not split a
 * segment); trpc-to-openapi passes them on raw. Decode them here, once, for REST calls only: a tRPC
 * caller's input is already plain. Malformed encodings are a 400.
 */
const decodePathParams = t.middleware(({ ctx, meta, getRawInput, next }) => {
  const path = meta?.openapi?.path;
  if (ctx.transport !== 'rest' || !path) return next();
  let names = pathParamNames.get(path);
  if (!names) {
    names = Array.from(path.matchAll(/\{(.+?)\}/g), (m) => m[1]!);
    pathParamNames.set(path, names);
  }
  if (names.length === 0) return next();
  const params = names;
  return next({
    getRawInput: async () => {
      const raw = (await getRawInput()) as Record<string, unknown>;
      const decoded = { ...raw };
      for (const name of params) {
        const value = raw[name];
        if (typeof value !== 'string') continue;
        try {
          decoded[name] = decodeURIComponent(value);
        } catch {
          throw new Invalid(`malformed percent-encoding in path parameter ${name}`, { parameter: name });
        }
      }
      return decoded;
    },
  });
});

export const publicProcedure = t.procedure.use(decodePathParams);

/** Any valid, enabled, unexpired key. ctx.actor is the key with its organization and workspace. */
export const authedProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const actor = await authenticate(ctx.db, ctx.keys, ctx.keyHash, ctx.now());
  return next({ ctx: { actor } });
});

/** Management keys only: others get 403 with the spec's message. */
export const managementProcedure = authedProcedure.use(({ ctx, next }) => {
  if (!ctx.actor.key.is_management_key) throw new Forbidden();
  return next();
});
