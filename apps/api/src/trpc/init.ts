// The one initTRPC call, and the base procedures every router builds on.
import { initTRPC, TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ZodType } from 'zod';
import type { OperationStatuses, Statuses } from '@switchyard/schema';
import { declaredAnswer, DomainError, httpErrorOf, trpcCodeOf } from '../lib/errors.js';
import { authenticate, type Actor, type Caller, type PlatformActor } from '../access/callers.js';
import { assertCsrf, authenticateSession, csrfHeaderOf } from '../access/sessions.js';
import { admitPlatform, admitTenant, type AccessRule, type OperationScope } from '../access/rules.js';
import { assertStorable } from '../lib/storable-input.js';
import type { Admission, Context } from './context.js';

/**
 * Every procedure's meta: its OpenAPI route (when on REST), its access rule (access/rules.ts), the
 * status of a successful REST answer (default 200; existing clients expect 201 from creates), and,
 * for a REST operation, the error statuses it answers (@switchyard/schema: statuses.ts), and the permission scope
 * it needs (access/rules.ts).
 */
export type ProcedureMeta = OpenApiMeta & {
  access?: AccessRule;
  /** The status of a successful REST answer (default 200): 201 for creates, 202 for a job started. */
  successStatus?: 200 | 201 | 202;
  /** A REST answer's Location header, from its output (D15: the job started). */
  location?: (output: never) => string;
  /** The permission scope it needs (access/rules.ts); EVERY_KEY for what every key may call about itself and the catalog. */
  scope?: OperationScope;
  /**
   * The answer's schema, for a procedure that declares no `.output()`: answers built from values a
   * schema has already parsed (rows their statement's schema parsed, catalog answers parsed once per
   * snapshot), which tRPC would parse again and copy on every answer, in an output layer of its
   * own. The OpenAPI document gives it as the output (http/openapi.ts), the resolver is typed as its
   * output, and the tests check each answer against it exactly (expectExactOutput).
   */
  answer?: ZodType;
} & Partial<OperationStatuses>;

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
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

/** No key needed. The access-matrix test refuses any procedure built on it without a rule. */
export const publicProcedure = t.procedure;

/**
 * An error as the operation answers it on every face: a status the operation does not declare
 * becomes the substitute the contract gives it (lib/errors.ts declaredAnswer), as the REST face
 * answers. Unchanged when the operation declares no statuses (it has no REST face) or declares the
 * error's own status.
 */
function declaredError(statuses: Statuses | undefined, error: unknown): unknown {
  if (!statuses) return error;
  const natural = httpErrorOf(error);
  const answer = declaredAnswer(statuses, natural);
  if (answer === natural) return error;
  const cause = new DomainError(answer.status, error instanceof Error ? error.message : undefined, answer.metadata);
  return new TRPCError({ code: trpcCodeOf(answer.status), message: answer.message, cause });
}

/** A middleware's result, its error answered as the operation declares (declaredError). */
function declared<R extends { ok: boolean }>(statuses: Statuses | undefined, result: R): R {
  if (result.ok || !statuses) return result;
  return { ...result, error: declaredError(statuses, (result as R & { error: unknown }).error) };
}

type TenantRule = 'tenant' | 'management';

/**
 * The caller of a request: its bearer token, else its session cookie (where sessions are read:
 * context.ts), whose state-changing calls must carry the session's CSRF token; 401 with neither.
 * The calls of one batch share their request's session lookup.
 */
async function callerOf(ctx: Context, stateChanging: boolean): Promise<Caller> {
  if (ctx.keyHash === null && ctx.sessionToken !== null) {
    const { deps } = ctx;
    ctx.sessionCaller ??= authenticateSession({ db: deps.db, keys: deps.keys, lifetimes: deps.sessionLifetimes }, ctx.sessionToken, deps.now());
    const actor = await ctx.sessionCaller;
    if (stateChanging && actor.session) assertCsrf(actor.session, csrfHeaderOf(ctx.headers));
    return actor;
  }
  const { deps } = ctx;
  return authenticate(deps.db, deps.keys, ctx.keyHash, deps.now(), ctx.accessToken, deps.accessTokens);
}

/**
 * A tenant caller admitted by `rule`: 401, 403, then the API's rate limits (429), mostly without
 * waiting (limits/api-rate-limits.ts). `stateChanging`: a mutation (a session's needs its CSRF token).
 */
async function admittedTenant(ctx: Context, rule: TenantRule, scope: OperationScope | undefined, stateChanging: boolean): Promise<{ actor: Actor }> {
  const caller = await callerOf(ctx, stateChanging);
  const actor = admitTenant(caller, rule, scope);
  const limited = ctx.deps.apiRateLimits.admit(ctx.deps.db, actor);
  if (limited) await limited;
  return { actor };
}

