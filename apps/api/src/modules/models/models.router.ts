import { EVERY_KEY } from '../../access/rules.js';
import {
  CountModelsInputSchema,
  CountModelsOutputSchema,
  GetModelEndpointsOutputSchema,
  ListModelsInputSchema,
  ListModelsOutputSchema,
  ListProvidersOutputSchema,
  CatalogModelSchema,
  CatalogSchema,
  GetModelInputSchema,
  GetModelOutputSchema,
  ImportCatalogOutputSchema,
  ListEmbeddingsModelsInputSchema,
  ListEmbeddingsModelsOutputSchema,
  ModelSchema,
  UpsertAliasInputSchema,
  UpsertVariantInputSchema,
  ImageModelEndpointsSchema,
  ListImageModelsOutputSchema,
  ListUserModelsInputSchema,
  ListUserModelsOutputSchema,
  ListVideoModelsOutputSchema,
  ListZdrEndpointsOutputSchema,
} from '@switchyard/schema';
import { API_PREFIX, type GetModelOutput, type ListEmbeddingsModelsInput, type ListEmbeddingsModelsOutput } from '@switchyard/schema';
import { ANONYMOUS } from '../../access/callers.js';
import { authedProcedure, catalogProcedure, platformProcedure, router } from '../../trpc/init.js';
import type { Context } from '../../trpc/context.js';
import {
  countModels,
  imageModelEndpoints,
  listImageModels,
  listModels,
  listProviders,
  listUserModels,
  listVideoModels,
  listZdrEndpoints,
  modelEndpoints,
} from './catalog.service.js';
import { snapshotAnswer } from './catalog-cache.js';
import { getModel, importCatalog, listEmbeddingsModels, upsertAlias, upsertModel, upsertVariant } from './models.service.js';
import { modelOf, type ModelsPage } from './models-rows.js';
import type { ResolvedModel } from './resolve-model.js';
import { answers, WHY } from '@switchyard/schema';

// The links of catalog answers are made here, from what the services answer: a record's links to
// its endpoints (below the REST surface's path), and a listing's links.next (the URL the client
// reached, with the next page's offset and limit).

/** A Model record's links.details: its endpoints (GET /models/{author}/{slug}/endpoints). */
const detailsOf = (id: string) => `${API_PREFIX}/models/${id}/endpoints`;

/** An image model's endpoints (GET /images/models/{author}/{slug}/endpoints). */
const imageEndpointsOf = (id: string) => `${API_PREFIX}/images/models/${id}/endpoints`;

/** The URL of a listing at `path` as this request reached the REST surface, with `query`. */
function urlOf(ctx: Pick<Context, 'origin'>, path: string, query: URLSearchParams | string): string {
  return `${ctx.origin()}${API_PREFIX}${path}?${query}`;
}

/** The filters of a GET /models request, to repeat in links.next. */
function filtersOf(input: Record<string, unknown>): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(input)) {
    if (value != null && name !== 'offset' && name !== 'limit') params.set(name, String(value));
  }
  return params;
}

/** A page of models as a listing answers it; `next` makes links.next from where the next page starts. */
function pageOf(page: ModelsPage, next: (at: { offset: number; limit: number }) => string) {
  return {
    data: page.rows.map((model) => modelOf({ model, variant: null }, detailsOf)),
    total_count: page.total,
    links: { next: page.next ? next(page.next) : null },
  };
}

/** GET /model's answer, parsed once per catalog snapshot (by the model's or variant's row), not per answer. */
function modelAnswer(resolved: ResolvedModel): GetModelOutput {
  return snapshotAnswer(resolved.variant ?? resolved.model, 'model', () => GetModelOutputSchema.parse({ data: modelOf(resolved, detailsOf) }));
}

/**
 * GET /embeddings/models's answer, parsed here (its procedure's output is trusted): the whole list
 * (neither offset nor limit asked for) once per catalog snapshot, a page on every request (its
 * links.next names the URL the caller used).
 */
function embeddingsAnswer(ctx: Pick<Context, 'origin'>, input: ListEmbeddingsModelsInput, page: ModelsPage): ListEmbeddingsModelsOutput {
  const build = () => ListEmbeddingsModelsOutputSchema.parse(pageOf(page, (at) => urlOf(ctx, '/embeddings/models', `offset=${at.offset}&limit=${at.limit}`)));
  return input.offset == null && input.limit == null ? snapshotAnswer(page.rows, 'embeddings', build) : build();
}

