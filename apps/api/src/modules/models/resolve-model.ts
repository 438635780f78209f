// A model name as users type it, resolved in a catalog snapshot, and whether the model it names
// costs nothing: what GET /model, the catalog reads, routing.authorize, generation recording and
// GET /activity ask of the catalog.
import { Prisma, type Model as ModelRow, type ModelVariant as VariantRow } from '@switchyard/db';
import { resolveModelIn } from '@switchyard/rules';
import type { CatalogSnapshot } from './catalog-cache.js';

export interface ResolvedModel {
  model: ModelRow;
  variant: VariantRow | null;
}

/**
 * Resolves "<author>/<slug>[:<variant>]" as users type it: case-insensitively, through aliases, and
 * with the variant suffix after the first colon (@switchyard/rules' resolution, which a decider
 * runs on its own snapshot). null when no such model or variant exists.
 */
export function resolveModel(catalog: CatalogSnapshot, name: string): ResolvedModel | null {
  return resolveModelIn(catalog, name);
}

/**
 * isFreeModel's answers, by the catalog row they were computed from (the variant's, when there is
 * one: a variant row belongs to one model). The catalog cache's rows are replaced, never changed,
 * so an answer holds as long as its row lives. Computing it made four Decimals per recording.
 */
const freeByRow = new WeakMap<ModelRow | VariantRow, boolean>();

/** Whether a resolved model costs nothing: a `:free` variant, or zero prompt, completion, image and request prices. */
export function isFreeModel({ model, variant }: ResolvedModel): boolean {
  const row = variant ?? model;
  let free = freeByRow.get(row);
  if (free === undefined) {
    free =
      variant?.variant === 'free' ||
      [
        variant?.pricing_prompt ?? model.pricing_prompt,
        variant?.pricing_completion ?? model.pricing_completion,
        variant?.pricing_image ?? model.pricing_image,
        variant?.pricing_request ?? model.pricing_request,
      ].every((p) => new Prisma.Decimal(p).isZero());
    freeByRow.set(row, free);
  }
  return free;
}
