import { tracked } from '@trpc/server';
import { z } from 'zod';
import { Invalid } from '../../lib/errors.js';
import { platformProcedure, router } from '../../trpc/init.js';
import { SERVED_VERSIONS, deciderSpend, snapshotCatalog, snapshotKeys, snapshotOrganizations } from './decider.service.js';

const version = z.number().int().min(1);
const hash = z.string().min(1).max(200);
const page = { cursor: z.string().max(200).nullish(), limit: z.number().int().min(1).max(5000).optional() };

const SnapshotInput = z.discriminatedUnion('part', [
  z.object({ part: z.literal('catalog'), version }),
  z.object({ part: z.literal('organizations'), version, ...page, ids: z.array(z.string().min(1).max(200)).max(1000).optional() }),
  z.object({ part: z.literal('keys'), version, ...page, hashes: z.array(hash).max(1000).optional() }),
]);

const LimitCheckSchema = z.object({
  name: z.string().max(200),
  scope: z.enum(['keys', 'makers', 'workspace', 'guardrail', 'credits']),
  keys: z.array(z.string().max(200)).max(100).optional(),
  workspace_id: z.string().max(200).optional(),
  guardrail_id: z.string().max(200).optional(),
  is_default: z.boolean().optional(),
  since: z.string().max(20).nullable(),
  byok: z.boolean(),
  limit: z.string().max(60),
  interval: z.enum(['daily', 'weekly', 'monthly', 'lifetime']),
});

/**
 * An event of the change stream, spelled here (not the feed's named type) so that the client's
 * copy of the router type names nothing of the server's.
 */
type StreamEvent =
  | { type: 'change'; topic: string; at: string }
  | { type: 'reload'; reason: 'missed' | 'unknown_position' | 'listener_reconnected'; at: string }
  | { type: 'heartbeat'; at: string; position: string };

// Internal (tRPC only, platform keys): what a decider in the routing service's own process reads
// (docs/decider.md). Each snapshot part answers the change stream's position taken before it was
// read, so that a decider that subscribes from there misses no change made meanwhile.
export const deciderRouter = router({
  snapshot: platformProcedure.input(SnapshotInput).query(async ({ ctx, input }) => {
    const position = ctx.deps.deciderChanges.position;
    if (input.part === 'catalog') return { data: { part: input.part, position, ...(await snapshotCatalog(ctx.deps, ctx.platform, input)) } };
    if (input.part === 'organizations') return { data: { part: input.part, position, ...(await snapshotOrganizations(ctx.deps, ctx.platform, input)) } };
    return { data: { part: input.part, position, ...(await snapshotKeys(ctx.deps, ctx.platform, input)) } };
  }),

  spend: platformProcedure
    .input(z.object({ version, organization_id: z.string().min(1).max(200), checks: z.array(LimitCheckSchema).max(50) }))
    .query(async ({ ctx, input }) => ({ data: await deciderSpend(ctx.deps, ctx.platform, input) })),

  // Server-sent events (tRPC's httpSubscriptionLink): each change with its id (a reconnecting
  // decider sends the last one back, and is given what it missed or told to reload), and a
  // heartbeat without one whenever nothing changed for DECIDER_HEARTBEAT_MS, so that a decider can
  // tell a quiet stream from a dead one. The server's close ends every stream.
  changes: platformProcedure.input(z.object({ version, lastEventId: z.string().max(200).nullish() })).subscription(async function* ({ ctx, input, signal }) {
    const { deciderChanges, deciderHeartbeatMs } = ctx.deps;
    if (!SERVED_VERSIONS.includes(input.version)) throw new Invalid(`Decider protocol version ${input.version} is not served here.`);
    for await (const { id, change } of deciderChanges.subscribe(input.lastEventId ?? null, deciderHeartbeatMs, signal)) {
      const event: StreamEvent = change;
      yield id === null ? event : tracked(id, event);
    }
  }),
});
