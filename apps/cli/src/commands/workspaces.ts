import { optionalString, pagination, paginationOptions, positional, requireString, UsageError, type Command } from '../command.js';
import { renderRecord } from '../output.js';

export const workspaceCommands: Command[] = [
  {
    path: ['workspaces', 'create'],
    summary: 'Create a workspace',
    options: {
      slug: { type: 'string', value: '<slug>', description: 'URL-safe slug, unique in the organization (required)' },
      name: { type: 'string', value: '<name>', description: 'display name (required)' },
      description: { type: 'string', value: '<text>', description: 'description' },
      'include-byok-in-budgets': { type: 'boolean', description: 'count BYOK spend when budgets are enforced' },
    },
    async run(ctx) {
      const workspace = await ctx.client.workspaces.create.mutate({
        slug: requireString(ctx, 'slug'),
        name: requireString(ctx, 'name'),
        description: optionalString(ctx, 'description'),
        include_byok_in_budgets: ctx.options['include-byok-in-budgets'] === true,
      });
      return { json: workspace, human: renderRecord({ ...workspace }) };
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
