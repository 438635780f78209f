// What each kind of caller may do. Procedures and routes declare one rule each (trpc/init.ts,
// http/authenticate.ts); this is the only place that decides a rule. The access-matrix test
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
import { Forbidden } from '../errors.js';
import type { Actor, Caller, PlatformActor } from './callers.js';

export const ACCESS_RULES = ['public', 'tenant', 'management', 'platform'] as const;
export type AccessRule = (typeof ACCESS_RULES)[number];

/**
 * The permission an operation needs, `<resource>:<read|write>` (files:write, presets:write...).
 * New operations declare it in their meta, so that scoped management keys (the audit issue's)
 * can be granted some operations and not others; until those land, every management key holds all.
 */
export type PermissionScope = `${string}:${'read' | 'write'}`;

export const PLATFORM_ONLY_MESSAGE = 'Only platform keys can perform this operation';

/** The tenant behind a caller allowed by `rule` ('tenant' or 'management'); 403 otherwise. */
export function admitTenant(caller: Caller, rule: 'tenant' | 'management'): Actor {
  if (caller.kind === 'platform') throw new Forbidden('a platform key has no organization; it acts through platform operations');
  if (rule === 'management' && !caller.key.is_management_key) throw new Forbidden('management key required');
  return caller;
}

/** The platform caller; every tenant key gets 403 with PLATFORM_ONLY_MESSAGE. */
export function admitPlatform(caller: Caller): PlatformActor {
  if (caller.kind !== 'platform') throw new Forbidden('platform key required', PLATFORM_ONLY_MESSAGE);
  return caller;
}
