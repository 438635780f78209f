import type { RouterOutputs } from '@switchyard/client';
import { optionalString, pagination, paginationOptions, positional, requireString, UsageError, type Command } from '../command.js';
import { renderRecord } from '../output.js';

type ByokCredential = RouterOutputs['byok']['get']['data'];

const secretOption = {
  'provider-key': { type: 'string', value: '<secret>', description: 'the provider key (or env SWITCHYARD_PROVIDER_KEY, which keeps it out of shell history)' },
} as const;

function providerKey(ctx: Parameters<Command['run']>[0]): string {
  return optionalString(ctx, 'provider-key') ?? ctx.env.SWITCHYARD_PROVIDER_KEY ?? requireString(ctx, 'provider-key');
}

const credentialRows = (credentials: ByokCredential[]) =>
  credentials.map((c) => [c.id, c.provider, c.name ?? '', c.label, c.disabled ? 'disabled' : 'active', c.is_fallback ? 'yes' : '']);

export const byokCommands: Command[] = [
  {
    path: ['byok', 'add'],
    summary: 'Store a provider key (encrypted at rest; shown masked from then on)',
    options: {
      provider: { type: 'string', value: '<provider>', description: 'lowercase provider slug, e.g. openai, anthropic (required)' },
      name: { type: 'string', value: '<name>', description: 'a name for the credential' },
      workspace: { type: 'string', value: '<workspace>', description: 'UUID or slug (default: the default workspace)' },
      'every-workspace': { type: 'boolean', description: 'usable in every workspace of the organization (workspace_id null)' },
      ...secretOption,
    },
    async run(ctx) {
      const workspace = optionalString(ctx, 'workspace');
      const everywhere = ctx.options['every-workspace'] === true;
      if (everywhere && workspace !== undefined) throw new UsageError('--every-workspace and --workspace exclude each other');
      const credential = await ctx.client.byok.create.mutate({
        provider: requireString(ctx, 'provider'),
        name: optionalString(ctx, 'name'),
        workspace_id: everywhere ? null : workspace,
        key: providerKey(ctx),
      });
      return { json: credential, human: renderRecord({ ...credential.data }) };
    },
  },
  {
    path: ['byok', 'list'],
    summary: "List a workspace's provider credentials in routing order (never their secrets)",
    options: {
      ...paginationOptions,
      workspace: { type: 'string', value: '<workspace>', description: 'UUID or slug (default: the default workspace)' },
      provider: { type: 'string', value: '<provider>', description: 'only this provider' },
    },
    async run(ctx) {
      const page = await ctx.client.byok.list.query({
        ...pagination(ctx),
        workspace_id: optionalString(ctx, 'workspace'),
        provider: optionalString(ctx, 'provider'),
      });
      return { json: page, human: { columns: ['id', 'provider', 'name', 'label', 'status', 'fallback'], rows: credentialRows(page.data) } };
    },
  },
  {
    path: ['byok', 'rotate'],
    summary: 'Replace the provider key of a credential in place',
    args: ['<id>'],
    options: secretOption,
    async run(ctx) {
      const credential = await ctx.client.byok.update.mutate({ id: positional(ctx, 0, '<id>'), key: providerKey(ctx) });
      return { json: credential, human: renderRecord({ ...credential.data }) };
    },
  },
  {
    path: ['byok', 'disable'],
    summary: 'Disable a credential (enable it again with --enable)',
    args: ['<id>'],
    options: { enable: { type: 'boolean', description: 'enable instead' } },
    async run(ctx) {
      const credential = await ctx.client.byok.update.mutate({ id: positional(ctx, 0, '<id>'), disabled: ctx.options.enable !== true });
      return { json: credential, human: renderRecord({ ...credential.data }) };
    },
  },
  {
    path: ['byok', 'delete'],
    summary: 'Delete a credential: its encrypted secret is destroyed',
    args: ['<id>'],
    async run(ctx) {
      const id = positional(ctx, 0, '<id>');
      const result = await ctx.client.byok.delete.mutate({ id });
      return { json: result, human: `deleted ${id}` };
    },
  },
];
