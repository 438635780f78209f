// What each kind of caller may do. Procedures and routes declare one rule each (trpc/init.ts,
// raw-routes/route.ts); this is the only place that decides a rule. The access-matrix test
// (test/access/access-matrix.test.ts) reads every procedure's and route's rule and calls it as every kind
// of caller.
//
// - public:     anyone, with or without a key (the shared catalog's reads: admin-api.md lists no 401
//               for them, and has their answers "unauthenticated"); the key, if any, is not read
// - tenant:     any key of an organization; a regular key sees its own workspace only (workspaces.ts)
// - management: an organization's management keys
// - platform:   platform keys only: writing the shared catalog, moving money (credits, recorded
//               spend), making the server reach the network (video upstreams), opening containers and
//               writing their files, and managing organizations
import { Forbidden } from '../lib/errors.js';
import type { Actor, Caller, PlatformActor } from './callers.js';

export const ACCESS_RULES = ['public', 'tenant', 'management', 'platform'] as const;
export type AccessRule = (typeof ACCESS_RULES)[number];

/**
 * The permission an operation needs, `<resource>:<read|write>` (files:write, presets:write...),
 * declared in its meta. Every management operation declares one (the access-matrix test fails
 * otherwise): a scoped management key (docs/scopes.md) calls only the management operations its
 * scopes grant. An unscoped management key holds them all.
 */
export type PermissionScope = `${string}:${'read' | 'write'}`;

/**
 * The reach of an operation open to every key that no scope narrows: what a key may call about
 * itself (GET /key) and the shared catalog as a key sees it. Every tenant operation declares a
 * permission scope or this (the access-matrix and reach tests fail otherwise).
 */
export const EVERY_KEY = 'every key';
export type OperationScope = PermissionScope | typeof EVERY_KEY;

/** The start of the reason of a 403 for a scoped key that lacks the operation's scope (the scope follows). */
export const SCOPE_MISSING_REASON = 'this key lacks the scope';
/** The reason of a 403 for a scoped key on an operation that declares no scope. */
export const UNSCOPED_ONLY_REASON = 'this operation needs an unscoped management key';

/** Whether scopes `held` grant `needed`: the scope itself, or its resource's write for a read. */
export function grants(held: readonly string[], needed: PermissionScope): boolean {
  if (held.includes(needed)) return true;
  return needed.endsWith(':read') && held.includes(`${needed.slice(0, -':read'.length)}:write`);
}

/**
 * The one scope rule: an operation called by a scoped management key needs the scope it declares
 * (403 naming it otherwise), whether a management operation or one open to every key of the
 * organization (the tenant rule: a scoped key reads its whole organization there, so its scopes
 * narrow it as they narrow management operations). EVERY_KEY operations are open to it as to any key.
 */
function admitScope(actor: Actor, scope: OperationScope | undefined): void {
  const held = actor.key.scopes;
  if (held.length === 0 || scope === EVERY_KEY) return;
  // The contract fixes a 403's message; what is missing goes in the reason.
  if (!scope) throw new Forbidden('a scoped key on an operation that declares no scope', undefined, { reason: UNSCOPED_ONLY_REASON });
  if (!grants(held, scope))
    throw new Forbidden(`scope ${scope} missing`, undefined, { reason: `${SCOPE_MISSING_REASON} ${scope}, which this operation needs` });
}

/**
 * The reason of a 403 for an org:member's identity-provider session on an operation other than
 * those every key may call about itself (ceiling.ts: personActorKey).
 */
export const MEMBER_SESSION_REASON = "an org:member's session calls only what every key may call about itself";

/** The scopes no access token's `inference` grants: the operations open to every key that hand out authority (authorization codes). */
export const AUTHORITY_SCOPES: readonly OperationScope[] = ['keys:write'];

/**
 * An access token (the token exchange's) holds what its `scope` claim and its key allow, whichever
 * is less. Its one scope, `inference`, grants what a regular key of the key's workspace may call,
 * except handing out authority: no management operation, no authorization code; and it reads as a
 * regular key does (its own workspace: tenancy.ts, workspaces.ts), even when its key is a management key.
 */
function admitAccessToken(rule: 'tenant' | 'management', scope: OperationScope | undefined): void {
  const why =
    rule === 'management'
      ? 'an access token (scope inference) calls no management operation'
      : scope !== undefined && AUTHORITY_SCOPES.includes(scope)
        ? `an access token (scope inference) does not hand out authority (${scope})`
        : null;
  if (why) throw new Forbidden(why, undefined, { reason: why });
}

/** Whether the caller reads its whole organization (a management key), not one workspace: never through an access token. */
export function readsOrganization(actor: Actor): boolean {
  return actor.key.is_management_key && actor.via !== 'access_token';
}

export const PLATFORM_ONLY_MESSAGE = 'Only platform keys can perform this operation';

/**
 * The tenant behind a caller allowed by `rule` ('tenant' or 'management'), by the operation's
 * `scope` for a scoped management key (admitScope), and by its token's scope for an access token
 * (admitAccessToken); 403 otherwise.
 */
export function admitTenant(caller: Caller, rule: 'tenant' | 'management', scope?: OperationScope): Actor {
  if (caller.kind === 'platform') throw new Forbidden('a platform key has no organization; it acts through platform operations');
  if (caller.session?.role === 'org:member' && scope !== EVERY_KEY) {
    throw new Forbidden(rule === 'management' ? 'management key required' : 'org:member session', undefined, { reason: MEMBER_SESSION_REASON });
  }
  if (rule === 'management' && !caller.key.is_management_key) throw new Forbidden('management key required');
  if (caller.via === 'access_token') admitAccessToken(rule, scope);
  if (caller.key.is_management_key) admitScope(caller, scope);
  return caller;
}

/** The platform caller; every tenant key gets 403 with PLATFORM_ONLY_MESSAGE. */
export function admitPlatform(caller: Caller): PlatformActor {
  if (caller.kind !== 'platform') throw new Forbidden('platform key required', PLATFORM_ONLY_MESSAGE);
  return caller;
}
