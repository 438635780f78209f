// Reads of the shared catalog (admin-api.md B1-B4, platform-api.md D1-D5): the model listing with
// its filters, the count, a model's endpoints (which providers serve it, at what price and limits),
// the providers, the image and video models, the ZDR endpoints, and the listing as a key could
// route to it. All are answered from the in-memory snapshot (catalog-cache.ts): the catalog is
// small and read often. The listings answer rows and where their next page starts; models.router.ts
// makes the records and their links. The public reads are the same for every caller: their actor is
// ANONYMOUS (no key is read).
import { Prisma, type Model as ModelRow, type ModelEndpoint as EndpointRow, type Provider as ProviderRow } from '@switchyard/db';
import type {
  CatalogImageEndpoint,
  CatalogVideoModel,
  CountModelsInput,
  Endpoint,
  EndpointPricing,
  ImageCapability,
  ImageEndpoint,
  ImageModel,
  ImageModelEndpoints,
  GetModelInput,
  ListModelsInput,
  ListUserModelsInput,
  ModelEndpoints,
  Provider,
  VideoModel,
} from '@switchyard/schema';
import type { Actor, AnonymousCaller } from '../../access/callers.js';
import type { Uses } from '../../trpc/service-deps.js';
import { Invalid, NotFound } from '../../lib/errors.js';
import { evaluatePolicy } from '@switchyard/rules';
import type { CatalogSnapshot } from './catalog-cache.js';
import { architectureOf, modelIdOf, modelNameOf, type ModelsPage } from './models-rows.js';
import { resolveModel } from './resolve-model.js';

const DEFAULT_LIMIT = 500;
const DAY_SECONDS = 86_400;

/** Filters of B1 that need data this catalog does not keep: a 400 rather than an unfiltered answer. */
const UNKEPT_FILTERS = [
  'category',
  'distillable',
  'region',
  'min_intelligence_index',
  'max_intelligence_index',
  'min_coding_index',
  'max_coding_index',
  'min_agentic_index',
  'max_agentic_index',
  'min_tool_success_rate',
  'max_tool_success_rate',
] as const;

const listOf = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v !== '');

/** Models that output any of the listed modalities; default text; `all`: every model. */
function outputFilter(value: string | undefined): (m: ModelRow) => boolean {
  const wanted = value === undefined ? ['text'] : listOf(value);
  if (wanted.includes('all')) return () => true;
  return (m) => m.output_modalities.some((o) => wanted.includes(o.toLowerCase()));
}

/** USD per million tokens of a per-token price string. */
const perMillion = (price: string) => new Prisma.Decimal(price).times(1_000_000).toNumber();

function sorter(sort: string | undefined): ((a: ModelRow, b: ModelRow) => number) | null {
  const price = (m: ModelRow) => new Prisma.Decimal(m.pricing_prompt).plus(m.pricing_completion);
  switch (sort) {
    case 'newest':
      return (a, b) => b.created - a.created;
    case 'pricing-low-to-high':
      return (a, b) => price(a).comparedTo(price(b));
    case 'pricing-high-to-low':
      return (a, b) => price(b).comparedTo(price(a));
    case 'context-high-to-low':
      return (a, b) => b.context_length - a.context_length;
    default:
      return null;
  }
}

