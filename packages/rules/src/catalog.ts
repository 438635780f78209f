// A model name as users type it, resolved in a catalog: the server's catalog snapshot (rows from
// the database) and a decider's (rows from its snapshot) resolve alike, through this one function.

/** A catalog as resolution reads it: models and aliases by lookup (lower-cased), variants by `<model id>:<variant>`. */
export interface ResolvableCatalog<M extends { id: string }, V> {
  models: ReadonlyMap<string, M>;
  aliases: ReadonlyMap<string, M>;
  variants: ReadonlyMap<string, V>;
}

/** The key of a variant in a catalog's `variants`. */
export const variantKey = (modelId: string, variant: string) => `${modelId}:${variant}`;

/**
 * Resolves "<author>/<slug>[:<variant>]" as users type it: case-insensitively, through aliases, and
 * with the variant suffix after the first colon. null when no such model or variant exists.
 */
export function resolveModelIn<M extends { id: string }, V>(catalog: ResolvableCatalog<M, V>, name: string): { model: M; variant: V | null } | null {
  const lookup = name.toLowerCase();
  const slash = lookup.indexOf('/');
  const colon = lookup.indexOf(':', slash + 1);
  const base = colon < 0 ? lookup : lookup.slice(0, colon);
  const model = catalog.models.get(base) ?? catalog.aliases.get(base);
  if (!model) return null;
  if (colon < 0) return { model, variant: null };
  const variant = catalog.variants.get(variantKey(model.id, lookup.slice(colon + 1)));
  return variant ? { model, variant } : null;
}
