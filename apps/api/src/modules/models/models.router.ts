import {
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
} from '@switchyard/schema';
import { API_PREFIX } from '../../http/paths.js';
import { authedProcedure, platformProcedure, router } from '../../trpc/init.js';
import {
  getModel,
  importCatalog,
  listEmbeddingsModels,
  upsertAlias,
  upsertModel,
  upsertVariant,
} from './models.service.js';
import { answers, WHY } from '../../http/statuses.js';

export const modelsRouter = router({
  get: authedProcedure
    .meta({
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
    })
    .input(GetModelInputSchema)
    .output(GetModelOutputSchema)
    .query(async ({ ctx, input }) => ({ data: await getModel(ctx.db, ctx.catalog, ctx.actor, input) })),

  embeddings: authedProcedure
    .meta({
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
    })
    .input(ListEmbeddingsModelsInputSchema)
    .output(ListEmbeddingsModelsOutputSchema)
    .query(({ ctx, input }) => listEmbeddingsModels(ctx.db, ctx.catalog, input, `${ctx.origin()}${API_PREFIX}`)),

  // Internal (tRPC only, platform keys): catalog writes. The catalog is shared by every organization.
  upsert: platformProcedure
    .input(CatalogModelSchema)
    .output(ModelSchema)
    .mutation(({ ctx, input }) => upsertModel(ctx.db, ctx.catalog, input)),
  upsertAlias: platformProcedure
    .input(UpsertAliasInputSchema)
    .output(UpsertAliasInputSchema)
    .mutation(({ ctx, input }) => upsertAlias(ctx.db, ctx.catalog, input)),
  upsertVariant: platformProcedure
    .input(UpsertVariantInputSchema)
    .output(ModelSchema)
    .mutation(({ ctx, input }) => upsertVariant(ctx.db, ctx.catalog, input)),
  import: platformProcedure
    .input(CatalogSchema)
    .output(ImportCatalogOutputSchema)
    .mutation(({ ctx, input }) => importCatalog(ctx.db, ctx.catalog, input)),
});
