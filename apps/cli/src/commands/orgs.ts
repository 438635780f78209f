// The platform's commands: organizations are created, listed, disabled and deleted, their quotas
// set, and a new management key issued, with the platform key.
import {
  optionalNumber,
  optionalString,
  pagination,
  paginationOptions,
  PLATFORM_KEY,
  positional,
  requireString,
  UsageError,
  CliError,
  type CommandContext,
  type Command,
} from '../command.js';
import type { OrganizationDeletion } from '@switchyard/schema';
import { renderRecord } from '../output.js';

/** How long `orgs delete` waits for the deletion to end. */
const DELETE_WAIT_MS = 10 * 60 * 1000;

function renderDeletion(deletion: OrganizationDeletion): string {
  const { progress, ...fields } = deletion;
  return renderRecord({
    ...fields,
    step: progress?.step ?? '-',
    deleted_objects: progress?.deleted_objects ?? 0,
    deleted_generations: progress?.deleted_generations ?? 0,
  });
}

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
    path: ['orgs', 'delete'],
    summary: 'Delete an organization with everything it owns (keys refused at once; a job removes the rest); waits unless --detach',
    credential: PLATFORM_KEY,
    args: ['<organization-id>'],
    options: {
      confirm: { type: 'string', value: '<organization-id>', description: 'the organization id again (required: this cannot be undone)' },
      detach: { type: 'boolean', description: 'print the deletion as started, without waiting for it to end' },
    },
    async run(ctx) {
      const organizationId = positional(ctx, 0, '<organization-id>');
      let { data: deletion } = await ctx.client.organizations.delete.mutate({ organization_id: organizationId, confirm: requireString(ctx, 'confirm') });
      // Bounded: a large organization takes longer; --detach and `orgs deletion <id>` follow it then.
      const deadline = Date.now() + DELETE_WAIT_MS;
      while (ctx.options.detach !== true && (deletion.status === 'queued' || deletion.status === 'running')) {
        if (Date.now() > deadline)
          throw new CliError(
            `deletion ${deletion.id} is still ${deletion.status} after ${DELETE_WAIT_MS / 1000} s; follow it with: switchyard orgs deletion ${deletion.id}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 250));
        ({ data: deletion } = await ctx.client.organizations.deletion.query({ id: deletion.id }));
      }
      if (deletion.status === 'failed') throw new CliError(`deletion ${deletion.id} failed: ${deletion.error_message ?? 'no message'}`);
      return { json: deletion, human: renderDeletion(deletion) };
    },
  },
  {
    path: ['orgs', 'deletion'],
    summary: "An organization's deletion: its status and progress",
    credential: PLATFORM_KEY,
    args: ['<deletion-id>'],
    async run(ctx) {
      const { data: deletion } = await ctx.client.organizations.deletion.query({ id: positional(ctx, 0, '<deletion-id>') });
      return { json: deletion, human: renderDeletion(deletion) };
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
      'api-key-rpm': { type: 'string', value: '<n>', description: 'API requests per key and minute (at least 1)' },
      'default-api-key-rpm': { type: 'boolean', description: "back to the server's API_REQUESTS_PER_MINUTE_PER_KEY" },
      'api-rpm': { type: 'string', value: '<n>', description: "API requests per minute for all the organization's keys together (at least 1)" },
      'default-api-rpm': { type: 'boolean', description: "back to the server's API_REQUESTS_PER_MINUTE_PER_ORGANIZATION" },
    },
    async run(ctx) {
      const organization_id = positional(ctx, 0, '<organization-id>');
      const changes = {
        free_model_requests_per_minute: quotaOption(ctx, 'free-model-rpm', 0),
        api_requests_per_minute_per_key: quotaOption(ctx, 'api-key-rpm', 1),
        api_requests_per_minute: quotaOption(ctx, 'api-rpm', 1),
      };
      const settings = Object.values(changes).every((change) => change === undefined)
        ? await ctx.client.organizations.settings.query({ organization_id })
        : await ctx.client.organizations.updateSettings.mutate({ organization_id, ...changes });
      return { json: settings, human: renderRecord({ ...settings.data }) };
    },
  },
];

/** A quota option (`--<name> <n>`) or its way back to the server's default (`--default-<name>`): undefined when neither is given. */
function quotaOption(ctx: CommandContext, name: string, min: number): number | null | undefined {
  const value = optionalNumber(ctx, name);
  const toDefault = ctx.options[`default-${name}`] === true;
  if (value !== undefined && toDefault) throw new UsageError(`--${name} and --default-${name} exclude each other`);
  if (value !== undefined && (!Number.isInteger(value) || value < min)) throw new UsageError(`--${name} must be a whole number >= ${min}`);
  return toDefault ? null : value;
}
