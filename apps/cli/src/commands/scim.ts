import { CliError, pagination, paginationOptions, positional, requireString, UsageError, type Command } from '../command.js';
import { renderRecord } from '../output.js';

/** How long `scim sync` waits for its job to end. */
const SYNC_WAIT_MS = 60_000;

const ROLES = ['admin', 'member'] as const;

export const scimCommands: Command[] = [
  {
    path: ['scim', 'list'],
    summary: "List the organization's SCIM group mappings, oldest first",
    options: paginationOptions,
    async run(ctx) {
      const page = await ctx.client.scim.listGroupMappings.query(pagination(ctx));
      const rows = page.data.map((m) => [m.id, m.scim_group_id, m.workspace_id, m.role]);
      return { json: page, human: { columns: ['id', 'scim_group', 'workspace', 'role'], rows } };
    },
  },
  {
    path: ['scim', 'map'],
    summary: 'Map a SCIM group to a workspace with a role',
    options: {
      group: { type: 'string', value: '<uuid>', description: 'SCIM group UUID (required)' },
      workspace: { type: 'string', value: '<workspace>', description: 'workspace UUID or slug (required)' },
      role: { type: 'string', value: '<admin|member>', description: 'role in the workspace (required)' },
    },
    async run(ctx) {
      const role = requireString(ctx, 'role');
      if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      const { data } = await ctx.client.scim.createGroupMapping.mutate({
        scim_group_id: requireString(ctx, 'group'),
        workspace_id: requireString(ctx, 'workspace'),
        role: role as (typeof ROLES)[number],
      });
      return { json: data, human: renderRecord({ ...data }) };
    },
  },
  {
    path: ['scim', 'show'],
    summary: 'Show one SCIM group mapping',
    args: ['<mapping-id>'],
    async run(ctx) {
      const { data } = await ctx.client.scim.getGroupMapping.query({ id: positional(ctx, 0, '<mapping-id>') });
      return { json: data, human: renderRecord({ ...data }) };
    },
  },
  {
    path: ['scim', 'unmap'],
    summary: 'Delete a SCIM group mapping',
    args: ['<mapping-id>'],
    options: {
      'keep-members': { type: 'boolean', description: 'keep the members it granted as manually managed members' },
      'remove-members': { type: 'boolean', description: 'remove from the workspace the members it granted' },
    },
    async run(ctx) {
      const keep = ctx.options['keep-members'] === true;
      if (keep === (ctx.options['remove-members'] === true)) throw new UsageError('give exactly one of --keep-members and --remove-members');
      const id = positional(ctx, 0, '<mapping-id>');
      const result = await ctx.client.scim.deleteGroupMapping.mutate({ id, keep_members: keep ? 'true' : 'false' });
      return { json: result, human: `deleted SCIM group mapping ${id}` };
    },
  },
  {
    path: ['scim', 'groups', 'list'],
    summary: "List the organization's SCIM groups (GET /scim/groups), oldest first",
    options: paginationOptions,
    async run(ctx) {
      const page = await ctx.client.scim.listGroups.query(pagination(ctx));
      const rows = page.data.map((g) => [g.id, g.display_name, g.external_id ?? '', g.updated_at]);
      return { json: page, human: { columns: ['id', 'display_name', 'external_id', 'updated_at'], rows } };
    },
  },
  {
    path: ['scim', 'sync'],
    summary: 'Apply every group mapping again (a sync job); waits for it to end unless --detach',
    options: {
      detach: { type: 'boolean', description: 'print the job as started, without waiting for it to end' },
    },
    async run(ctx) {
      let { data: job } = await ctx.client.scim.createSyncJob.mutate();
      // A normal directory syncs within seconds; the wait is bounded all the same.
      const deadline = Date.now() + SYNC_WAIT_MS;
      while (ctx.options.detach !== true && (job.status === 'queued' || job.status === 'running')) {
        if (Date.now() > deadline)
          throw new CliError(
            `sync job ${job.id} is still ${job.status} after ${SYNC_WAIT_MS / 1000} s; see it with the API (GET /api/v1/scim/sync-jobs/${job.id})`,
          );
        await new Promise((resolve) => setTimeout(resolve, 250));
        ({ data: job } = await ctx.client.scim.getSyncJob.query({ id: job.id }));
      }
      if (job.status === 'failed') throw new CliError(`sync job ${job.id} failed: ${job.error_message ?? 'no message'}`);
      return { json: job, human: renderRecord({ ...job }) };
    },
  },
  {
    path: ['scim', 'tokens', 'create'],
    summary: 'Make a SCIM token for the identity provider (printed once)',
    async run(ctx) {
      const { token, data } = await ctx.client.scim.createToken.mutate();
      return {
        json: { token },
        human: `${renderRecord({ ...data })}\ntoken        ${token}\n\nGive the token to the identity provider as its bearer token for <server>/scim/v2; it is not shown again.`,
      };
    },
  },
  {
    path: ['scim', 'tokens', 'list'],
    summary: "List the organization's SCIM tokens (masked)",
    async run(ctx) {
      const page = await ctx.client.scim.listTokens.query();
      const rows = page.data.map((t) => [t.id, t.label, t.created_at, t.last_used_at ?? '-']);
      return { json: page, human: { columns: ['id', 'label', 'created_at', 'last_used_at'], rows } };
    },
  },
  {
    path: ['scim', 'tokens', 'revoke'],
    summary: 'Revoke a SCIM token: it authenticates nothing from now on',
    args: ['<token-id>'],
    async run(ctx) {
      const id = positional(ctx, 0, '<token-id>');
      const result = await ctx.client.scim.revokeToken.mutate({ id });
      return { json: result, human: `revoked SCIM token ${id}` };
    },
  },
];
