import { optionalString, pagination, paginationOptions, positional, requireString, UsageError, type Command } from '../command.js';
import { renderRecord } from '../output.js';

/** An on/off option as a boolean, or undefined when it is not given. */
function onOff(ctx: Parameters<Command['run']>[0], name: string): boolean | undefined {
  const value = optionalString(ctx, name);
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new UsageError(`--${name} is on or off, not "${value}"`);
  return value === 'on';
}

export const workspaceCommands: Command[] = [
  {
    path: ['workspaces', 'create'],
    summary: 'Create a workspace',
    options: {
      slug: { type: 'string', value: '<slug>', description: 'URL-safe slug, unique in the organization (required)' },
      name: { type: 'string', value: '<name>', description: 'display name (required)' },
      description: { type: 'string', value: '<text>', description: 'description' },
      'default-text-model': { type: 'string', value: '<model>', description: 'default text model id' },
    },
    async run(ctx) {
      const workspace = await ctx.client.workspaces.create.mutate({
        slug: requireString(ctx, 'slug'),
        name: requireString(ctx, 'name'),
        description: optionalString(ctx, 'description'),
        default_text_model: optionalString(ctx, 'default-text-model'),
      });
      return { json: workspace, human: renderRecord({ ...workspace.data }) };
    },
  },
  {
    path: ['workspaces', 'show'],
    summary: 'Show a workspace (<workspace>: UUID or slug)',
    args: ['<workspace>'],
    async run(ctx) {
      const workspace = await ctx.client.workspaces.get.query({ id: positional(ctx, 0, '<workspace>') });
      return { json: workspace, human: renderRecord({ ...workspace.data }) };
    },
  },
  {
    path: ['workspaces', 'update'],
    summary: "Rename a workspace, change its slug or description, or turn its generation traces' broadcast and their bodies on or off",
    args: ['<workspace>'],
    options: {
      slug: { type: 'string', value: '<slug>', description: 'new slug' },
      name: { type: 'string', value: '<name>', description: 'new display name' },
      description: { type: 'string', value: '<text>', description: 'new description' },
      broadcast: { type: 'string', value: '<on|off>', description: 'is_observability_broadcast_enabled: generation traces to its destinations' },
      'io-logging': { type: 'string', value: '<on|off>', description: 'is_observability_io_logging_enabled: prompts and completions in those traces' },
    },
    async run(ctx) {
      const workspace = await ctx.client.workspaces.update.mutate({
        id: positional(ctx, 0, '<workspace>'),
        slug: optionalString(ctx, 'slug'),
        name: optionalString(ctx, 'name'),
        description: optionalString(ctx, 'description'),
        is_observability_broadcast_enabled: onOff(ctx, 'broadcast'),
        is_observability_io_logging_enabled: onOff(ctx, 'io-logging'),
      });
      return { json: workspace, human: renderRecord({ ...workspace.data }) };
    },
  },
  {
    path: ['workspaces', 'delete'],
    summary: "Delete a workspace without active keys, with its data (generations, content, rollups, files: a background job); the organization's totals stay",
    args: ['<workspace>'],
    async run(ctx) {
      const id = positional(ctx, 0, '<workspace>');
      const result = await ctx.client.workspaces.delete.mutate({ id });
      return { json: result, human: `deleted ${id}` };
    },
  },
  {
    path: ['workspaces', 'list'],
    summary: "List the organization's workspaces",
    options: paginationOptions,
    async run(ctx) {
      const page = await ctx.client.workspaces.list.query(pagination(ctx));
      return {
        json: page,
        human: {
          columns: ['id', 'slug', 'name', 'default'],
          rows: page.data.map((w) => [w.id, w.slug, w.name, w.is_default ? 'yes' : '']),
        },
      };
    },
  },
  {
    path: ['workspaces', 'add-members'],
    summary: 'Add organization members to a workspace, each with their organization role',
    args: ['<workspace>', '<user-id>...'],
    async run(ctx) {
      const id = positional(ctx, 0, '<workspace>');
      const userIds = ctx.positionals.slice(1);
      if (userIds.length === 0) throw new UsageError('give at least one <user-id>');
      const result = await ctx.client.workspaces.addMembers.mutate({ id, user_ids: userIds });
      return {
        json: result,
        human: `added ${result.added_count} member(s)${result.data.map((m) => `\n  ${m.user_id} (${m.role})`).join('')}`,
      };
    },
  },
  {
    path: ['workspaces', 'remove-members'],
    summary: 'Remove members from a workspace (not those holding active keys in it)',
    args: ['<workspace>', '<user-id>...'],
    async run(ctx) {
      const id = positional(ctx, 0, '<workspace>');
      const userIds = ctx.positionals.slice(1);
      if (userIds.length === 0) throw new UsageError('give at least one <user-id>');
      const result = await ctx.client.workspaces.removeMembers.mutate({ id, user_ids: userIds });
      return { json: result, human: `removed ${result.removed_count} member(s)` };
    },
  },
  {
    path: ['workspaces', 'members'],
    summary: "List a workspace's members (<workspace>: UUID or slug)",
    args: ['<workspace>'],
    options: paginationOptions,
    async run(ctx) {
      const page = await ctx.client.workspaces.members.query({ id: positional(ctx, 0, '<workspace>'), ...pagination(ctx) });
      return {
        json: page,
        human: { columns: ['user_id', 'role', 'created_at'], rows: page.data.map((m) => [m.user_id, m.role, m.created_at]) },
      };
    },
  },
];
