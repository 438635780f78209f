// routing.authorize and routing.release (tRPC only, platform keys): the routing service asks before
// each request whether it may go through, and where; a refusal is an answer, not an error.
import { z } from 'zod';
import { DataRegionSchema } from './keys.js';

const ProviderSlugSchema = z.string().min(1).max(100);

export const RoutingProviderPreferencesSchema = z
  .object({
    order: z.array(ProviderSlugSchema).max(100).optional().describe('Providers to try first, in this order'),
    only: z.array(ProviderSlugSchema).max(100).optional().describe('Use only these providers'),
    ignore: z.array(ProviderSlugSchema).max(100).optional().describe('Never use these providers'),
    allow_fallbacks: z.boolean().optional().describe('false: only the providers of `order` (default true)'),
    zdr: z.boolean().optional().describe('true: only endpoints that retain no data'),
  })
  .strict();

export const RoutingAuthorizeInputSchema = z
  .object({
    api_key_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe('SHA-256 of the bearer the router received, as generations.record takes it'),
    model: z.string().min(1).max(300).describe('As asked: author/slug, with a :variant, or an alias'),
    estimated_cost: z.number().min(0).max(1e6).default(0).describe('USD held until the generation is recorded or the reservation released; 0 holds nothing'),
    region: DataRegionSchema.optional().describe('The regional host the request arrived through'),
    provider: RoutingProviderPreferencesSchema.optional(),
    explain: z.boolean().optional().describe('true: the answer says what every rule it evaluated said (`explain`)'),
  })
  .strict();
export type RoutingAuthorizeInput = z.input<typeof RoutingAuthorizeInputSchema>;

export const RoutingEndpointSchema = z.object({
  provider: z.string().describe('Provider slug'),
  tag: z.string().nullable().describe("The catalog endpoint's tag; null for a BYOK-only route to a provider the catalog does not list for the model"),
  zdr: z.boolean().describe('Whether this route retains no data (the endpoint, or the BYOK credential as declared)'),
  byok: z
    .object({
      id: z.string().describe('The BYOK credential'),
      secret: z.string().describe('The decrypted provider key: it leaves the server only here, and only to a platform key'),
    })
    .nullable()
    .describe("The organization's own provider key to use for this route, or null for the platform's shared capacity"),
});
export type RoutingEndpoint = z.infer<typeof RoutingEndpointSchema>;

export const RoutingRemainingSchema = z.object({
  limit: z.string().describe('key, budget:<interval>, guardrail:<id>, credits, free:daily or free:minute'),
  remaining: z.number().describe('What is left in the current window (USD, or requests for free:daily and free:minute), after this reservation'),
  resets_at: z.string().nullable().describe('When the window starts again (ISO 8601); null: never'),
});

const ExplainSchema = z
  .array(z.object({ rule: z.string(), said: z.string() }))
  .optional()
  .describe('With `explain`: every rule evaluated, in order, and what it said');

export const RoutingAllowedSchema = z.object({
  allowed: z.literal(true),
  reservation_id: z.string().nullable().describe('Pass it to generations.record, or to routing.release; null when nothing was held'),
  model: z.string().describe('The canonical model id (with its variant)'),
  endpoints: z.array(RoutingEndpointSchema).describe('Where to send the request, in order'),
  remaining: z.array(RoutingRemainingSchema).describe('Every limit that applied'),
  explain: ExplainSchema,
});

export const RoutingRefusalStatusSchema = z.union([z.literal(401), z.literal(402), z.literal(403), z.literal(404), z.literal(429), z.literal(503)]);

/**
 * The refusal that is a state rather than a rule: what a limit needs to decide (the counter store)
 * cannot be reached, so the decision is refused (503) with `retry_after_s` until it can be.
 */
export const ROUTING_LIMITS_UNAVAILABLE = 'limits_unavailable';

export const RoutingRefusedSchema = z.object({
  allowed: z.literal(false),
  status: RoutingRefusalStatusSchema.describe('The HTTP status to answer the end user with'),
  code: z
    .string()
    .describe('A stable code (docs/routing.md lists them); limits_unavailable (503): the limits cannot be checked now, ask again after retry_after_s'),
  message: z.string().describe('For the end user: names the limit and how to change it'),
  retry_after_s: z.number().int().nullable().describe('Seconds until waiting helps; null when it does not'),
  explain: ExplainSchema,
});

export const RoutingDecisionSchema = z.discriminatedUnion('allowed', [RoutingAllowedSchema, RoutingRefusedSchema]);
export type RoutingDecision = z.infer<typeof RoutingDecisionSchema>;

export const RoutingAuthorizeOutputSchema = z.object({ data: RoutingDecisionSchema });

export const RoutingReleaseInputSchema = z.object({ reservation_id: z.uuid() }).strict();
export const RoutingReleaseOutputSchema = z.object({
  data: z.object({ released: z.boolean().describe('false: nothing was held under that id (settled, released, expired or unknown)') }),
});