/** A platform caller: 401, then 403 for every key that is not a platform key. */
async function admittedPlatform(ctx: Context, stateChanging: boolean): Promise<{ platform: PlatformActor }> {
  const caller = await callerOf(ctx, stateChanging);
  return { platform: admitPlatform(caller) };
}

/**
 * Admits the caller of a procedure with this meta ahead of the call, for the REST face, which reads a
 * request's body only after 401, 403 and 429 (http/rest.ts); the procedure's middleware then takes
 * this admission instead of admitting (and counting) the caller again. Undefined for a public
 * procedure. A context made for one REST request holds one admission, for its one call.
 */
export function admitAhead(ctx: Context, meta: ProcedureMeta): Promise<unknown> | undefined {
  const { access, scope } = meta;
  let admitted: Promise<Admission> | undefined;
  // The REST face reads no session (context.ts): there is no CSRF token to ask for.
  if (access === 'tenant' || access === 'management') admitted = admittedTenant(ctx, access, scope, false);
  else if (access === 'platform') admitted = admittedPlatform(ctx, false);
  if (!admitted || !access) return undefined;
  ctx.admission = { access, scope, admitted };
  return admitted;
}

/**
 * The admission made ahead of this call (admitAhead), taken once, and only if it was made by the
 * same rule and scope as the middleware asking; undefined: none, and the middleware admits itself.
 */
function takeAdmission<A extends Admission>(ctx: Context, access: AccessRule, scope: OperationScope | undefined): Promise<A> | undefined {
  const ahead = ctx.admission;
  ctx.admission = undefined;
  return ahead && ahead.access === access && ahead.scope === scope ? (ahead.admitted as Promise<A>) : undefined;
}

/**
 * Authentication and the access rule in one middleware: tRPC copies a call's options at every
 * middleware layer, so each layer saved is saved per call. Each base procedure also carries its rule
 * in meta, where the access-matrix test reads it.
 */
function tenant(rule: TenantRule) {
  return t.procedure.meta({ access: rule }).use(async ({ ctx, next, getRawInput, meta, type }) => {
    try {
      const caller = await (takeAdmission<{ actor: Actor }>(ctx, rule, meta?.scope) ?? admittedTenant(ctx, rule, meta?.scope, type !== 'query'));
      // After the key (401, 403 and 429 come first), before the input's schema and any query.
      assertStorable(await getRawInput());
      return declared(meta?.statuses, await next({ ctx: caller }));
    } catch (error) {
      throw declaredError(meta?.statuses, error);
    }
  });
}

/**
 * Anyone, key or not: reads of the shared catalog, and the operations whose input is their own
 * credential or that publish what anyone may read (the exchange of an authorization code for a
 * key, the token exchange's signing keys). A key, if sent, is not read: the procedure never sees a caller.
 */
export const catalogProcedure = t.procedure.meta({ access: 'public' }).use(async ({ next, meta }) => declared(meta?.statuses, await next()));

/** Any valid, enabled, unexpired tenant key. ctx.actor is the key with its organization and workspace. */
export const authedProcedure = tenant('tenant');

/** An organization's management keys only: others get 403 with the spec's message. */
export const managementProcedure = tenant('management');

/**
 * Runs the call within its organization's share of the server (ctx.heavyOperations:
 * HEAVY_OPERATIONS_CONCURRENCY at once per process, one organization at most half of them, the
 * others waiting in arrival order), so that one tenant's stream of costly calls cannot take the
 * event loop from the others'. Not run when its client has gone while it waited.
 */
function withinShare<T>(ctx: Context & { actor: Actor }, next: () => Promise<T>): Promise<T> {
  const { heavyOperations, clientGone } = ctx.deps;
  return heavyOperations ? heavyOperations.run(ctx.actor.organizationId, Number.POSITIVE_INFINITY, next, clientGone) : next();
}

/** managementProcedure for the operations that cost the server most: GET /keys, GET /organization/members. */
export const heavyManagementProcedure = managementProcedure.use(({ ctx, next }) => withinShare(ctx, () => next()));

function platform(checkInput: boolean) {
  return t.procedure.meta({ access: 'platform' }).use(async ({ ctx, next, getRawInput, meta, type }) => {
    try {
      const caller = await (takeAdmission<{ platform: PlatformActor }>(ctx, 'platform', meta?.scope) ?? admittedPlatform(ctx, type !== 'query'));
      if (checkInput) assertStorable(await getRawInput());
      return declared(meta?.statuses, await next({ ctx: caller }));
    } catch (error) {
      throw declaredError(meta?.statuses, error);
    }
  });
}

/** Platform keys only: every tenant key gets 403 "Only platform keys can perform this operation". */
export const platformProcedure = platform(true);

/**
 * As platformProcedure, without its check of the whole input for values PostgreSQL cannot store:
 * for calls of many items (generations.recordBatch), which check each item instead, so that a NUL in
 * one fails that item alone, not the others of its call.
 */
export const platformItemsProcedure = platform(false);
