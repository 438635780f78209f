// The platform's commands: organizations are created, listed and disabled with the platform key.
import { optionalString, pagination, paginationOptions, PLATFORM_KEY, positional, requireString, type Command } from '../command.js';
import { renderRecord } from '../output.js';

export const orgCommands: Command[] = [
  {
    path: ['orgs', 'create'],
    summary: 'Create an organization with its default workspace, an owner and a management key (shown once)',
    credential: PLATFORM_KEY,
    options: {
      name: { type: 'string', value: '<name>', description: 'display name (required)' },
      'owner-email': { type: 'string', value: '<email>', description: 'the owner (org:admin) who holds the management key' },
    },
    async run(ctx) {
      const created = await ctx.client.organizations.create.mutate({
        name: requireString(ctx, 'name'),
        owner_email: optionalString(ctx, 'owner-email'),
      });
      const { organization: _, ...fields } = created;
      return { json: created, human: renderRecord(fields) };
    },
  },
  {
    path: ['orgs', 'list'],
    summary: 'List organizations, oldest first',
    credential: PLATFORM_KEY,
    options: paginationOptions,
    async run(ctx) {
      const page = await ctx.client.organizations.list.query(pagination(ctx));
      return {
        json: page,
        human: {
          columns: ['id', 'name', 'credit_balance', 'disabled', 'created_at'],
          rows: page.data.map((o) => [o.id, o.name, o.credit_balance, o.disabled ? 'yes' : '', o.created_at]),
        },
      };
    },
  },
  {
    path: ['orgs', 'disable'],
    summary: 'Disable an organization: all of its keys are refused',
    credential: PLATFORM_KEY,
    args: ['<organization-id>'],
    async run(ctx) {
      const organization = await ctx.client.organizations.disable.mutate({ organization_id: positional(ctx, 0, '<organization-id>') });
      return { json: organization, human: renderRecord({ ...organization }) };
    },
  },
];
