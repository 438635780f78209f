import {
  optionalList,
  optionalNumber,
  optionalString,
  pagination,
  paginationOptions,
  positional,
  requireString,
  resolveKeyHash,
  UsageError,
  type Command,
} from '../command.js';
import { renderRecord } from '../output.js';

const RESETS = ['daily', 'weekly', 'monthly'] as const;

export const guardrailCommands: Command[] = [
  {
    path: ['guardrails', 'create'],
    summary: 'Create a guardrail',
    options: {
      name: { type: 'string', value: '<name>', description: 'name (required)' },
      description: { type: 'string', value: '<text>', description: 'description' },
      workspace: { type: 'string', value: '<workspace>', description: 'UUID or slug (default: the default workspace)' },
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
      const { data: guardrail } = await ctx.client.guardrails.create.mutate({
        name: requireString(ctx, 'name'),
        description: optionalString(ctx, 'description'),
        workspace_id: optionalString(ctx, 'workspace'),
        allowed_models: optionalList(ctx, 'allowed-models'),
        ignored_models: optionalList(ctx, 'ignored-models'),
        allowed_providers: optionalList(ctx, 'allowed-providers'),
        ignored_providers: optionalList(ctx, 'ignored-providers'),
        enforce_zdr: ctx.options['enforce-zdr'] === true ? true : undefined,
        limit_usd: optionalNumber(ctx, 'limit'),
        reset_interval: reset as (typeof RESETS)[number] | undefined,
      });
      return { json: guardrail, human: renderRecord({ ...guardrail }) };
    },
  },
  {
    path: ['guardrails', 'list'],
    summary: 'List the guardrails of a workspace (default: the default workspace)',
    options: { ...paginationOptions, workspace: { type: 'string', value: '<workspace>', description: 'UUID or slug (default: the default workspace)' } },
    async run(ctx) {
      const page = await ctx.client.guardrails.list.query({ ...pagination(ctx), workspace_id: optionalString(ctx, 'workspace') });
      const rows = page.data.map((g) => [g.id, g.name, g.limit_usd, g.reset_interval, g.workspace_id]);
      return { json: page, human: { columns: ['id', 'name', 'limit_usd', 'reset', 'workspace'], rows } };
    },
  },
  {
    path: ['guardrails', 'show'],
    summary: 'Show one guardrail',
    args: ['<guardrail-id>'],
    async run(ctx) {
      const { data } = await ctx.client.guardrails.get.query({ id: positional(ctx, 0, '<guardrail-id>') });
      return { json: data, human: renderRecord({ ...data }) };
    },
  },
  {
    path: ['guardrails', 'delete'],
    summary: 'Delete a guardrail and its key and member assignments',
    args: ['<guardrail-id>'],
    async run(ctx) {
      const id = positional(ctx, 0, '<guardrail-id>');
      const result = await ctx.client.guardrails.delete.mutate({ id });
      return { json: result, human: `deleted guardrail ${id}` };
    },
  },
  {
    path: ['guardrails', 'assignments'],
    summary: "List the organization's key or member assignments, across all guardrails",
    options: { ...paginationOptions, members: { type: 'boolean', description: 'member assignments (default: key assignments)' } },
    async run(ctx) {
      if (ctx.options.members === true) {
        const page = await ctx.client.guardrails.allMemberAssignments.query(pagination(ctx));
        const rows = page.data.map((a) => [a.guardrail_id, a.user_id, a.assigned_by, a.created_at]);
        return { json: page, human: { columns: ['guardrail', 'user', 'assigned_by', 'created_at'], rows } };
      }
      const page = await ctx.client.guardrails.allKeyAssignments.query(pagination(ctx));
      const rows = page.data.map((a) => [a.guardrail_id, a.key_hash.slice(0, 12), a.key_name, a.key_label, a.created_at]);
      return { json: page, human: { columns: ['guardrail', 'hash', 'name', 'label', 'created_at'], rows } };
    },
  },
  ...(['assign', 'unassign'] as const).map(
    (verb): Command => ({
      path: ['guardrails', verb],
      summary: `${verb === 'assign' ? 'Assign' : 'Unassign'} keys (by hash) and/or members (by user id) ${verb === 'assign' ? 'to' : 'from'} a guardrail`,
      args: ['<guardrail-id>'],
      options: {
        keys: { type: 'string', value: '<hash,hash>', description: `key hashes (or unique prefixes) to ${verb}` },
        members: { type: 'string', value: '<user,user>', description: `user ids to ${verb}` },
      },
      async run(ctx) {
        const id = positional(ctx, 0, '<guardrail-id>');
        const keyPrefixes = optionalList(ctx, 'keys');
        const keys = keyPrefixes && (await Promise.all(keyPrefixes.map((prefix) => resolveKeyHash(ctx, prefix))));
        const members = optionalList(ctx, 'members');
        if (!keys?.length && !members?.length) throw new UsageError('give --keys and/or --members');
        const g = ctx.client.guardrails;
        const [keyCall, memberCall] = verb === 'assign' ? [g.assignKeys, g.assignMembers] : [g.unassignKeys, g.unassignMembers];
        const result = {
          keys: keys?.length ? await keyCall.mutate({ id, key_hashes: keys }) : null,
          members: members?.length ? await memberCall.mutate({ id, member_user_ids: members }) : null,
        };
        const count = (answer: Record<string, number> | null) => (answer ? Object.values(answer)[0] : 0);
        return { json: result, human: `${verb}ed ${count(result.keys)} key(s), ${count(result.members)} member(s)` };
      },
    }),
  ),
];
