import { RoutingAuthorizeInputSchema, RoutingAuthorizeOutputSchema, RoutingReleaseInputSchema, RoutingReleaseOutputSchema } from '@switchyard/schema';
import { platformProcedure, router } from '../../trpc/init.js';
import { authorize, release } from './routing.service.js';

// Internal (tRPC only, platform keys): the routing service asks before each request, and lets go
// of what it held when a request never reached a provider. Recording settles a reservation.
export const routingRouter = router({
  authorize: platformProcedure
    .input(RoutingAuthorizeInputSchema)
    .output(RoutingAuthorizeOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await authorize(ctx.deps, ctx.platform, input) })),

  release: platformProcedure
    .input(RoutingReleaseInputSchema)
    .output(RoutingReleaseOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await release(ctx.deps, ctx.platform, input) })),
});
