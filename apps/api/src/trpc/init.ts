// The one initTRPC call, and the base procedures every router builds on.
import { initTRPC } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { httpErrorOf, Invalid, trpcCodeOf } from '../errors.js';
import { authenticate, type Actor } from '../modules/keys/auth.service.js';
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

type RawInputGetter = () => Promise<unknown>;

/**
 * REST path parameters arrive percent-encoded (`gpt-4%3Afree`, and `%2F` must not split a
 * segment); trpc-to-openapi passes them on raw. They are decoded once, for REST calls only (a tRPC
 * caller's input is already plain), when the input is read. Malformed encodings are a 400.
 * Undefined when the call has nothing to decode.
 */
function pathParamDecoder(transport: string, path: string | undefined, getRawInput: RawInputGetter): RawInputGetter | undefined {
  if (transport !== 'rest' || !path) return undefined;
  let names = pathParamNames.get(path);
  if (!names) {
    names = Array.from(path.matchAll(/\{(.+?)\}/g), (m) => m[1]!);
    pathParamNames.set(path, names);
  }
  if (names.length === 0) return undefined;
  const params = names;
  return async () => {
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
  };
}

export const publicProcedure = t.procedure.use(({ ctx, meta, getRawInput, next }) => {
  const decoded = pathParamDecoder(ctx.transport, meta?.openapi?.path, getRawInput);
  return decoded ? next({ getRawInput: decoded }) : next();
});

/**
 * Path parameters, authentication and (for management procedures) the key's kind in one middleware:
 * tRPC copies a call's options at every middleware layer, so each layer saved is saved per call.
 */
function guard(management: boolean) {
  return t.middleware(async ({ ctx, meta, getRawInput, next }) => {
    const actor = await authenticate(ctx.db, ctx.keys, ctx.keyHash, ctx.now(), { management });
    const decoded = pathParamDecoder(ctx.transport, meta?.openapi?.path, getRawInput);
    if (!decoded) return next({ ctx: { actor } });
    // tRPC's next() takes ctx and getRawInput together (its middleware runner reads both), but its
    // overloads type them apart; the REST path-parameter tests cover this call.
    return next({ ctx: { actor }, getRawInput: decoded } as { ctx: { actor: Actor } });
  });
}

/** Any valid, enabled, unexpired key. ctx.actor is the key with its organization and workspace. */
export const authedProcedure = t.procedure.use(guard(false));

/** Management keys only. */
export const managementProcedure = t.procedure.use(guard(true));
