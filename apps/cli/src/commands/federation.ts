import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { optionalString, pagination, paginationOptions, positional, requireString, UsageError, type Command } from '../command.js';
import { renderRecord } from '../output.js';

// Federation policies: which workload identity tokens POST /oauth/token exchanges, for which key.
export const federationCommands: Command[] = [
  {
    path: ['federation-policies', 'list'],
    summary: "List the organization's federation policies, oldest first",
    options: paginationOptions,
    async run(ctx) {
      const page = await ctx.client.federationPolicies.list.query(pagination(ctx));
      const rows = page.data.map((p) => [p.id, p.issuer, p.audience, p.subject, p.key_hash.slice(0, 12), p.jwks_url ?? '(inline keys)']);
      return { json: page, human: { columns: ['id', 'issuer', 'audience', 'subject', 'key', 'keys from'], rows } };
    },
  },
  {
    path: ['federation-policies', 'create'],
    summary: 'Trust the tokens of one issuer, audience and subject, as one key of the organization',
    options: {
      issuer: { type: 'string', value: '<iss>', description: "the subject token's iss, exactly (required)" },
      audience: { type: 'string', value: '<aud>', description: "the subject token's aud must include it (required)" },
      subject: { type: 'string', value: '<sub>', description: "the subject token's sub, exactly (required)" },
      'key-hash': { type: 'string', value: '<hash>', description: 'the key the access tokens act as (required)' },
      'jwks-url': { type: 'string', value: '<url>', description: "where the issuer's public keys are fetched (https)" },
      'jwks-file': { type: 'string', value: '<path>', description: "a file holding the issuer's public keys as a JWK set" },
      name: { type: 'string', value: '<name>', description: 'a name for the policy' },
    },
    async run(ctx) {
      const jwksUrl = optionalString(ctx, 'jwks-url');
      const jwksFile = optionalString(ctx, 'jwks-file');
      if ((jwksUrl === undefined) === (jwksFile === undefined)) throw new UsageError('give exactly one of --jwks-url and --jwks-file');
      let jwks: unknown;
      if (jwksFile !== undefined) {
        try {
          jwks = JSON.parse(await readFile(path.resolve(ctx.cwd, jwksFile), 'utf8'));
        } catch (error) {
          throw new UsageError(`--jwks-file: ${(error as Error).message}`);
        }
      }
      const name = optionalString(ctx, 'name');
      const policy = await ctx.client.federationPolicies.create.mutate({
        issuer: requireString(ctx, 'issuer'),
        audience: requireString(ctx, 'audience'),
        subject: requireString(ctx, 'subject'),
        key_hash: requireString(ctx, 'key-hash'),
        ...(name ? { name } : {}),
        ...(jwksUrl !== undefined ? { jwks_url: jwksUrl } : { jwks: jwks as never }),
      });
      return { json: policy, human: renderRecord({ ...policy, jwks: policy.jwks ? `${policy.jwks.keys.length} key(s)` : null }) };
    },
  },
  {
    path: ['federation-policies', 'delete'],
    summary: 'Delete a federation policy (tokens it issued live until they expire, at most 15 minutes)',
    args: ['<policy-id>'],
    async run(ctx) {
      const id = positional(ctx, 0, '<policy-id>');
      const result = await ctx.client.federationPolicies.delete.mutate({ id });
      return { json: result, human: `deleted federation policy ${id}` };
    },
  },
];
