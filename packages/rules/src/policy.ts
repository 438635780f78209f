// The one policy: whether a key may use a model, and through which endpoints, by the guardrails that
// apply to it, its workspace's BYOK credentials and the request's own preferences (rules 7-9).
// GET /model asks it about the model alone (no endpoints); routing.authorize about the whole route;
// GET /models/user about each model's route before any request (no region, no preferences). It is a
// pure function of what it is given: the callers read the rows (the server from its caches).
import { refusal, type Refusal } from './refusals.js';

export type Region = 'global' | 'europe' | 'us';

export interface ProviderPreferences {
  order?: string[];
  only?: string[];
  ignore?: string[];
  allow_fallbacks?: boolean;
  zdr?: boolean;
}

/** What the policy reads of a guardrail that applies (its JSON lists as stored: a list, or anything else for none). */
export interface PolicyGuardrail {
  id: string;
  allowed_models: unknown;
  ignored_models: unknown;
  allowed_providers: unknown;
  ignored_providers: unknown;
  allowed_data_regions: unknown;
  enforce_zdr: boolean;
  enforce_zdr_anthropic: boolean | null;
  enforce_zdr_openai: boolean | null;
  enforce_zdr_google: boolean | null;
  enforce_zdr_xai: boolean | null;
  enforce_zdr_other: boolean | null;
}

/** A resolved model: the catalog's model and, when one was named, its variant (`lookup`: the lower-cased name lists match). */
export interface PolicyModel {
  model: { id: string; lookup: string };
  variant: { id: string; lookup: string } | null;
}

/** A catalog endpoint of the model. */
export interface PolicyEndpoint {
  provider_slug: string;
  tag: string | null;
  zdr: boolean;
  /** The endpoint's prices ({ prompt, completion } in USD per token), for the "price" sort. */
  pricing: unknown;
}

/** A BYOK credential as stored (a byok_credentials row fits); `secret_ciphertext` is only tested for presence. */
export interface PolicyCredential {
  id: string;
  provider: string;
  disabled: boolean;
  deleted_at: Date | null;
  secret_ciphertext: string | null;
  allowed_models: unknown;
  allowed_user_ids: unknown;
  allowed_api_key_hashes: unknown;
  is_fallback: boolean;
  is_byok_only: boolean;
  is_required: boolean;
  sort_order: number;
  declared_zdr: boolean | null;
}

/** A route before its secret is opened: a catalog endpoint, through shared capacity or a credential. */
export interface Route<C extends PolicyCredential = PolicyCredential> {
  provider: string;
  tag: string | null;
  zdr: boolean;
  credential: C | null;
}

export interface PolicyInput<C extends PolicyCredential = PolicyCredential> {
  guardrails: readonly PolicyGuardrail[];
  model: PolicyModel;
  /** Without endpoints, only the model's own rules are decided (GET /model). */
  route?: {
    endpoints: readonly PolicyEndpoint[];
    credentials: readonly C[];
    key: { hash: string; userId: string };
    /** null: no request yet, so no region to check (GET /models/user asks what the key could route to). */
    region: Region | null;
    preferences: ProviderPreferences;
    /** The workspace's default_provider_sort: "price" orders by price; anything else keeps the catalog's order. */
    defaultSort: string | null;
  };
}

export type PolicyVerdict<C extends PolicyCredential = PolicyCredential> = { refusal: Refusal } | { refusal: null; routes: Route<C>[] };

const lowerList = (value: unknown): string[] | null =>
  Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string').map((x) => x.toLowerCase()) : null;

/** The names a list entry may use for the model: the canonical model (all its variants), or the variant. */
function modelNames({ model, variant }: PolicyModel): string[] {
  return [model.lookup, ...(variant ? [variant.lookup] : [])];
}

/** The ZDR vendor of a model (its author): the enforce_zdr_<vendor> flag that governs it. */
function zdrVendor(model: PolicyModel['model']): 'anthropic' | 'openai' | 'google' | 'xai' | 'other' {
  const author = model.id.slice(0, model.id.indexOf('/')).toLowerCase();
  if (author === 'anthropic' || author === 'openai' || author === 'google') return author;
  if (author === 'x-ai' || author === 'xai') return 'xai';
  return 'other';
}

/** Whether a guardrail demands zero data retention for this vendor (the deprecated enforce_zdr fills unset flags). */
function enforcesZdr(g: PolicyGuardrail, vendor: ReturnType<typeof zdrVendor>): boolean {
  const flag = {
    anthropic: g.enforce_zdr_anthropic,
    openai: g.enforce_zdr_openai,
    google: g.enforce_zdr_google,
    xai: g.enforce_zdr_xai,
    other: g.enforce_zdr_other,
  }[vendor];
  return flag ?? g.enforce_zdr;
}

