// The ceiling of authority: what a caller may make, change, rotate, disable, delete or hand out is
// never more than it holds itself (docs/scopes.md#the-ceiling). Every operation that hands out
// authority asks here: keys (create, update, rotate, delete), federation policies (the key they name,
// whose access tokens act as it), SCIM tokens, authorization codes, and role grants (members, SCIM
// group mappings). The rules:
// - what a key holds is a set of scopes: an unscoped management key every scope, a scoped one its
//   scopes, a regular key REGULAR_KEY_SCOPES (in its own workspace only, which is less);
// - a caller may make or change only keys whose scopes its own grant, never an unscoped management
//   key (unless it is one), and never its own scopes (unless it is unscoped);
// - it may not rotate, disable, delete, or name in a federation policy a key holding a scope it lacks;
// - nobody grants a role above their own (assertRoleWithin, for keys and for a person's role alike):
//   granting an admin role (org:admin, or a workspace's admin), or taking one away, needs an
//   unscoped management key; so does changing or removing an org:admin member;
// - an access token holds what its `scope` claim grants and its key holds, whichever is less: its
//   `inference` scope hands out nothing, so it passes none of these checks;
// - a person's session of the organization's identity provider holds what its person's role gives
//   (personActorKey): an org:admin what an unscoped management key holds, an org:member what every
//   key may call about itself and nothing more (rules.ts: admitTenant).
import type { ApiKey } from '@switchyard/db';
import { SCOPES } from '@switchyard/schema';
import { Forbidden } from '../lib/errors.js';
import type { Actor } from './callers.js';
import { grants, type PermissionScope } from './rules.js';

/**
 * What a regular key may call, as scopes: the scopes of the operations open to every key of an
 * organization (the tenant rule), each of which a regular key calls in its own workspace. A key that
 * makes a regular key hands out all of them (the reach test checks this list against the router).
 */
export const REGULAR_KEY_SCOPES: readonly PermissionScope[] = [
  'analytics:read',
  'files:write',
  'generations:read',
  'guardrails:read',
  'keys:write',
  'members:read',
  'presets:write',
];

/**
 * What a SCIM token lets the organization's identity provider do (/scim/v2): add and deactivate
 * members, and place them in groups, which the group mappings turn into workspace roles.
 */
export const SCIM_TOKEN_SCOPES: readonly PermissionScope[] = ['members:write', 'scim:write'];

/** A key's row, as far as its authority goes. */
export interface KeyAuthority {
  is_management_key: boolean;
  /** Empty (or null) on a management key: unscoped, every scope. */
  scopes: readonly string[] | null;
}

/** Whether a key is an unscoped management key: it holds every scope. */
export function isUnscoped(key: KeyAuthority): boolean {
  return key.is_management_key && (key.scopes ?? []).length === 0;
}

/** The scopes a key holds (see the top of this file). */
export function scopesOf(key: KeyAuthority): readonly string[] {
  if (!key.is_management_key) return REGULAR_KEY_SCOPES;
  return isUnscoped(key) ? SCOPES : (key.scopes ?? []);
}

/** Whether the caller holds every scope, as an unscoped management key does, and not through an access token. */
export function holdsEverything(actor: Actor): boolean {
  return actor.via !== 'access_token' && isUnscoped(actor.key);
}

/** The scopes of `wanted` the caller does not hold (an access token holds none that hand out authority). */
export function lackedScopes(actor: Actor, wanted: readonly string[]): string[] {
  if (holdsEverything(actor)) return [];
  if (actor.via === 'access_token') return [...wanted];
  const held = scopesOf(actor.key);
  return wanted.filter((scope) => !grants(held, scope as PermissionScope));
}

/** 403 with the contract's text and why in error.metadata.reason. */
function refused(reason: string): Forbidden {
  return new Forbidden(reason, undefined, { reason });
}

/**
 * The ceiling itself: 403 unless the caller holds every scope of `wanted` (what it is about to make,
 * or hand out). `what` names it in the reason ("a key with these scopes", "a SCIM token").
 */
export function assertWithinScopes(actor: Actor, wanted: readonly string[], what: string): void {
  if (actor.via === 'access_token') throw refused(`an access token (scope inference) cannot make or hand out ${what}`);
  const lacked = lackedScopes(actor, wanted);
  if (lacked.length > 0) throw refused(`${what} would hold ${lacked.join(', ')}, which the calling key lacks`);
}

/** 403 unless the caller holds everything: an unscoped management key (never through an access token). */
export function assertHoldsEverything(actor: Actor, action: string): void {
  if (holdsEverything(actor)) return;
  throw refused(actor.via === 'access_token' ? `an access token (scope inference) cannot ${action}` : `only an unscoped management key can ${action}`);
}

/** What a key would hold: a management key with these scopes (none: unscoped), or a regular key. */
export function wantedKey(isManagementKey: boolean, scopes: readonly string[] | null | undefined): KeyAuthority {
  return { is_management_key: isManagementKey, scopes: scopes ?? [] };
}

/** A key may be made with this authority by the caller: within its scopes, never an unscoped management key unless the caller is one. */
export function assertMayMakeKey(actor: Actor, made: KeyAuthority): void {
  if (isUnscoped(made) && !holdsEverything(actor)) {
    throw refused('an unscoped management key can be made only by an unscoped management key');
  }
  assertWithinScopes(actor, scopesOf(made), made.is_management_key ? 'a management key with these scopes' : 'a regular key');
}