function matches(snapshot: CatalogSnapshot, input: ListModelsInput, nowSeconds: number): ModelRow[] {
  for (const name of UNKEPT_FILTERS) {
    if (input[name] != null) throw new Invalid(`${name}: this catalog keeps no such data`, { parameter: name, reason: 'not kept by this catalog' });
  }
  const filters: Array<(m: ModelRow) => boolean> = [outputFilter(input.output_modalities)];
  const q = input.q?.trim().toLowerCase();
  if (q) filters.push((m) => m.name.toLowerCase().includes(q) || m.lookup.includes(q));
  const inputs = listOf(input.input_modalities);
  if (inputs.length) filters.push((m) => inputs.every((i) => m.input_modalities.some((x) => x.toLowerCase() === i)));
  const parameters = listOf(input.supported_parameters);
  if (parameters.length) filters.push((m) => parameters.every((p) => m.supported_parameters.some((x) => x.toLowerCase() === p)));
  if (input.context != null) filters.push((m) => m.context_length >= input.context!);
  if (input.min_price != null) filters.push((m) => perMillion(m.pricing_prompt) >= input.min_price!);
  if (input.max_price != null) filters.push((m) => perMillion(m.pricing_prompt) <= input.max_price!);
  if (input.min_output_price != null) filters.push((m) => perMillion(m.pricing_completion) >= input.min_output_price!);
  if (input.max_output_price != null) filters.push((m) => perMillion(m.pricing_completion) <= input.max_output_price!);
  const arch = input.arch?.trim().toLowerCase();
  if (arch) filters.push((m) => m.tokenizer.toLowerCase() === arch);
  const authors = listOf(input.model_authors);
  if (authors.length) filters.push((m) => authors.includes(m.author.toLowerCase()));
  const providers = listOf(input.providers);
  if (providers.length) {
    const named = (p: ProviderRow | undefined) => p !== undefined && (providers.includes(p.slug) || providers.includes(p.name.toLowerCase()));
    filters.push((m) => (snapshot.endpoints.get(m.id) ?? []).some((e) => named(snapshot.providers.get(e.provider_slug))));
  }
  // zdr=true (the only value the schema takes): models with at least one ZDR endpoint.
  if (input.zdr) filters.push((m) => (snapshot.endpoints.get(m.id) ?? []).some((e) => e.zdr));
  if (input.min_age_days != null) filters.push((m) => nowSeconds - m.created >= input.min_age_days! * DAY_SECONDS);
  if (input.max_age_days != null) filters.push((m) => nowSeconds - m.created <= input.max_age_days! * DAY_SECONDS);
  const found = snapshot.all.filter((m) => filters.every((f) => f(m)));
  const sort = sorter(input.sort);
  // Array.prototype.sort is stable: ties keep id order.
  return sort ? [...found].sort(sort) : found;
}

/**
 * GET /models: the catalog's models that match every filter given, sorted, one page (without
 * offset and limit, all of them). The router keeps the request's filters in links.next.
 */
export async function listModels(deps: Uses<'db' | 'catalog' | 'now'>, _actor: AnonymousCaller, input: ListModelsInput): Promise<ModelsPage> {
  const snapshot = await deps.catalog.snapshot(deps.db);
  const found = matches(snapshot, input, Math.floor(deps.now().getTime() / 1000));
  const paged = input.offset != null || input.limit != null;
  const offset = input.offset ?? 0;
  const limit = paged ? (input.limit ?? DEFAULT_LIMIT) : undefined;
  const rows = found.slice(offset, limit === undefined ? undefined : offset + limit);
  const next = limit !== undefined && offset + rows.length < found.length ? { offset: offset + rows.length, limit } : null;
  return { rows, total: found.length, next };
}

const USER_MODELS_DEFAULT_LIMIT = 500;

/**
 * GET /models/user: the catalog as the key could route to it, in id order (B1's). Each model of the
 * requested output modalities is put to the routing policy (evaluatePolicy of @switchyard/rules), as
 * routing.authorize puts it, with the guardrails that apply to the key and its workspace's BYOK
 * credentials, before any request: no region and no provider preferences. So a model a guardrail
 * keeps out, or whose every endpoint the provider lists or ZDR enforcement drop, is not listed.
 * 404 when the key's workspace is gone.
 */
export async function listUserModels(
  deps: Uses<'db' | 'catalog' | 'guardrails' | 'workspaceRouting'>,
  actor: Actor,
  input: ListUserModelsInput,
): Promise<ModelsPage> {
  const { db } = deps;
  const [snapshot, guardrails, workspace] = await Promise.all([
    deps.catalog.snapshot(db),
    deps.guardrails.applicable(db, actor),
    deps.workspaceRouting.of(db, actor.organizationId, actor.workspaceId),
  ]);
  if (!workspace) throw new NotFound(`workspace ${actor.workspaceId}`);
  const wanted = outputFilter(input.output_modalities);
  const key = { hash: actor.key.hash, userId: actor.key.creator_user_id };
  const routable = snapshot.all.filter((model) => {
    if (!wanted(model)) return false;
    const verdict = evaluatePolicy({
      guardrails,
      model: { model, variant: null },
      route: {
        endpoints: snapshot.endpoints.get(model.id) ?? [],
        credentials: workspace.credentials,
        key,
        region: null,
        preferences: {},
        defaultSort: workspace.defaultProviderSort,
      },
    });
    return verdict.refusal === null;
  });
  const offset = input.offset ?? 0;
  const limit = input.limit ?? USER_MODELS_DEFAULT_LIMIT;
  const rows = routable.slice(offset, offset + limit);
  const nextOffset = offset + rows.length;
  return { rows, total: routable.length, next: nextOffset < routable.length ? { offset: nextOffset, limit } : null };
}

