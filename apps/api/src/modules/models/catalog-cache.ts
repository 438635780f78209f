// The model catalog held in memory. It is global (the same for every organization), small (hundreds
// to a few thousand models) and written rarely (imports), while every GET /model, GET
// /embeddings/models and recorded generation reads it. A snapshot is reused for at most `ttlMs`
// after it was loaded: writes made through this process invalidate it at once, writes made by
// another process as soon as their notification arrives (cache-events.ts). Should a notification be
// lost, the change shows once `ttlMs` has passed and one reload has finished (requests keep using
// the stale snapshot while it reloads, one reload at a time). Only a cold cache makes a request wait.
import { variantKey } from '@switchyard/rules';
import type { Db, Model as ModelRow, ModelEndpoint as EndpointRow, ModelVariant as VariantRow, Provider as ProviderRow } from '@switchyard/db';
import type { CacheCounter } from '../../lib/metrics.js';
import { shareAnswer } from '../../lib/shared-answers.js';

export interface CatalogSnapshot {
  /** Models by lookup (lower-cased id). */
  models: ReadonlyMap<string, ModelRow>;
  /** Aliases by lookup, to their model. */
  aliases: ReadonlyMap<string, ModelRow>;
  /** Variants by `<model id>:<variant>`. */
  variants: ReadonlyMap<string, VariantRow>;
  /** Models whose output modalities include embeddings, in id order. */
  embeddings: readonly ModelRow[];
  /** Every model, in id order. */
  all: readonly ModelRow[];
  /** Endpoints by model id, in their published order. */
  endpoints: ReadonlyMap<string, readonly EndpointRow[]>;
  /** Providers by slug. */
  providers: ReadonlyMap<string, ProviderRow>;
}

export { variantKey } from '@switchyard/rules';

async function loadSnapshot(db: Db): Promise<CatalogSnapshot> {
  const [models, aliases, variants, endpoints, providers] = await Promise.all([
    db.model.findMany({ orderBy: { id: 'asc' } }),
    db.modelAlias.findMany({ select: { lookup: true, model_id: true } }),
    db.modelVariant.findMany(),
    db.modelEndpoint.findMany({ orderBy: [{ model_id: 'asc' }, { position: 'asc' }] }),
    db.provider.findMany({ orderBy: { slug: 'asc' } }),
  ]);
  const endpointsOf = new Map<string, EndpointRow[]>();
  for (const e of endpoints) {
    const list = endpointsOf.get(e.model_id) ?? [];
    list.push(e);
    endpointsOf.set(e.model_id, list);
  }
  const byId = new Map(models.map((m) => [m.id, m]));
  const aliased = new Map<string, ModelRow>();
  for (const a of aliases) {
    const model = byId.get(a.model_id);
    if (model) aliased.set(a.lookup, model);
  }
  return {
    models: new Map(models.map((m) => [m.lookup, m])),
    aliases: aliased,
    variants: new Map(variants.map((v) => [variantKey(v.model_id, v.variant), v])),
    embeddings: models.filter((m) => m.output_modalities.includes('embeddings')),
    all: models,
    endpoints: endpointsOf,
    providers: new Map(providers.map((p) => [p.slug, p])),
  };
}

/** What a snapshot holds: the snapshot itself, one of its rows, one of its lists. */
type OfSnapshot = CatalogSnapshot | ModelRow | VariantRow | readonly ModelRow[];

const answers = new WeakMap<OfSnapshot, Map<string, object>>();

/**
 * An answer that depends on nothing but the snapshot, or one row or list of it (GET /model's, by
 * the model's or variant's row; the whole GET /embeddings/models list, by the snapshot's list),
 * built and parsed by its schema once per snapshot rather than on every request: a snapshot never
 * changes (a catalog write or the TTL replaces it, its rows and lists with it, and their answers go
 * with them). `key` names the answer among those of `of`; there are at most a few per model or
 * variant of the catalog, whatever callers ask. The answer is shared (shared-answers.ts): a
 * deep-frozen copy, which the REST layer serializes once.
 */
export function snapshotAnswer<T extends object>(of: OfSnapshot, key: string, build: () => T): T {
  let built = answers.get(of);
  if (!built) answers.set(of, (built = new Map()));
  let answer = built.get(key) as T | undefined;
  if (!answer) built.set(key, (answer = shareAnswer(build())));
  return answer;
}

export class CatalogCache {
  #current: { snapshot: CatalogSnapshot; loadedAt: number; generation: number } | undefined;
  #loading: { generation: number; snapshot: Promise<CatalogSnapshot> } | undefined;
  /** Bumped by every invalidation: a load that began before one is not kept. */
  #generation = 0;

  constructor(
    private readonly ttlMs: number,
    /** Told about every lookup (metrics): a hit is a request served from the snapshot in memory. */
    private readonly counter?: CacheCounter,
  ) {}

  async snapshot(db: Db): Promise<CatalogSnapshot> {
    const current = this.#current;
    if (current && current.generation === this.#generation) {
      this.counter?.hit();
      if (performance.now() - current.loadedAt < this.ttlMs) return current.snapshot;
      void this.#load(db).catch(() => undefined); // refresh in the background; this request uses the one it has
      return current.snapshot;
    }
    this.counter?.miss();
    return this.#load(db);
  }

  /** After a catalog write (here or elsewhere): the next read loads a fresh snapshot. */
  invalidate(): void {
    this.#generation++;
    this.#current = undefined;
  }

  #load(db: Db): Promise<CatalogSnapshot> {
    const generation = this.#generation;
    if (this.#loading?.generation === generation) return this.#loading.snapshot;
    const loadedAt = performance.now();
    const snapshot = loadSnapshot(db).then((loaded) => {
      if (generation === this.#generation) this.#current = { snapshot: loaded, loadedAt, generation };
      return loaded;
    });
    const loading = { generation, snapshot };
    this.#loading = loading;
    const done = () => {
      if (this.#loading === loading) this.#loading = undefined;
    };
    snapshot.then(done, done);
    return snapshot;
  }
}
