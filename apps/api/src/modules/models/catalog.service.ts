// Reads of the shared catalog (admin-api.md B1-B4): the model listing with its filters, the count,
// a model's endpoints (which providers serve it, at what price and limits), and the providers. All
// are answered from the in-memory snapshot (catalog-cache.ts): the catalog is small and read often.
import { Prisma, type Model as ModelRow, type ModelEndpoint as EndpointRow, type Provider as ProviderRow } from '@switchyard/db';
import type { CountModelsInput, Endpoint, EndpointPricing, ListModelsInput, ListModelsOutput, ModelEndpoints, Provider } from '@switchyard/schema';
import { Invalid, NotFound } from '../../errors.js';
import type { CatalogSnapshot } from './catalog-cache.js';
import { modelOf, resolveModel, type ApiRoot } from './models.service.js';

const DEFAULT_LIMIT = 500;
const DAY_SECONDS = 86_400;

/** Filters of B1 that need data this catalog does not keep: a 400 rather than an unfiltered answer. */
const UNKEPT_FILTERS = [
  'category',
  'distillable',
  'zdr',
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
  if (input.min_age_days != null) filters.push((m) => nowSeconds - m.created >= input.min_age_days! * DAY_SECONDS);
  if (input.max_age_days != null) filters.push((m) => nowSeconds - m.created <= input.max_age_days! * DAY_SECONDS);
  const found = snapshot.all.filter((m) => filters.every((f) => f(m)));
  const sort = sorter(input.sort);
  // Array.prototype.sort is stable: ties keep id order.
  return sort ? [...found].sort(sort) : found;
}

/**
 * GET /models: the catalog's models that match every filter given, sorted, one page. `query`: the
 * request's own filters, kept in links.next.
 */
export function listModels(snapshot: CatalogSnapshot, input: ListModelsInput, now: Date, api: ApiRoot, query: URLSearchParams): ListModelsOutput {
  const found = matches(snapshot, input, Math.floor(now.getTime() / 1000));
  const paged = input.offset != null || input.limit != null;
  const offset = input.offset ?? 0;
  const limit = paged ? (input.limit ?? DEFAULT_LIMIT) : undefined;
  const rows = found.slice(offset, limit === undefined ? undefined : offset + limit);
  let next: string | null = null;
  if (limit !== undefined && offset + rows.length < found.length) {
    const params = new URLSearchParams(query);
    params.set('offset', String(offset + rows.length));
    params.set('limit', String(limit));
    next = `${api.url}/models?${params}`;
  }
  return { data: rows.map((model) => modelOf({ model, variant: null }, api.path)), total_count: found.length, links: { next } };
}

/** GET /models/count: how many models output any of `output_modalities` (default text). */
export function countModels(snapshot: CatalogSnapshot, input: CountModelsInput): number {
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
export function modelEndpoints(snapshot: CatalogSnapshot, author: string, slug: string, apiPath: string): ModelEndpoints {
  const resolved = resolveModel(snapshot, `${author}/${slug}`);
  if (!resolved) throw new NotFound(`model ${author}/${slug}`);
  const record = modelOf(resolved, apiPath);
  const { model, variant } = resolved;
  const variantPricing = {
    ...(variant?.pricing_prompt ? { prompt: variant.pricing_prompt } : {}),
    ...(variant?.pricing_completion ? { completion: variant.pricing_completion } : {}),
  };
  return {
    id: record.id,
    name: record.name,
    created: record.created,
    description: record.description,
    architecture: record.architecture,
    endpoints: (snapshot.endpoints.get(model.id) ?? []).map((e) => endpointOf(model, snapshot.providers.get(e.provider_slug), e, variantPricing)),
  };
}

/** GET /providers: every provider of the catalog, by name. */
export function listProviders(snapshot: CatalogSnapshot): Provider[] {
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
