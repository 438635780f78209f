// What each kind of caller may do. Procedures and routes declare one rule each (trpc/init.ts,
// raw-routes/route.ts); this is the only place that decides a rule. The access-matrix test
// (test/access-matrix.test.ts) reads every procedure's and route's rule and calls it as every kind
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

/** Whether scopes `held` grant `needed`: the scope itself, or its resource's write for a read. */
export function grants(held: readonly string[], needed: PermissionScope): boolean {
  if (held.includes(needed)) return true;
  return needed.endsWith(':read') && held.includes(`${needed.slice(0, -':read'.length)}:write`);
}

/**
 * The one scope rule: a management operation called by a scoped management key needs the scope it
 * declares (403 naming it otherwise). Operations open to every key of the organization (the tenant
 * rule) are not narrowed: a scoped key may do there what any key may.
 */
function admitScope(actor: Actor, scope: PermissionScope | undefined): void {
  const held = actor.key.scopes;
  if (held.length === 0) return;
  if (!scope) throw new Forbidden('a scoped key on an operation that declares no scope', 'This operation needs an unscoped management key');
  if (!grants(held, scope)) throw new Forbidden(`scope ${scope} missing`, `This key lacks the scope ${scope}, which this operation needs`);
}

export const PLATFORM_ONLY_MESSAGE = 'Only platform keys can perform this operation';

/**
 * The tenant behind a caller allowed by `rule` ('tenant' or 'management') and, for a management
 * operation, by the operation's `scope` (admitScope); 403 otherwise.
 */
export function admitTenant(caller: Caller, rule: 'tenant' | 'management', scope?: PermissionScope): Actor {
  if (caller.kind === 'platform') throw new Forbidden('a platform key has no organization; it acts through platform operations');
  if (rule === 'management') {
    if (!caller.key.is_management_key) throw new Forbidden('management key required');
    admitScope(caller, scope);
  }
  return caller;
}

/** The platform caller; every tenant key gets 403 with PLATFORM_ONLY_MESSAGE. */
export function admitPlatform(caller: Caller): PlatformActor {
  if (caller.kind !== 'platform') throw new Forbidden('platform key required', PLATFORM_ONLY_MESSAGE);
  return caller;
}
