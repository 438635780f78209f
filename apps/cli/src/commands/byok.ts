import { optionalString, positional, requireString, type Command } from '../command.js';
import { renderRecord } from '../output.js';

const secretOption = {
  'provider-key': { type: 'string', value: '<secret>', description: 'the provider key (or env SWITCHYARD_PROVIDER_KEY, which keeps it out of shell history)' },
} as const;

function providerKey(ctx: Parameters<Command['run']>[0]): string {
  return optionalString(ctx, 'provider-key') ?? ctx.env.SWITCHYARD_PROVIDER_KEY ?? requireString(ctx, 'provider-key');
}

export const byokCommands: Command[] = [
  {
    path: ['byok', 'add'],
    summary: 'Store a provider key (encrypted at rest; shown masked from then on)',
    options: {
      provider: { type: 'string', value: '<provider>', description: 'e.g. openai, anthropic (required)' },
      name: { type: 'string', value: '<name>', description: 'a name for the credential (required)' },
      workspace: { type: 'string', value: '<workspace>', description: "UUID or slug (default: the caller key's)" },
      ...secretOption,
    },
    async run(ctx) {
      const credential = await ctx.client.byok.create.mutate({
        provider: requireString(ctx, 'provider'),
        name: requireString(ctx, 'name'),
        workspace_id: optionalString(ctx, 'workspace'),
        key: providerKey(ctx),
      });
      return { json: credential, human: renderRecord({ ...credential }) };
    },
  },
  {
    path: ['byok', 'rotate'],
    summary: 'Replace the provider key of a credential',
    args: ['<id>'],
    options: secretOption,
    async run(ctx) {
      const credential = await ctx.client.byok.rotateSecret.mutate({ id: positional(ctx, 0, '<id>'), key: providerKey(ctx) });
      return { json: credential, human: renderRecord({ ...credential }) };
    },
  },
];