// Catalog reads are public (admin-api.md B1-B4 list no 401; the catalog is the same for everyone).
// Literal paths (/models/count) come before parameterised ones: routes match in router order.
export const modelsRouter = router({
  list: catalogProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/models',
        protect: false,
        tags: ['Models'],
        summary: 'List models',
        description:
          'The catalog with filters and sorting; no key needed. Without offset and limit, the full list. zdr=true keeps the models with a zero-data-retention endpoint. ' +
          'Filters on data this catalog does not keep (category, distillable, region, benchmark indices, tool success rate) answer 400.',
      },
      statuses: answers(
        {
          400: `a filter on data the catalog does not keep (category, distillable, region, benchmarks, tool success rate); zdr other than true; offset, limit or a number out of range; ${WHY.unstorable}`,
        },
        'public',
      ),
      listed: [400, 403, 500],
    })
    .input(ListModelsInputSchema)
    .output(ListModelsOutputSchema)
    .query(async ({ ctx, input }) =>
      pageOf(await listModels(ctx.deps, ANONYMOUS, input), (at) => {
        const params = filtersOf(input);
        params.set('offset', String(at.offset));
        params.set('limit', String(at.limit));
        return urlOf(ctx, '/models', params);
      }),
    ),

  count: catalogProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/models/count',
        protect: false,
        tags: ['Models'],
        summary: 'Count models',
        description: 'How many models output any of output_modalities (default text; `all` for every model). No key needed.',
      },
      statuses: answers(
        {
          400: `output_modalities not a known modality or all; ${WHY.unstorable}`,
        },
        'public',
      ),
      listed: [400, 403, 500],
    })
    .input(CountModelsInputSchema)
    .output(CountModelsOutputSchema)
    .query(async ({ ctx, input }) => ({ data: { count: await countModels(ctx.deps, ANONYMOUS, input) } })),

  endpoints: catalogProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/models/{author}/{slug}/endpoints',
        protect: false,
        tags: ['Models'],
        summary: "List a model's endpoints",
        description:
          "Which providers serve the model, at what price, context length and parameters (a Model record's links.details). " +
          'Variants, aliases and case resolve as for GET /model. No key needed; latency, throughput and uptime are null (no data kept).',
      },
      statuses: answers(
        {
          404: `no model, alias or variant by that name; ${WHY.namesNothing}`,
        },
        'public',
      ),
      listed: [403, 404, 500],
    })
    .input(GetModelInputSchema)
    .output(GetModelEndpointsOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await modelEndpoints(ctx.deps, ANONYMOUS, input) })),

  providers: catalogProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/providers',
        protect: false,
        tags: ['Models'],
        summary: 'List providers',
        description: 'Every provider of the catalog, by name. No key needed.',
      },
      statuses: answers({}, 'public'),
      listed: [500],
    })
    .output(ListProvidersOutputSchema)
    .query(async ({ ctx }) => ({ data: await listProviders(ctx.deps, ANONYMOUS) })),

  get: authedProcedure
    .meta({
      scope: EVERY_KEY,
      openapi: {
        method: 'GET',
        path: '/model/{author}/{slug}',
        protect: true,
        tags: ['Models'],
        summary: 'Get a model',
        description:
          'Full details of one model. The slug may carry a variant suffix after a colon (gpt-4o:free); known aliases resolve; matching is case-insensitive.',
      },
      statuses: answers({
        403: 'a guardrail assigned to the key or its user keeps the model out',
        404: `no model, alias or variant by that name; ${WHY.namesNothing}`,
      }),
      listed: [401, 403, 404, 500],
      // Parsed once per catalog snapshot (modelAnswer), not per answer.
      answer: GetModelOutputSchema,
    })
    .input(GetModelInputSchema)
    .query(async ({ ctx, input }): Promise<GetModelOutput> => modelAnswer(await getModel(ctx.deps, ctx.actor, input))),

  embeddings: authedProcedure
    .meta({
      scope: EVERY_KEY,
      openapi: {
        method: 'GET',
        path: '/embeddings/models',
        protect: true,
        tags: ['Embeddings'],
        summary: 'List embeddings models',
        description: 'Models whose output modality is embeddings, in id order. Without offset and limit, the whole list.',
      },
      statuses: answers({ 400: `offset or limit (1..1000) not an integer in range, given twice, or malformed; ${WHY.unstorable}` }),
      listed: [400, 401, 500],
      // Parsed by embeddingsAnswer (once per catalog snapshot for the whole list), not again here.
      answer: ListEmbeddingsModelsOutputSchema,
    })
    .input(ListEmbeddingsModelsInputSchema)
    .query(async ({ ctx, input }): Promise<ListEmbeddingsModelsOutput> => embeddingsAnswer(ctx, input, await listEmbeddingsModels(ctx.deps, ctx.actor, input))),

  userModels: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/models/user',
        protect: true,
        tags: ['Models'],
        summary: 'List the models the key may use',
        description:
          "The catalog narrowed to what the key could route to: each model is put to the routing policy with the guardrails that apply to the key (allowed and ignored models, provider lists, ZDR enforcement) and its workspace's BYOK credentials. Paged as GET /models, in the same order.",
      },
      statuses: answers({
        400: `offset or limit (1..1000) not an integer in range, given twice, or malformed; ${WHY.unstorable}`,
        404: "the key's workspace no longer exists",
      }),
      listed: [401, 403, 404, 500],
      scope: EVERY_KEY,
    })
    .input(ListUserModelsInputSchema)
    .output(ListUserModelsOutputSchema)
    .query(async ({ ctx, input }) =>
      pageOf(await listUserModels(ctx.deps, ctx.actor, input), (at) => {
        const params = new URLSearchParams({ offset: String(at.offset), limit: String(at.limit) });
        if (input.output_modalities !== undefined) params.set('output_modalities', input.output_modalities);
        return urlOf(ctx, '/models/user', params);
      }),
    ),

  images: catalogProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/images/models',
        protect: false,
        tags: ['Models'],
        summary: 'List image models',
        description:
          'Every model that outputs images, in id order, with the parameters its endpoints take (their union) and whether one streams. No key needed.',
      },
      statuses: answers({}, 'public'),
      listed: [500],
    })
    .output(ListImageModelsOutputSchema)
    .query(async ({ ctx }) => ({ data: (await listImageModels(ctx.deps, ANONYMOUS)).map((m) => ({ ...m, endpoints: imageEndpointsOf(m.id) })) })),

  imageEndpoints: catalogProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/images/models/{author}/{slug}/endpoints',
        protect: false,
        tags: ['Models'],
        summary: "List an image model's endpoints",
        description:
          "Each provider's offer of an image model: the parameters it takes, passthrough options, streaming and prices. Aliases and case resolve as for GET /model. No key needed.",
      },
      statuses: answers({ 404: `no image model by that name (a model that outputs no image, a variant); ${WHY.namesNothing}` }, 'public'),
      listed: [404, 500],
    })
    .input(GetModelInputSchema)
    .output(ImageModelEndpointsSchema)
    .query(({ ctx, input }) => imageModelEndpoints(ctx.deps, ANONYMOUS, input)),

  videos: catalogProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/videos/models',
        protect: false,
        tags: ['Models'],
        summary: 'List video models',
        description:
          'Every model that outputs video, in id order, with the durations, resolutions, sizes and prices its catalog entry states (null where it states none). No key needed.',
      },
      statuses: answers({}, 'public'),
      listed: [400, 500],
    })
    .output(ListVideoModelsOutputSchema)
    .query(async ({ ctx }) => ({ data: await listVideoModels(ctx.deps, ANONYMOUS) })),

  zdrEndpoints: catalogProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/endpoints/zdr',
        protect: false,
        tags: ['Models'],
        summary: 'List zero-data-retention endpoints',
        description:
          'What ZDR enforcement leaves available: every endpoint of the catalog whose provider keeps no prompt or completion, by model id. No key needed.',
      },
      statuses: answers({}, 'public'),
      listed: [403, 500],
    })
    .output(ListZdrEndpointsOutputSchema)
    .query(async ({ ctx }) => ({ data: await listZdrEndpoints(ctx.deps, ANONYMOUS) })),

  // Internal (tRPC only, platform keys): catalog writes. The catalog is shared by every organization.
  upsert: platformProcedure
    .input(CatalogModelSchema)
    .output(ModelSchema)
    .mutation(async ({ ctx, input }) => modelOf({ model: await upsertModel(ctx.deps, ctx.platform, input), variant: null }, detailsOf)),
  upsertAlias: platformProcedure
    .input(UpsertAliasInputSchema)
    .output(UpsertAliasInputSchema)
    .mutation(({ ctx, input }) => upsertAlias(ctx.deps, ctx.platform, input)),
  upsertVariant: platformProcedure
    .input(UpsertVariantInputSchema)
    .output(ModelSchema)
    .mutation(async ({ ctx, input }) => modelOf(await upsertVariant(ctx.deps, ctx.platform, input), detailsOf)),
  import: platformProcedure
    .input(CatalogSchema)
    .output(ImportCatalogOutputSchema)
    .mutation(({ ctx, input }) => importCatalog(ctx.deps, ctx.platform, input)),
});
