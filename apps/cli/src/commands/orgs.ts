// The platform's commands: organizations are created, listed and disabled, their quotas set, and a
// new management key issued, with the platform key.
import {
  optionalNumber,
  optionalString,
  pagination,
  paginationOptions,
  PLATFORM_KEY,
  positional,
  requireString,
  UsageError,
  type Command,
} from '../command.js';
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
  {
    path: ['orgs', 'issue-management-key'],
    summary: 'Issue a new management key for an organization (its secret shown once), in its default workspace',
    credential: PLATFORM_KEY,
    args: ['<organization-id>'],
    options: {
      name: { type: 'string', value: '<name>', description: "the key's name (default: Management key)" },
    },
    async run(ctx) {
      const issued = await ctx.client.organizations.issueManagementKey.mutate({
        organization_id: positional(ctx, 0, '<organization-id>'),
        name: optionalString(ctx, 'name'),
      });
      return { json: issued, human: renderRecord({ key: issued.key, hash: issued.data.hash, name: issued.data.name, workspace_id: issued.data.workspace_id }) };
    },
  },
  {
    path: ['orgs', 'settings'],
    summary: "Show an organization's settings (the quotas the platform grants it); change them with the options",
    credential: PLATFORM_KEY,
    args: ['<organization-id>'],
    options: {
      'free-model-rpm': { type: 'string', value: '<n>', description: 'free-model requests per key and minute (0: none)' },
      'default-free-model-rpm': { type: 'boolean', description: "back to the server's FREE_MODEL_REQUESTS_PER_MINUTE" },
    },
    async run(ctx) {
      const organization_id = positional(ctx, 0, '<organization-id>');
      const perMinute = optionalNumber(ctx, 'free-model-rpm');
      const toDefault = ctx.options['default-free-model-rpm'] === true;
      if (perMinute !== undefined && toDefault) throw new UsageError('--free-model-rpm and --default-free-model-rpm exclude each other');
      if (perMinute !== undefined && (!Number.isInteger(perMinute) || perMinute < 0)) throw new UsageError('--free-model-rpm must be a whole number >= 0');
      const settings =
        perMinute === undefined && !toDefault
          ? await ctx.client.organizations.settings.query({ organization_id })
          : await ctx.client.organizations.updateSettings.mutate({ organization_id, free_model_requests_per_minute: toDefault ? null : perMinute });
      return { json: settings, human: renderRecord({ ...settings.data }) };
    },
  },
];
