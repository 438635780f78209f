import { optionalNumber, optionalString, type Command } from '../command.js';
import { widenedKeysCommand } from './widened-keys.js';

// The audit log (docs/audit.md): the organization's entries, newest first (one page).
export const auditCommands: Command[] = [
  {
    path: ['audit', 'list'],
    summary: "List the organization's audit log entries, newest first (management key with audit:read)",
    options: {
      since: { type: 'string', value: '<time>', description: 'only entries made at or after this ISO 8601 time' },
      action: { type: 'string', value: '<resource.verb>', description: 'only entries of this action, e.g. keys.update' },
      actor: { type: 'string', value: '<hash>', description: 'only entries of the key with this hash' },
      limit: { type: 'string', value: '<n>', description: 'at most this many entries (1..100, default 50)' },
      cursor: { type: 'string', value: '<cursor>', description: 'the next page: the cursor a previous page gave' },
    },
    async run(ctx) {
      const since = optionalString(ctx, 'since');
      const action = optionalString(ctx, 'action');
      const actor = optionalString(ctx, 'actor');
      const limit = optionalNumber(ctx, 'limit');
      const cursor = optionalString(ctx, 'cursor');
      const page = await ctx.client.audit.list.query({
        ...(since !== undefined ? { since } : {}),
        ...(action !== undefined ? { action } : {}),
        ...(actor !== undefined ? { actor } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
      });
      const rows = page.data.map((e) => [
        e.created_at,
        e.action,
        `${e.target.type}${e.target.id ? ` ${e.target.id.slice(0, 12)}` : ''}`,
        `${e.actor.kind}${e.actor.key_hash ? ` ${e.actor.key_hash.slice(0, 12)}` : ''}`,
        e.client_address ?? '',
      ]);
      return { json: page, human: { columns: ['time', 'action', 'target', 'actor', 'from'], rows } };
    },
  },
  widenedKeysCommand,
];
