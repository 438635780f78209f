import { optionalList, optionalString, requireString, UsageError, type Command } from '../command.js';
import { renderRecord } from '../output.js';

// The organization's OpenID Connect identity provider, through which its people sign in to the
// console (docs/sessions.md). Setting and deleting it needs an unscoped management key.
export const identityProviderCommands: Command[] = [
  {
    path: ['identity-provider', 'show'],
    summary: "Show the organization's identity provider (its client secret masked)",
    async run(ctx) {
      const provider = await ctx.client.sessions.identityProvider.query();
      return { json: provider, human: provider.data ? renderRecord({ ...provider.data }) : 'no identity provider is set' };
    },
  },
  {
    path: ['identity-provider', 'set'],
    summary: "Set (or replace) the organization's identity provider",
    options: {
      issuer: { type: 'string', value: '<url>', description: "the provider's issuer; discovery is at <issuer>/.well-known/openid-configuration (required)" },
      'client-id': { type: 'string', value: '<id>', description: "this server's client id at the provider (required)" },
      'client-secret': {
        type: 'string',
        value: '<secret>',
        description: 'the client secret (or env SWITCHYARD_OIDC_CLIENT_SECRET, which keeps it out of shell history)',
      },
      'allowed-domains': { type: 'string', value: '<a,b>', description: "a person's verified e-mail must be in one of these domains (required)" },
    },
    async run(ctx) {
      const clientSecret = optionalString(ctx, 'client-secret') ?? ctx.env.SWITCHYARD_OIDC_CLIENT_SECRET;
      if (!clientSecret) throw new UsageError('give the client secret with --client-secret or SWITCHYARD_OIDC_CLIENT_SECRET');
      const domains = optionalList(ctx, 'allowed-domains');
      if (!domains?.length) throw new UsageError('--allowed-domains is required');
      const provider = await ctx.client.sessions.setIdentityProvider.mutate({
        issuer: requireString(ctx, 'issuer'),
        client_id: requireString(ctx, 'client-id'),
        client_secret: clientSecret,
        allowed_email_domains: domains,
      });
      return { json: provider, human: renderRecord({ ...provider.data }) };
    },
  },
  {
    path: ['identity-provider', 'delete'],
    summary: "Delete the organization's identity provider: nobody signs in through it any more",
    async run(ctx) {
      const result = await ctx.client.sessions.deleteIdentityProvider.mutate();
      return { json: result, human: result.deleted ? 'deleted the identity provider' : 'no identity provider was set' };
    },
  },
];