/**
 * The caller may change, rotate, disable, delete, or name in a federation policy this key: it holds
 * no scope the caller lacks. `action` names the act in the reason.
 */
export function assertMayActOnKey(actor: Actor, target: KeyAuthority & { id: string }, action: string): void {
  if (holdsEverything(actor)) return;
  if (actor.via === 'access_token') throw refused(`an access token (scope inference) cannot ${action} a key`);
  if (isUnscoped(target)) throw refused(`only an unscoped management key can ${action} an unscoped management key`);
  const lacked = lackedScopes(actor, scopesOf(target));
  if (lacked.length > 0) throw refused(`the key holds ${lacked.join(', ')}, which the calling key lacks: it cannot ${action} it`);
}

/**
 * A change of a key's scopes (PATCH scopes): the caller may act on the key, may make a key with
 * the new scopes, and is not changing its own (a scoped key cannot widen or narrow itself).
 */
export function assertMayRescopeKey(actor: Actor, target: KeyAuthority & { id: string }, scopes: readonly string[]): void {
  if (holdsEverything(actor)) return;
  if (target.id === actor.key.id) throw refused('a scoped key cannot change its own scopes');
  assertMayActOnKey(actor, target, 'change');
  assertMayMakeKey(actor, wantedKey(target.is_management_key, target.is_management_key ? scopes : null));
}

/** A role an operation grants: of the organization, or of a workspace. */
export type GrantedRole = 'org:admin' | 'org:member' | 'workspace:admin' | 'workspace:member';

/** How high a role stands: an org:admin above a workspace's admin, above either member role. */
const RANK: Record<GrantedRole, number> = { 'org:admin': 3, 'workspace:admin': 2, 'org:member': 1, 'workspace:member': 1 };

/**
 * Who grants a role: a key (the API's callers) or a person's role (a console session). A key stands
 * for an admin only when it is an unscoped management key (not through an access token): its
 * authority is the organization's whole; any other key's, or a token's, is a member's.
 */
export type Granter = Actor | GrantedRole;

function roleOf(granter: Granter): GrantedRole {
  if (typeof granter === 'string') return granter;
  return holdsEverything(granter) ? 'org:admin' : 'org:member';
}

/**
 * The one rule for role grants: nobody grants a role above their own. An org:admin grants any role,
 * a workspace's admin any but org:admin (in its workspace: the caller resolves which), a member only
 * member roles. So an admin role (org:admin, a workspace's admin) is granted by an unscoped
 * management key only; a scoped key holding the operation's scope grants member roles. Taking an
 * admin role away is granting it too (the same authority decides who holds it).
 */
export function assertRoleWithin(granter: Granter, role: GrantedRole): void {
  const held = roleOf(granter);
  if (RANK[role] <= RANK[held]) return;
  throw refused(typeof granter === 'string' ? `a caller holding ${held} cannot grant ${role}` : `granting ${role} needs an unscoped management key`);
}

/** Changing or removing a member is acting on their role: the same rule, for the role the member holds. */
export function assertMayActOnMember(granter: Granter, memberRole: 'org:admin' | 'org:member', action: string): void {
  const held = roleOf(granter);
  if (RANK[memberRole] <= RANK[held]) return;
  throw refused(
    typeof granter === 'string'
      ? `a caller holding ${held} cannot ${action} a member holding ${memberRole}`
      : `only an unscoped management key can ${action} a member holding ${memberRole}`,
  );
}

/** A person's organization role, as a session of the organization's identity provider acts with it. */
export type PersonRole = 'org:admin' | 'org:member';

/**
 * The key a person's identity-provider session acts as, for the rules and the ceiling, which read
 * authority from `actor.key`: org:admin an unscoped management key (everything a management key
 * does, the ceiling's checks included), org:member a regular key of the organization's default
 * workspace, which admitTenant narrows further to the operations every key may call about itself.
 * No such key is stored: its id and hash name the session (per-key counters and idempotency keys
 * are the session's), and the audit log names the person, not this key.
 */
export function personActorKey(
  role: PersonRole,
  of: { sessionId: string; organizationId: string; workspaceId: string; userId: string; createdAt: Date },
): ApiKey {
  return {
    id: of.sessionId,
    organization_id: of.organizationId,
    workspace_id: of.workspaceId,
    creator_user_id: of.userId,
    // Never a key's hash (those are hex): what is keyed by the caller's key (idempotency) is the session's.
    hash: `session:${of.sessionId}`,
    label: '',
    name: 'session',
    is_management_key: role === 'org:admin',
    scopes: [],
    is_provisioning_key: false,
    is_free_tier: false,
    limit: null,
    limit_reset: null,
    include_byok_in_limit: false,
    allowed_data_regions: [],
    free_model_daily_limit: 0,
    expires_at: null,
    disabled: false,
    external_user: null,
    external_api_key_hash: null,
    deleted_at: null,
    usage: '0',
    byok_usage: '0',
    minted_by_key_id: null,
    created_at: of.createdAt,
    updated_at: of.createdAt,
  } as unknown as ApiKey;
}
