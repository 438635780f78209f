// `switchyard audit widened-keys`: the keys that were handed more authority than their maker had,
// read from the audit log (all of it, oldest first), as the server wrote it before scopes became a
// ceiling (docs/scopes.md, "The ceiling"). The paths reported:
// - minted: a key made through an authorization code (auth.exchangeCode) by a key with a limit. Before
//   minted keys spent from their maker's limit (decision 0041), each such key copied the limit, and
//   each one could spend it again. Also a key minted through a code made by a scoped management key
//   that lacks a scope a regular key holds: the code handed out a regular key. Newer entries name the
//   maker (`minted_by`); for older ones the maker is the key whose auth.createCode entry, by the same
//   user, last named the same key name and workspace before the exchange.
// - scopes: a management key with scopes (keys.create, keys.update) that made or changed a key to
//   scopes it lacks itself, or to no scopes (every management operation), or changed its own scopes;
//   or that made a regular key while lacking a scope a regular key holds.
// - rotated: a scoped management key rotated (keys.rotate) another key holding a scope it lacks, or
//   an unscoped one: the new secret went to the scoped key's holder.
// - federated: a scoped management key named such a key in a federation policy
//   (federationPolicies.create): the policy's access tokens acted as that key.
// - scim-token: a scoped management key made a SCIM token (scim.createToken), which acts on the whole
//   directory (it deactivates admins and grants roles through group mappings); `key` is the token's
//   id. Revoke it and make another with an unscoped key.
// A key's scopes and limit are those its latest keys.create or keys.update entry before the moment
// in question gave it. A key the log does not show (the organization's first key, which is unscoped
// and has no keys.create entry, or one made before the log's retention) is never reported as a maker;
// rotated or named by a scoped key, it is reported, since it may be unscoped.
import type { SwitchyardClient } from '@switchyard/client';
import type { Command } from '../command.js';

type AuditEntry = Awaited<ReturnType<SwitchyardClient['audit']['list']['query']>>['data'][number];

interface Known {
  scopes: string[] | null;
  management: boolean;
  limit: number | null;
}

export interface Widened {
  at: string;
  path: 'minted' | 'scopes' | 'rotated' | 'federated' | 'scim-token';
  key: string;
  by: string | null;
  why: string;
}

/**
 * What a regular key holds, as scopes: the server's REGULAR_KEY_SCOPES (apps/api/src/access/ceiling.ts),
 * which the CLI cannot import (it depends on the client only); the CLI's test compares the two.
 */
export const REGULAR_KEY_SCOPES: readonly string[] = [
  'analytics:read',
  'files:write',
  'generations:read',
  'guardrails:read',
  'keys:write',
  'members:read',
  'presets:write',
];

/** The audit actions the report reads. */
export const WIDENING_ACTIONS = [
  'keys.create',
  'keys.update',
  'keys.rotate',
  'auth.createCode',
  'auth.exchangeCode',
  'federationPolicies.create',
  'scim.createToken',
] as const;

type Changes = { before?: Record<string, unknown>; after?: Record<string, unknown> };

const changesOf = (entry: AuditEntry) => entry.changes as Changes;
const scopesIn = (value: unknown): string[] | null => (Array.isArray(value) ? value.map(String) : null);

/** Whether scopes `held` grant `needed`, as the server decides: the scope itself, or its resource's write for a read. */
const grants = (held: readonly string[], needed: string) =>
  held.includes(needed) || (needed.endsWith(':read') && held.includes(`${needed.slice(0, -5)}:write`));
const lacking = (held: readonly string[], wanted: readonly string[]) => wanted.filter((scope) => !grants(held, scope));
const isScoped = (key: Known | undefined): key is Known & { scopes: string[] } => !!key?.management && !!key.scopes && key.scopes.length > 0;

/**
 * Why a scoped key acting on `target` (rotating it, naming it in a policy) widened what its holder
 * has; null when the target holds nothing the actor lacks.
 */
function beyond(actor: Known & { scopes: string[] }, target: Known | undefined): string | null {
  if (!target) return "a key the log does not show (the organization's first key, unscoped, or one older than the log), by a scoped key";
  if (target.management && (target.scopes ?? []).length === 0) return 'an unscoped management key, by a scoped key';
  const lacked = lacking(actor.scopes, target.management ? (target.scopes ?? []) : REGULAR_KEY_SCOPES);
  return lacked.length > 0 ? `a key holding ${lacked.join(', ')}, by a scoped key lacking them` : null;
}

