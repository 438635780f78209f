import { optionalNumber, optionalString, positional, requireString, resolveKeyHash, UsageError, type Command, type CommandContext } from '../command.js';
import { renderRecord } from '../output.js';

const RESETS = ['daily', 'weekly', 'monthly'] as const;

function list(ctx: CommandContext, name: string): string[] | undefined {
  const value = optionalString(ctx, name);
  return value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean);
}

export const guardrailCommands: Command[] = [
  {
    path: ['guardrails', 'create'],
    summary: 'Create a guardrail',
    options: {
      name: { type: 'string', value: '<name>', description: 'name (required)' },
      description: { type: 'string', value: '<text>', description: 'description' },
      workspace: { type: 'string', value: '<workspace>', description: "UUID or slug (default: the caller key's)" },
      'allowed-models': { type: 'string', value: '<a,b>', description: 'only these models' },
      'ignored-models': { type: 'string', value: '<a,b>', description: 'never these models' },
      'allowed-providers': { type: 'string', value: '<a,b>', description: 'only these providers' },
      'ignored-providers': { type: 'string', value: '<a,b>', description: 'never these providers' },
      'enforce-zdr': { type: 'boolean', description: 'only zero-data-retention endpoints' },
      limit: { type: 'string', value: '<usd>', description: 'spending limit in USD' },
      'limit-reset': { type: 'string', value: '<daily|weekly|monthly>', description: 'period of the limit' },
    },
    async run(ctx) {
      const reset = optionalString(ctx, 'limit-reset');
      if (reset !== undefined && !(RESETS as readonly string[]).includes(reset)) throw new UsageError(`--limit-reset must be one of ${RESETS.join(', ')}`);
      const guardrail = await ctx.client.guardrails.create.mutate({
        name: requireString(ctx, 'name'),
        description: optionalString(ctx, 'description'),
        workspace_id: optionalString(ctx, 'workspace'),
        allowed_models: list(ctx, 'allowed-models'),
        ignored_models: list(ctx, 'ignored-models'),
        allowed_providers: list(ctx, 'allowed-providers'),
        ignored_providers: list(ctx, 'ignored-providers'),
        enforce_zdr: ctx.options['enforce-zdr'] === true,
        limit_usd: optionalNumber(ctx, 'limit'),
        reset_interval: reset as (typeof RESETS)[number] | undefined,
      });
      return { json: guardrail, human: renderRecord({ ...guardrail }) };
    },
  },
  {
    path: ['guardrails', 'assign'],
    summary: 'Assign keys (by hash) and/or members (by user id) to a guardrail',
    args: ['<guardrail-id>'],
    options: {
      keys: { type: 'string', value: '<hash,hash>', description: 'key hashes (or unique prefixes) to assign' },
      members: { type: 'string', value: '<user,user>', description: 'user ids to assign' },
    },
    async run(ctx) {
      const id = positional(ctx, 0, '<guardrail-id>');
      const keyPrefixes = list(ctx, 'keys');
      const keys = keyPrefixes && (await Promise.all(keyPrefixes.map((prefix) => resolveKeyHash(ctx, prefix))));
      const members = list(ctx, 'members');
      if (!keys?.length && !members?.length) throw new UsageError('give --keys and/or --members');
      const result = {
        keys: keys?.length ? await ctx.client.guardrails.assignKeys.mutate({ id, key_hashes: keys }) : null,
        members: members?.length ? await ctx.client.guardrails.assignMembers.mutate({ id, user_ids: members }) : null,
      };
      return {
        json: result,
        human: `assigned ${result.keys?.assigned_count ?? 0} key(s), ${result.members?.assigned_count ?? 0} member(s)`,
      };
    },
  },
];