/** GET /models/count: how many models output any of `output_modalities` (default text). */
export async function countModels(deps: Uses<'db' | 'catalog'>, _actor: AnonymousCaller, input: CountModelsInput): Promise<number> {
  const snapshot = await deps.catalog.snapshot(deps.db);
  return snapshot.all.filter(outputFilter(input.output_modalities)).length;
}

function endpointOf(model: ModelRow, provider: ProviderRow | undefined, e: EndpointRow, variantPricing: { prompt?: string; completion?: string }): Endpoint {
  const pricing = { ...(e.pricing as EndpointPricing), ...variantPricing };
  return {
    name: e.name,
    model_id: model.canonical_slug,
    model_name: model.name,
    provider_name: provider?.name ?? e.provider_slug,
    tag: e.tag,
    context_length: e.context_length,
    max_completion_tokens: e.max_completion_tokens,
    max_prompt_tokens: e.max_prompt_tokens,
    pricing,
    quantization: e.quantization,
    supported_parameters: e.supported_parameters,
    supports_implicit_caching: e.supports_implicit_caching,
    supports_tool_choice: e.supports_tool_choice as Endpoint['supports_tool_choice'],
    // This server keeps no latency, throughput or uptime figures: null, as the spec has it without data.
    latency_last_30m: null,
    throughput_last_30m: null,
    uptime_last_5m: null,
    uptime_last_30m: null,
    uptime_last_1d: null,
    status: e.status,
  };
}

/**
 * GET /models/{author}/{slug}/endpoints, the target of a Model record's links.details: the model
 * (or variant; aliases and case resolve as for GET /model) and every provider's offer of it. A
 * variant's own prices replace the endpoints' prompt and completion prices.
 */
export async function modelEndpoints(deps: Uses<'db' | 'catalog'>, _actor: AnonymousCaller, input: GetModelInput): Promise<ModelEndpoints> {
  const snapshot = await deps.catalog.snapshot(deps.db);
  const resolved = resolveModel(snapshot, `${input.author}/${input.slug}`);
  if (!resolved) throw new NotFound(`model ${input.author}/${input.slug}`);
  const { model, variant } = resolved;
  const variantPricing = {
    ...(variant?.pricing_prompt ? { prompt: variant.pricing_prompt } : {}),
    ...(variant?.pricing_completion ? { completion: variant.pricing_completion } : {}),
  };
  return {
    id: modelIdOf(resolved),
    name: modelNameOf(resolved),
    created: model.created,
    description: model.description,
    architecture: architectureOf(model),
    endpoints: (snapshot.endpoints.get(model.id) ?? []).map((e) => endpointOf(model, snapshot.providers.get(e.provider_slug), e, variantPricing)),
  };
}

/** GET /providers: every provider of the catalog, by name. */
export async function listProviders(deps: Uses<'db' | 'catalog'>, _actor: AnonymousCaller): Promise<Provider[]> {
  const snapshot = await deps.catalog.snapshot(deps.db);
  return [...snapshot.providers.values()]
    .sort((a, b) => a.name.localeCompare(b.name, 'en') || a.slug.localeCompare(b.slug))
    .map((p) => ({
      name: p.name,
      slug: p.slug,
      privacy_policy_url: p.privacy_policy_url,
      terms_of_service_url: p.terms_of_service_url,
      status_page_url: p.status_page_url,
      headquarters: p.headquarters,
      datacenters: Array.isArray(p.datacenters) ? p.datacenters.filter((c): c is string => typeof c === 'string') : null,
    }));
}

// ---- Image and video models, ZDR endpoints (platform-api.md D1-D3, D5) --------------------------

const isImageModel = (m: ModelRow) => m.output_modalities.includes('image');
const isVideoModel = (m: ModelRow) => m.output_modalities.includes('video');

/** An endpoint's image description as imported (models.import validates it), or none: nothing declared. */
function imageOf(e: EndpointRow): CatalogImageEndpoint {
  const image = e.image as CatalogImageEndpoint | null;
  return {
    supported_parameters: image?.supported_parameters ?? {},
    allowed_passthrough_parameters: image?.allowed_passthrough_parameters ?? [],
    supports_streaming: image?.supports_streaming ?? false,
    pricing: image?.pricing ?? [],
  };
}

/**
 * Two endpoints' statements about one parameter, as one: enum values united (first seen first), the
 * widest range; where the kinds differ, the first endpoint's stands (D2 has each endpoint's truth).
 */
function unite(a: ImageCapability, b: ImageCapability): ImageCapability {
  if (a.type === 'enum' && b.type === 'enum') return { type: 'enum', values: [...new Set([...a.values, ...b.values])] };
  if (a.type === 'range' && b.type === 'range') return { type: 'range', min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) };
  return a;
}