/** The widenings in `entries` (oldest first). */
export function widenedKeys(entries: AuditEntry[]): Widened[] {
  const keys = new Map<string, Known>();
  const codes: { at: string; maker: string; user: string | null; name: unknown; workspace: unknown }[] = [];
  const found: Widened[] = [];
  for (const entry of entries) {
    const { after = {} } = changesOf(entry);
    const target = entry.target.id;
    const by = entry.actor.key_hash;
    const actor = by ? keys.get(by) : undefined;
    if (entry.action === 'auth.createCode' && by) {
      codes.push({ at: entry.created_at, maker: by, user: entry.actor.user_id, name: after.key_name, workspace: after.workspace_id });
    }
    if (entry.action === 'federationPolicies.create' && isScoped(actor) && typeof after.key_hash === 'string' && after.key_hash !== by) {
      const why = beyond(actor, keys.get(after.key_hash));
      if (why) found.push({ at: entry.created_at, path: 'federated', key: after.key_hash, by, why: `named in federation policy ${target}: ${why}` });
    }
    if (entry.action === 'scim.createToken' && isScoped(actor) && target) {
      found.push({
        at: entry.created_at,
        path: 'scim-token',
        key: target,
        by,
        why: `a SCIM token made by a key holding ${actor.scopes.join(', ')}: it deactivates admins and grants roles through group mappings; revoke it and make another with an unscoped key`,
      });
    }
    if (!target || entry.target.type !== 'key') continue;
    if (entry.action === 'keys.rotate') {
      // A key rotating itself hands its holder nothing new.
      const why = isScoped(actor) && target !== by ? beyond(actor, keys.get(target)) : null;
      if (why) found.push({ at: entry.created_at, path: 'rotated', key: target, by, why: `rotated: ${why}` });
    } else if (entry.action === 'keys.create' || entry.action === 'auth.exchangeCode') {
      const made: Known = {
        scopes: scopesIn(after.scopes) ?? [],
        management: after.is_management_key === true,
        limit: typeof after.limit === 'number' || typeof after.limit === 'string' ? Number(after.limit) : null,
      };
      keys.set(target, made);
      if (entry.action === 'auth.exchangeCode') {
        const named = typeof after.minted_by === 'string' ? after.minted_by : null;
        const maker =
          named ??
          codes.filter((c) => c.at <= entry.created_at && c.user === entry.actor.user_id && c.name === after.name && c.workspace === after.workspace_id).at(-1)
            ?.maker ??
          null;
        const makerKey = maker ? keys.get(maker) : undefined;
        const limit = makerKey?.limit;
        if (limit !== undefined && limit !== null) {
          found.push({
            at: entry.created_at,
            path: 'minted',
            key: target,
            by: maker,
            why: `minted through a code by a key limited to ${limit} USD, with ${made.limit === null ? 'no limit' : `a copied limit of ${made.limit} USD`}`,
          });
        }
        const lacked = isScoped(makerKey) ? lacking(makerKey.scopes, REGULAR_KEY_SCOPES) : [];
        if (lacked.length > 0) {
          found.push({
            at: entry.created_at,
            path: 'minted',
            key: target,
            by: maker,
            why: `minted through a code by a scoped key lacking ${lacked.join(', ')}, which a regular key holds`,
          });
        }
        continue;
      }
      if (isScoped(actor)) {
        const lacked = lacking(actor.scopes, made.management ? (made.scopes ?? []) : REGULAR_KEY_SCOPES);
        if (made.management && made.scopes?.length === 0)
          found.push({ at: entry.created_at, path: 'scopes', key: target, by, why: 'an unscoped management key made by a scoped key' });
        else if (lacked.length > 0 && made.management)
          found.push({ at: entry.created_at, path: 'scopes', key: target, by, why: `scopes its maker lacks: ${lacked.join(', ')}` });
        else if (lacked.length > 0)
          found.push({
            at: entry.created_at,
            path: 'scopes',
            key: target,
            by,
            why: `a regular key made by a scoped key lacking ${lacked.join(', ')}, which it holds`,
          });
      }
    } else if (entry.action === 'keys.update') {
      const known = keys.get(target);
      if (!('scopes' in after)) {
        if (known && 'limit' in after) known.limit = after.limit === null ? null : Number(after.limit);
        continue;
      }
      const scopes = scopesIn(after.scopes) ?? [];
      if (isScoped(actor) && by) {
        const lacked = lacking(actor.scopes, scopes);
        if (target === by) found.push({ at: entry.created_at, path: 'scopes', key: target, by: target, why: 'a scoped key changed its own scopes' });
        else if (scopes.length === 0)
          found.push({ at: entry.created_at, path: 'scopes', key: target, by, why: 'widened to no scopes (every management operation) by a scoped key' });
        else if (lacked.length > 0)
          found.push({ at: entry.created_at, path: 'scopes', key: target, by, why: `given scopes its changer lacks: ${lacked.join(', ')}` });
      }
      if (known) known.scopes = scopes;
      if (known && 'limit' in after) known.limit = after.limit === null ? null : Number(after.limit);
    }
  }
  return found;
}

export const widenedKeysCommand: Command = {
  path: ['audit', 'widened-keys'],
  summary:
    'Report keys widened beyond their maker: minted through codes with a copied limit or by a scoped key, given scopes their maker lacked, rotated or named in a federation policy by a scoped key; and SCIM tokens made by a scoped key (audit:read)',
  options: { since: { type: 'string', value: '<time>', description: 'only entries made at or after this ISO 8601 time' } },
  async run(ctx) {
    const since = typeof ctx.options.since === 'string' ? ctx.options.since : undefined;
    const entries: AuditEntry[] = [];
    for (const action of WIDENING_ACTIONS) {
      let cursor: string | undefined;
      do {
        const page = await ctx.client.audit.list.query({ action, limit: 100, ...(since ? { since } : {}), ...(cursor ? { cursor } : {}) });
        entries.push(...page.data);
        cursor = page.cursor ?? undefined;
      } while (cursor);
    }
    entries.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    const found = widenedKeys(entries);
    return {
      json: { data: found },
      human: { columns: ['time', 'path', 'key', 'by', 'why'], rows: found.map((w) => [w.at, w.path, w.key.slice(0, 12), w.by?.slice(0, 12) ?? '', w.why]) },
    };
  },
};
