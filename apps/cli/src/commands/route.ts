// The platform's check of a routing decision: what routing.authorize would answer the routing
// service for a key and a model, with every rule's word under --explain.
import { optionalNumber, optionalString, PLATFORM_KEY, requireString, UsageError, type Command } from '../command.js';

const REGIONS = ['global', 'europe', 'us'] as const;

export const routeCommands: Command[] = [
  {
    path: ['route', 'check'],
    summary: 'Print the routing decision for a key and a model (what routing.authorize answers); with --cost, what it holds is released at once',
    credential: PLATFORM_KEY,
    options: {
      'key-hash': { type: 'string', value: '<sha256>', description: "the key's hash (required)" },
      model: { type: 'string', value: '<author/slug[:variant]>', description: 'the model as asked (required)' },
      cost: { type: 'string', value: '<usd>', description: 'an estimated cost to hold against the limits (then released)' },
      region: { type: 'string', value: '<global|europe|us>', description: 'the regional host the request would arrive through' },
      explain: { type: 'boolean', description: 'print every rule evaluated and what it said' },
    },
    async run(ctx) {
      const region = optionalString(ctx, 'region');
      if (region !== undefined && !(REGIONS as readonly string[]).includes(region)) throw new UsageError(`--region must be one of ${REGIONS.join(', ')}`);
      const { data } = await ctx.client.routing.authorize.mutate({
        api_key_hash: requireString(ctx, 'key-hash'),
        model: requireString(ctx, 'model'),
        estimated_cost: optionalNumber(ctx, 'cost') ?? 0,
        region: region as (typeof REGIONS)[number] | undefined,
        explain: ctx.options.explain === true,
      });
      // A check sends no request: what it held goes back at once.
      if (data.allowed && data.reservation_id) await ctx.client.routing.release.mutate({ reservation_id: data.reservation_id });
      const lines: string[] = [];
      if (data.allowed) {
        lines.push(`allowed: ${data.model}`);
        for (const [i, e] of data.endpoints.entries())
          lines.push(`  ${i + 1}. ${e.provider} ${e.tag ?? ''}${e.zdr ? ' zdr' : ''}${e.byok ? ` byok ${e.byok.id}` : ''}`);
        for (const r of data.remaining) lines.push(`  ${r.limit}: ${r.remaining} left${r.resets_at ? ` until ${r.resets_at}` : ''}`);
      } else {
        lines.push(`refused: ${data.status} ${data.code}${data.retry_after_s === null ? '' : ` (retry after ${data.retry_after_s} s)`}`, `  ${data.message}`);
      }
      if (data.explain) for (const step of data.explain) lines.push(`  [${step.rule}] ${step.said}`);
      // The decrypted BYOK secrets stay out of what is printed for people; --json prints the answer whole.
      return { json: data, human: lines.join('\n') };
    },
  },
];
