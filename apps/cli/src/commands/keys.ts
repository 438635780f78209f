import type { RouterInputs, RouterOutputs } from '@switchyard/client';
import {
  optionalNumber,
  optionalString,
  pagination,
  paginationOptions,
  positional,
  requireString,
  resolveKeyHash,
  UsageError,
  type Command,
  type CommandContext,
} from '../command.js';
import { renderRecord } from '../output.js';

type ManagedKey = RouterOutputs['keys']['get']['data'];
/** A scope as keys.create takes it (the server refuses an unknown one with 400). */
type ManagedKeyScope = NonNullable<RouterInputs['keys']['create']['scopes']>[number];

const LIMIT_RESETS = ['daily', 'weekly', 'monthly'] as const;
type LimitReset = (typeof LIMIT_RESETS)[number];

function limitReset(ctx: CommandContext): LimitReset | null | undefined {
  const value = optionalString(ctx, 'limit-reset');
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  if (!(LIMIT_RESETS as readonly string[]).includes(value)) {
    throw new UsageError(`--limit-reset must be one of ${LIMIT_RESETS.join(', ')} or none`);
  }
  return value as LimitReset;
}

/** --limit <usd> or --limit none. */
function limit(ctx: CommandContext): number | null | undefined {
  return optionalString(ctx, 'limit') === 'none' ? null : optionalNumber(ctx, 'limit');
}

const keyRows = (keys: ManagedKey[]) =>
  keys.map((k) => [
    k.hash.slice(0, 12),
    k.name,
    k.label,
    k.is_management_key ? 'management' : 'regular',
    k.disabled ? 'disabled' : 'active',
    k.limit,
    k.limit_reset,
    k.usage,
  ]);
const keyColumns = ['hash', 'name', 'label', 'kind', 'status', 'limit', 'reset', 'usage'];

const limitOptions = {
  limit: { type: 'string', value: '<usd|none>', description: 'spending limit in USD' },
  'limit-reset': { type: 'string', value: '<daily|weekly|monthly|none>', description: 'period after which the limit resets' },
} as const;

