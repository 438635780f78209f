import {
  CreateDestinationInputSchema,
  DeletedOutputSchema,
  DestinationOutputSchema,
  DestinationSecretOutputSchema,
  DestinationStatusOutputSchema,
  GetDestinationInputSchema,
  ListDestinationsInputSchema,
  ListDestinationsOutputSchema,
  UpdateDestinationInputSchema,
} from '@switchyard/schema';
import { answers, WHY } from '@switchyard/schema';
import { managementProcedure, router } from '../../trpc/init.js';
import { routesOf } from '../../trpc/openapi-meta.js';
import {
  createDestination,
  deleteDestination,
  destinationSecret,
  destinationStatus,
  getDestination,
  listDestinations,
  rotateDestinationSecret,
  updateDestination,
} from './destinations.service.js';
import { IdempotencyField, idempotent } from '../idempotency/idempotency.js';

const route = routesOf('Observability');
const PATH = '/observability/destinations';

/** The 404 of every operation on one destination. */
const NO_DESTINATION = `no live destination with that id in the key's organization (deleted ones, and another organization's, included); ${WHY.namesNothing}`;

const FOREIGN_WORKSPACE = 'workspace_id names a workspace of another organization';
const CONFIG_400 =
  "config missing a required key of its type, holding a key the type does not have, or a value of the wrong type (error.metadata.issues names config.<key>); a url, endpoint, baseUrl or otlpEndpoint that is not an absolute https URL (http only to a loopback host allowed in UPSTREAM_ALLOWED_HOSTS); sampling_rate outside 0.0001..1; regions empty; api_key_hashes empty or naming keys that are not the organization's; a regex filter rule that does not compile as RE2 syntax";

// D17-D21 (platform-api.md part 3): an organization's management keys manage its workspaces' destinations.
export const destinationsRouter = router({
  list: managementProcedure
    .meta({
      ...route('GET', PATH, 'List observability destinations', "Lists a workspace's destinations that are not deleted, oldest first. Management key required."),
      scope: 'destinations:read',
      statuses: answers({
        400: `${WHY.invalidPage}; ${WHY.unknownWorkspace}; ${WHY.unstorable}`,
        403: `${WHY.managementOnly}; or ${FOREIGN_WORKSPACE}`,
      }),
      listed: [400, 401, 500],
    })
    .input(ListDestinationsInputSchema)
    .output(ListDestinationsOutputSchema)
    .query(({ ctx, input }) => listDestinations(ctx.deps, ctx.actor, input)),
  create: managementProcedure
    .meta({
      ...route(
        'POST',
        PATH,
        'Create an observability destination',
        "Validates the type's config and stores it; secret values (and header values) are sealed at rest and answered masked. A webhook destination gets a signing secret (tRPC destinations.secret). At most 5 destinations of one type per workspace. Management key required.",
      ),
      scope: 'destinations:write',
      successStatus: 201,
      statuses: answers({
        400: `an unknown type; a missing or empty name; ${CONFIG_400}; ${WHY.unknownWorkspace}; ${WHY.invalidBody}; ${WHY.idempotencyKey}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: `${WHY.managementOnly}; or ${FOREIGN_WORKSPACE}`,
        409: 'the workspace already has 5 destinations of that type (deleted ones do not count)',
      }),
      listed: [400, 401, 403, 409, 500],
    })
    .input(CreateDestinationInputSchema.extend(IdempotencyField))
    .output(DestinationOutputSchema)
    .mutation(
      idempotent('destinations.create', async ({ ctx, input }) => ({
        data: await createDestination(ctx.deps, ctx.actor, input),
      })),
    ),
  get: managementProcedure
    .meta({
      ...route('GET', `${PATH}/{id}`, 'Get an observability destination', 'Secret config values are masked. Management key required.'),
      scope: 'destinations:read',
      statuses: answers({
        403: WHY.managementOnly,
        404: NO_DESTINATION,
      }),
      listed: [401, 404, 500],
    })
    .input(GetDestinationInputSchema)
    .output(DestinationOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getDestination(ctx.deps, ctx.actor, input) })),
  update: managementProcedure
    .meta({
      ...route(
        'PATCH',
        `${PATH}/{id}`,
        'Update an observability destination',
        'Only the fields given change; config is partial, and a masked value sent back is ignored. type and workspace_id cannot be changed. Management key required.',
      ),
      scope: 'destinations:write',
      statuses: answers({
        400: `type or workspace_id given, or any other field the operation does not take; ${CONFIG_400}; ${WHY.longId}; ${WHY.invalidBody}; ${WHY.unstorable}; ${WHY.bodyTooLarge}`,
        403: WHY.managementOnly,
        404: "no live destination with that id in the key's organization",
      }),
      listed: [400, 401, 403, 404, 409, 500],
    })
    .input(UpdateDestinationInputSchema)
    .output(DestinationOutputSchema)
    .mutation(async ({ ctx, input }) => ({ data: await updateDestination(ctx.deps, ctx.actor, input) })),
  delete: managementProcedure
    .meta({
      ...route(
        'DELETE',
        `${PATH}/{id}`,
        'Delete an observability destination',
        'Soft delete: the destination stops receiving events at once and its secrets are destroyed; it is no longer listed or found. Management key required.',
      ),
      scope: 'destinations:write',
      statuses: answers({
        403: WHY.managementOnly,
        404: `no live destination with that id in the key's organization; ${WHY.namesNothing}`,
      }),
      listed: [401, 404, 500],
    })
    .input(GetDestinationInputSchema)
    .output(DeletedOutputSchema)
    .mutation(({ ctx, input }) => deleteDestination(ctx.deps, ctx.actor, input)),
  // This API's addition: how delivery to a destination is going (decision 0025).
  status: managementProcedure
    .meta({
      ...route(
        'GET',
        `${PATH}/{id}/status`,
        'Get the delivery status of an observability destination',
        "This API's addition: the destination's deliveries by state (pending, failing, delivered, dead), the latest failed attempt's error, the latest delivery's time, and whether delivery turned the destination off. Management key required.",
      ),
      scope: 'destinations:read',
      statuses: answers({
        403: WHY.managementOnly,
        404: NO_DESTINATION,
      }),
      listed: [401, 404, 500],
    })
    .input(GetDestinationInputSchema)
    .output(DestinationStatusOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await destinationStatus(ctx.deps, ctx.actor, input) })),

  // tRPC only (not part of the REST contract): a webhook destination's Standard Webhooks signing secret.
  // A write scope's: whoever holds it can sign the organization's alerts, so no read scope answers it.
  secret: managementProcedure
    .meta({ scope: 'destinations:write' })
    .input(GetDestinationInputSchema)
    .output(DestinationSecretOutputSchema)
    .query(({ ctx, input }) => destinationSecret(ctx.deps, ctx.actor, input)),
  rotateSecret: managementProcedure
    .meta({ scope: 'destinations:write' })
    .input(GetDestinationInputSchema.extend(IdempotencyField))
    .output(DestinationSecretOutputSchema)
    .mutation(idempotent('destinations.rotateSecret', ({ ctx, input }) => rotateDestinationSecret(ctx.deps, ctx.actor, input))),
});