/** Whether a credential may serve this key and model (admin-api.md A24). */
function credentialApplies(c: PolicyCredential, model: PolicyModel, key: { hash: string; userId: string }): boolean {
  if (c.disabled || c.deleted_at || !c.secret_ciphertext) return false;
  const models = lowerList(c.allowed_models);
  if (models && !modelNames(model).some((n) => models.includes(n))) return false;
  const users = Array.isArray(c.allowed_user_ids) ? c.allowed_user_ids : null;
  if (users && !users.includes(key.userId)) return false;
  const hashes = Array.isArray(c.allowed_api_key_hashes) ? c.allowed_api_key_hashes : null;
  if (hashes && !hashes.includes(key.hash)) return false;
  return true;
}

const priceOf = (e: PolicyEndpoint): number => {
  const p = e.pricing as { prompt?: unknown; completion?: unknown } | null;
  return Number(p?.prompt ?? 0) + Number(p?.completion ?? 0);
};

/**
 * The policy. Model rules first (every applicable guardrail's allowed and ignored models), then,
 * for a route: the regions, then each endpoint's routes (BYOK credentials first, in sort_order,
 * fallbacks after them, then the shared capacity unless a credential is BYOK-only or required),
 * filtered by every guardrail's provider lists and ZDR flags and by the request's preferences,
 * and ordered by `provider.order`, else the workspace's default sort.
 */
export function evaluatePolicy<C extends PolicyCredential>(input: PolicyInput<C>): PolicyVerdict<C> {
  const { guardrails, model } = input;
  const names = modelNames(model);
  for (const g of guardrails) {
    const allowed = lowerList(g.allowed_models);
    const ignored = lowerList(g.ignored_models);
    if (ignored?.some((n) => names.includes(n)) || (allowed && !allowed.some((n) => names.includes(n)))) {
      return { refusal: refusal('model_not_allowed', { model: model.model.id, guardrail: g.id }) };
    }
  }
  const route = input.route;
  if (!route) return { refusal: null, routes: [] };

  for (const g of guardrails) {
    const regions = lowerList(g.allowed_data_regions);
    if (regions && route.region !== null && !regions.includes(route.region)) {
      return { refusal: refusal('region_not_allowed', { region: route.region, guardrail: g.id, allowed: regions.join(', ') }) };
    }
  }

  const vendor = zdrVendor(model.model);
  const zdrRequired = route.preferences.zdr === true || guardrails.some((g) => enforcesZdr(g, vendor));
  const providerAllowed = (provider: string) => {
    const p = provider.toLowerCase();
    for (const g of guardrails) {
      const allowed = lowerList(g.allowed_providers);
      const ignored = lowerList(g.ignored_providers);
      if (ignored?.includes(p) || (allowed && !allowed.includes(p))) return false;
    }
    const { only, ignore, order, allow_fallbacks } = route.preferences;
    if (only && !only.some((o) => o.toLowerCase() === p)) return false;
    if (ignore?.some((o) => o.toLowerCase() === p)) return false;
    if (allow_fallbacks === false && order && !order.some((o) => o.toLowerCase() === p)) return false;
    return true;
  };

  const usable = route.credentials.filter((c) => credentialApplies(c, model, route.key));
  const routes: Route<C>[] = [];
  for (const endpoint of route.endpoints) {
    const provider = endpoint.provider_slug.toLowerCase();
    const mine = usable
      .filter((c) => c.provider.toLowerCase() === provider)
      .sort((a, b) => Number(a.is_fallback) - Number(b.is_fallback) || a.sort_order - b.sort_order);
    for (const c of mine) routes.push({ provider: endpoint.provider_slug, tag: endpoint.tag, zdr: c.declared_zdr ?? endpoint.zdr, credential: c });
    const shared = !mine.some((c) => c.is_byok_only || c.is_required);
    if (shared) routes.push({ provider: endpoint.provider_slug, tag: endpoint.tag, zdr: endpoint.zdr, credential: null });
  }
  const kept = routes.filter((r) => providerAllowed(r.provider) && (!zdrRequired || r.zdr));
  if (kept.length === 0) {
    return {
      refusal: refusal('no_endpoint', {
        model: model.model.id,
        why: routes.length === 0 ? 'the catalog lists no endpoint for it' : zdrRequired ? 'zero data retention is required' : 'the provider filters leave none',
      }),
    };
  }
  return { refusal: null, routes: ordered(kept, route) };
}

/** `provider.order` first, in its order; the rest by the workspace's sort ("price": cheapest first), stable. */
function ordered<C extends PolicyCredential>(routes: Route<C>[], route: NonNullable<PolicyInput<C>['route']>): Route<C>[] {
  const order = (route.preferences.order ?? []).map((p) => p.toLowerCase());
  const rank = (r: Route<C>) => {
    const i = order.indexOf(r.provider.toLowerCase());
    return i < 0 ? order.length : i;
  };
  const price = new Map(route.endpoints.map((e) => [e.tag, priceOf(e)]));
  const byPrice = route.defaultSort === 'price';
  return routes
    .map((r, i) => ({ r, i }))
    .sort((a, b) => rank(a.r) - rank(b.r) || (byPrice ? (price.get(a.r.tag ?? '') ?? 0) - (price.get(b.r.tag ?? '') ?? 0) : 0) || a.i - b.i)
    .map(({ r }) => r);
}