export const keyCommands: Command[] = [
  {
    path: ['keys', 'create'],
    summary: 'Create an API key; its secret is printed once',
    options: {
      name: { type: 'string', value: '<name>', description: 'a name for the key (required)' },
      ...limitOptions,
      'include-byok': { type: 'boolean', description: 'count BYOK spend against the limit' },
      management: { type: 'boolean', description: 'make a management key' },
      scopes: { type: 'string', value: '<scope,scope>', description: 'with --management: only these scopes, e.g. keys:read,analytics:read (docs/scopes.md)' },
      workspace: { type: 'string', value: '<workspace>', description: 'UUID or slug (default: the default workspace)' },
      'expires-at': { type: 'string', value: '<iso8601>', description: 'expiry time, e.g. 2027-01-01T00:00:00Z' },
    },
    async run(ctx) {
      const scopes = optionalString(ctx, 'scopes')
        ?.split(',')
        .map((scope) => scope.trim())
        .filter(Boolean);
      const created = await ctx.client.keys.create.mutate({
        name: requireString(ctx, 'name'),
        limit: limit(ctx),
        limit_reset: limitReset(ctx),
        include_byok_in_limit: ctx.options['include-byok'] === true,
        is_management_key: ctx.options.management === true,
        workspace_id: optionalString(ctx, 'workspace'),
        expires_at: optionalString(ctx, 'expires-at'),
        ...(scopes === undefined ? {} : { scopes: scopes as ManagedKeyScope[] }),
      });
      return {
        json: created,
        human: `${renderRecord({ ...created.data })}\n\nSecret (shown once): ${created.key}`,
      };
    },
  },
  {
    path: ['keys', 'list'],
    summary: "List a workspace's keys with their usage, newest first",
    options: {
      ...paginationOptions,
      workspace: { type: 'string', value: '<workspace>', description: 'UUID or slug (default: the default workspace)' },
      all: { type: 'boolean', description: 'also list disabled keys' },
    },
    async run(ctx) {
      const page = await ctx.client.keys.list.query({
        ...pagination(ctx),
        include_disabled: ctx.options.all === true,
        workspace_id: optionalString(ctx, 'workspace'),
      });
      return { json: page, human: { columns: keyColumns, rows: keyRows(page.data) } };
    },
  },
  {
    path: ['keys', 'show'],
    summary: 'Show one key by its hash (or a unique prefix of it)',
    args: ['<hash>'],
    async run(ctx) {
      const key = await ctx.client.keys.get.query({ hash: await resolveKeyHash(ctx, positional(ctx, 0, '<hash>')) });
      return { json: key, human: renderRecord({ ...key.data }) };
    },
  },
  {
    path: ['keys', 'disable'],
    summary: 'Disable a key (by hash or unique prefix): it authenticates no more',
    args: ['<hash>'],
    async run(ctx) {
      const key = await ctx.client.keys.update.mutate({ hash: await resolveKeyHash(ctx, positional(ctx, 0, '<hash>')), disabled: true });
      return { json: key, human: `disabled ${key.data.name} (${key.data.label})` };
    },
  },
  {
    path: ['keys', 'delete'],
    summary: 'Delete a key (by hash or unique prefix): it authenticates no more; its generations and spend stay',
    args: ['<hash>'],
    async run(ctx) {
      const hash = await resolveKeyHash(ctx, positional(ctx, 0, '<hash>'));
      const result = await ctx.client.keys.delete.mutate({ hash });
      return { json: result, human: `deleted key ${hash.slice(0, 12)}` };
    },
  },
  {
    path: ['keys', 'rotate'],
    summary: 'Give a key (by hash or unique prefix) a new secret, printed once; same hash, limits and assignments',
    args: ['<hash>'],
    options: {
      grace: { type: 'string', value: '<seconds>', description: 'how long the old secret keeps working (0 to 604800; default 0)' },
    },
    async run(ctx) {
      const hash = await resolveKeyHash(ctx, positional(ctx, 0, '<hash>'));
      const grace = optionalNumber(ctx, 'grace');
      const rotated = await ctx.client.keys.rotate.mutate({ hash, ...(grace === undefined ? {} : { grace_period_seconds: grace }) });
      const until = grace ? `works for ${grace} s more` : 'works no more';
      return {
        json: rotated,
        human: `${renderRecord({ ...rotated.data })}\n\nNew secret (shown once): ${rotated.key}\nThe old secret ${until}.`,
      };
    },
  },
  {
    path: ['keys', 'secrets'],
    summary: "List a key's secrets (by hash or unique prefix): the current one and those rotated away, with their last use",
    args: ['<hash>'],
    async run(ctx) {
      const secrets = await ctx.client.keys.secrets.query({ hash: await resolveKeyHash(ctx, positional(ctx, 0, '<hash>')) });
      return {
        json: secrets,
        human: {
          columns: ['secret hash', 'current', 'created', 'expires', 'last used'],
          rows: secrets.data.map((s) => [s.hash_prefix, s.current ? 'yes' : 'no', s.created_at, s.expires_at, s.last_used_at]),
        },
      };
    },
  },
  {
    path: ['keys', 'set-limit'],
    summary: "Set a key's spending limit (by hash or unique prefix)",
    args: ['<hash>'],
    options: { ...limitOptions, 'include-byok': { type: 'boolean', description: 'count BYOK spend against the limit' } },
    async run(ctx) {
      const newLimit = limit(ctx);
      if (newLimit === undefined) throw new UsageError('--limit is required (a number of USD, or none)');
      const key = await ctx.client.keys.update.mutate({
        hash: await resolveKeyHash(ctx, positional(ctx, 0, '<hash>')),
        limit: newLimit,
        limit_reset: limitReset(ctx),
        ...(ctx.options['include-byok'] === true ? { include_byok_in_limit: true } : {}),
      });
      return { json: key, human: renderRecord({ ...key.data }) };
    },
  },
];