/** An image model as GET /images/models lists it, but for its `endpoints` link (the router's). */
export type ImageModelData = Omit<ImageModel, 'endpoints'>;

function imageModelOf(m: ModelRow, endpoints: readonly EndpointRow[]): ImageModelData {
  const parameters: Record<string, ImageCapability> = {};
  let streams = false;
  for (const e of endpoints) {
    const image = imageOf(e);
    streams ||= image.supports_streaming;
    for (const [name, capability] of Object.entries(image.supported_parameters)) {
      const known = parameters[name];
      parameters[name] = known ? unite(known, capability) : capability;
    }
  }
  return {
    id: m.id,
    name: m.name,
    description: m.description,
    created: m.created,
    architecture: { input_modalities: m.input_modalities, output_modalities: m.output_modalities },
    supported_parameters: parameters,
    supports_streaming: streams,
  };
}

/** GET /images/models: every model that outputs images, in id order (the router adds each one's endpoints link). */
export async function listImageModels(deps: Uses<'db' | 'catalog'>, _actor: AnonymousCaller): Promise<ImageModelData[]> {
  const snapshot = await deps.catalog.snapshot(deps.db);
  return snapshot.all.filter(isImageModel).map((m) => imageModelOf(m, snapshot.endpoints.get(m.id) ?? []));
}

/** GET /images/models/{author}/{slug}/endpoints: each provider's offer of an image model (aliases and case resolve). */
export async function imageModelEndpoints(deps: Uses<'db' | 'catalog'>, _actor: AnonymousCaller, input: GetModelInput): Promise<ImageModelEndpoints> {
  const snapshot = await deps.catalog.snapshot(deps.db);
  const id = `${input.author}/${input.slug}`;
  const resolved = resolveModel(snapshot, id);
  // A variant names a price, not an image model of its own.
  if (!resolved || resolved.variant || !isImageModel(resolved.model)) throw new NotFound(`image model ${id}`);
  const { model } = resolved;
  return {
    id,
    endpoints: (snapshot.endpoints.get(model.id) ?? []).map((e): ImageEndpoint => {
      const image = imageOf(e);
      return {
        provider_name: snapshot.providers.get(e.provider_slug)?.name ?? e.provider_slug,
        provider_slug: e.provider_slug,
        provider_tag: e.tag,
        supported_parameters: image.supported_parameters,
        allowed_passthrough_parameters: image.allowed_passthrough_parameters,
        supports_streaming: image.supports_streaming,
        pricing: image.pricing,
      };
    }),
  };
}

/** GET /videos/models: every model that outputs video, in id order, with the parameters its catalog entry gives (null: not stated). */
export async function listVideoModels(deps: Uses<'db' | 'catalog'>, _actor: AnonymousCaller): Promise<VideoModel[]> {
  const snapshot = await deps.catalog.snapshot(deps.db);
  return snapshot.all.filter(isVideoModel).map((m) => {
    const video = m.video as CatalogVideoModel | null;
    return {
      id: m.id,
      canonical_slug: m.canonical_slug,
      name: m.name,
      created: m.created,
      description: m.description,
      allowed_passthrough_parameters: video?.allowed_passthrough_parameters ?? [],
      supported_durations: video?.supported_durations ?? null,
      supported_resolutions: video?.supported_resolutions ?? null,
      supported_aspect_ratios: video?.supported_aspect_ratios ?? null,
      supported_sizes: video?.supported_sizes ?? null,
      supported_frame_images: video?.supported_frame_images ?? null,
      generate_audio: video?.generate_audio ?? null,
      seed: video?.seed ?? null,
      creativity: video?.creativity ?? null,
      upscale_factor: video?.upscale_factor ?? null,
      hugging_face_id: video?.hugging_face_id ?? null,
      pricing_skus: video?.pricing_skus ?? null,
    };
  });
}

/** GET /endpoints/zdr: every endpoint of the catalog with the ZDR flag, by model id, then in its published order. */
export async function listZdrEndpoints(deps: Uses<'db' | 'catalog'>, _actor: AnonymousCaller): Promise<Endpoint[]> {
  const snapshot = await deps.catalog.snapshot(deps.db);
  return snapshot.all.flatMap((model) =>
    (snapshot.endpoints.get(model.id) ?? []).filter((e) => e.zdr).map((e) => endpointOf(model, snapshot.providers.get(e.provider_slug), e, {})),
  );
}
