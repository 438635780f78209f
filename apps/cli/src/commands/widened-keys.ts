// `switchyard audit widened-keys`: the keys that were handed more authority than their maker had,
// read from the audit log (all of it, oldest first). Two paths are reported:
// - minted: a key made through an authorization code (auth.exchangeCode) by a key with a limit. Before
//   minted keys spent from their maker's limit (decision 0041), each such key copied the limit, and
//   each one could spend it again. Newer entries name the maker (`minted_by`); for older ones the
//   maker is the key whose auth.createCode entry, by the same user, last named the same key name and
//   workspace before the exchange.
// - scopes: a management key with scopes (keys.create, keys.update) that made or changed a key to
//   scopes it lacks itself, or to no scopes (every management operation), or changed its own scopes.
// A key's scopes and limit are those its latest keys.create or keys.update entry before the moment
// in question gave it; a key the log does not show (made before the log's retention) is unknown and
// never reported as a maker.
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
  path: 'minted' | 'scopes';
  key: string;
  by: string | null;
  why: string;
}

type Changes = { before?: Record<string, unknown>; after?: Record<string, unknown> };

const changesOf = (entry: AuditEntry) => entry.changes as Changes;
const scopesIn = (value: unknown): string[] | null => (Array.isArray(value) ? value.map(String) : null);

/** The widenings in `entries` (oldest first). */
export function widenedKeys(entries: AuditEntry[]): Widened[] {
  const keys = new Map<string, Known>();
  const codes: { at: string; maker: string; user: string | null; name: unknown; workspace: unknown }[] = [];
  const found: Widened[] = [];
  for (const entry of entries) {
    const { after = {} } = changesOf(entry);
    const target = entry.target.id;
    const actor = entry.actor.key_hash ? keys.get(entry.actor.key_hash) : undefined;
    if (entry.action === 'auth.createCode' && entry.actor.key_hash) {
      codes.push({ at: entry.created_at, maker: entry.actor.key_hash, user: entry.actor.user_id, name: after.key_name, workspace: after.workspace_id });
    }
    if (!target || entry.target.type !== 'key') continue;
    if (entry.action === 'keys.create' || entry.action === 'auth.exchangeCode') {
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
        const limit = maker ? keys.get(maker)?.limit : undefined;
        if (limit !== undefined && limit !== null) {
          found.push({
            at: entry.created_at,
            path: 'minted',
            key: target,
            by: maker,
            why: `minted through a code by a key limited to ${limit} USD, with ${made.limit === null ? 'no limit' : `a copied limit of ${made.limit} USD`}`,
          });
        }
        continue;
      }
      if (actor?.management && actor.scopes && actor.scopes.length > 0 && made.management) {
        const lacking = made.scopes?.filter((s) => !actor.scopes!.includes(s)) ?? [];
        if (made.scopes?.length === 0)
          found.push({ at: entry.created_at, path: 'scopes', key: target, by: entry.actor.key_hash, why: 'an unscoped management key made by a scoped key' });
        else if (lacking.length > 0)
          found.push({ at: entry.created_at, path: 'scopes', key: target, by: entry.actor.key_hash, why: `scopes its maker lacks: ${lacking.join(', ')}` });
      }
    } else if (entry.action === 'keys.update') {
      const known = keys.get(target);
      if (!('scopes' in after)) {
        if (known && 'limit' in after) known.limit = after.limit === null ? null : Number(after.limit);
        continue;
      }
      const scopes = scopesIn(after.scopes) ?? [];
      if (actor?.scopes && actor.scopes.length > 0 && entry.actor.key_hash) {
        const lacking = scopes.filter((s) => !actor.scopes!.includes(s));
        if (target === entry.actor.key_hash)
          found.push({ at: entry.created_at, path: 'scopes', key: target, by: target, why: 'a scoped key changed its own scopes' });
        else if (scopes.length === 0)
          found.push({
            at: entry.created_at,
            path: 'scopes',
            key: target,
            by: entry.actor.key_hash,
            why: 'widened to no scopes (every management operation) by a scoped key',
          });
        else if (lacking.length > 0)
          found.push({
            at: entry.created_at,
            path: 'scopes',
            key: target,
            by: entry.actor.key_hash,
            why: `given scopes its changer lacks: ${lacking.join(', ')}`,
          });
      }
      if (known) known.scopes = scopes;
      if (known && 'limit' in after) known.limit = after.limit === null ? null : Number(after.limit);
    }
  }
  return found;
}

export const widenedKeysCommand: Command = {
  path: ['audit', 'widened-keys'],
  summary: 'Report keys widened beyond their maker: minted through codes with a copied limit, or given scopes their maker lacked (audit:read)',
  options: { since: { type: 'string', value: '<time>', description: 'only entries made at or after this ISO 8601 time' } },
  async run(ctx) {
    const since = typeof ctx.options.since === 'string' ? ctx.options.since : undefined;
    const entries: AuditEntry[] = [];
    for (const action of ['keys.create', 'keys.update', 'auth.createCode', 'auth.exchangeCode']) {
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
