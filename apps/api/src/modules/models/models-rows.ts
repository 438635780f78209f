// Catalog rows as the API answers them: a model's (or variant's) Model record, and a page of a
// listing's rows. The links in them are the HTTP layer's (models.router.ts builds them): a record is
// given its links.details, a page says where the next one starts.
import type { Prisma, Model as ModelRow } from '@switchyard/db';
import type { Model, ModelReasoning, PerRequestLimits } from '@switchyard/schema';
import type { ResolvedModel } from './resolve-model.js';

/**
 * One page of a catalog listing: `rows` of the `total` that match, and where the next page starts
 * and how long it is (what links.next is made from); `next` is null on the last page and when the
 * whole list was asked for.
 */
export interface ModelsPage {
  rows: readonly ModelRow[];
  total: number;
  next: { offset: number; limit: number } | null;
}

function asList(value: Prisma.JsonValue | null): unknown[] | null {
  return Array.isArray(value) ? value : null;
}

function asObject(value: Prisma.JsonValue | null): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;
}

/** The stored limits (models.import and the migration "catalog_media_and_limits" keep them typed). */
function asLimits(value: Prisma.JsonValue | null): PerRequestLimits | null {
  const limits = asObject(value);
  return limits && typeof limits.prompt_tokens === 'number' && typeof limits.completion_tokens === 'number'
    ? { prompt_tokens: limits.prompt_tokens, completion_tokens: limits.completion_tokens }
    : null;
}

/** The id a resolved model answers by: the variant's, else the model's. */
export function modelIdOf({ model, variant }: ResolvedModel): string {
  return variant ? variant.id : model.id;
}

/** The name a resolved model answers by: a variant's own, else its model's with the variant in brackets. */
export function modelNameOf({ model: m, variant: v }: ResolvedModel): string {
  return v ? (v.name ?? `${m.name} (${v.variant})`) : m.name;
}

/** A model's architecture as its records state it. */
export function architectureOf(m: ModelRow): Model['architecture'] {
  return {
    input_modalities: m.input_modalities,
    output_modalities: m.output_modalities,
    modality: `${m.input_modalities.join('+')}->${m.output_modalities.join('+')}`,
    tokenizer: m.tokenizer,
    instruct_type: m.instruct_type,
  };
}

/**
 * A model (or variant) as GET /model answers it; `detailsOf` gives its links.details from its id
 * (the HTTP layer's link to the model's endpoints).
 */
export function modelOf(resolved: ResolvedModel, detailsOf: (id: string) => string): Model {
  const { model: m, variant: v } = resolved;
  const id = modelIdOf(resolved);
  const contextLength = v?.context_length ?? m.context_length;
  const reasoning = asObject(m.reasoning) as ModelReasoning | null;
  return {
    id,
    canonical_slug: m.canonical_slug,
    name: modelNameOf(resolved),
    description: m.description,
    created: m.created,
    context_length: contextLength,
    architecture: architectureOf(m),
    pricing: {
      prompt: v?.pricing_prompt ?? m.pricing_prompt,
      completion: v?.pricing_completion ?? m.pricing_completion,
      image: v?.pricing_image ?? m.pricing_image,
      request: v?.pricing_request ?? m.pricing_request,
    },
    top_provider: {
      context_length: v?.context_length ?? m.top_context_length,
      is_moderated: m.top_is_moderated,
      max_completion_tokens: m.top_max_completion_tokens,
    },
    supported_parameters: m.supported_parameters,
    supported_voices: asList(m.supported_voices),
    default_parameters: asObject(m.default_parameters),
    per_request_limits: asLimits(m.per_request_limits),
    expiration_date: m.expiration_date ? m.expiration_date.toISOString() : null,
    knowledge_cutoff: m.knowledge_cutoff,
    links: { details: detailsOf(id) },
    ...(reasoning ? { reasoning } : {}),
  } satisfies Model;
}
