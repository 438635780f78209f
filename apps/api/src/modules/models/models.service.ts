// The model catalog: one model (with variants and aliases), the embeddings listing, and the internal
// writes (upsert a model, an alias, a variant; import a whole catalog file). The catalog is global:
// every organization sees the same models, but a guardrail can keep a key from using one. The
// services answer rows (a resolved model, a page of rows); models.router.ts makes the records and
// their links.
import { Prisma, type Model as ModelRow, type ModelVariant as VariantRow } from '@switchyard/db';
import type {
  Catalog,
  CatalogEndpoint,
  CatalogModel,
  CatalogProvider,
  CatalogVariant,
  GetModelInput,
  ImportCatalogOutput,
  ListEmbeddingsModelsInput,
  UpsertAliasInput,
  UpsertVariantInput,
} from '@switchyard/schema';
import { evaluatePolicy } from '@switchyard/rules';
import { Forbidden, Invalid, NotFound } from '../../lib/errors.js';
import { appendAudit, auditOfPlatform } from '../audit/audit.js';
import type { Actor, PlatformActor } from '../../access/callers.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import type { ModelsPage } from './models-rows.js';
import { resolveModel, type ResolvedModel } from './resolve-model.js';

const EMBEDDINGS_DEFAULT_LIMIT = 500;

type Tx = Prisma.TransactionClient;

/**
 * 403 when the routing policy (evaluatePolicy of @switchyard/rules) keeps the model from the key: a guardrail
 * that applies to it (assigned to it or to its user, else its workspace's default guardrail) has it
 * in `ignored_models`, or `allowed_models` is a list without it.
 */
async function assertModelAllowed(deps: Uses<'db' | 'guardrails'>, actor: Actor, resolved: ResolvedModel): Promise<void> {
  const verdict = evaluatePolicy({ guardrails: await deps.guardrails.applicable(deps.db, actor), model: resolved });
  if (verdict.refusal) throw new Forbidden(verdict.refusal.message);
}

/**
 * GET /model/{author}/{slug}: the model (or variant) the key asked for, once the guardrail check,
 * made on every request, lets it through. The router answers it as parsed once per catalog snapshot.
 */
export async function getModel(deps: Uses<'db' | 'catalog' | 'guardrails'>, actor: Actor, input: GetModelInput): Promise<ResolvedModel> {
  const snapshot = await deps.catalog.snapshot(deps.db);
  const resolved = resolveModel(snapshot, `${input.author}/${input.slug}`);
  if (!resolved) throw new NotFound(`model ${input.author}/${input.slug}`);
  await assertModelAllowed(deps, actor, resolved);
  return resolved;
}

/**
 * GET /embeddings/models: models whose output modalities include embeddings, in id order. Without
 * offset and limit, the whole list: the snapshot's own list (the same for every caller, so the
 * router parses its answer once per catalog snapshot); otherwise one page.
 */
export async function listEmbeddingsModels(deps: Uses<'db' | 'catalog'>, _actor: Actor, input: ListEmbeddingsModelsInput): Promise<ModelsPage> {
  const { embeddings } = await deps.catalog.snapshot(deps.db);
  const total = embeddings.length;
  if (input.offset == null && input.limit == null) return { rows: embeddings, total, next: null };
  const offset = input.offset ?? 0;
  const limit = input.limit ?? EMBEDDINGS_DEFAULT_LIMIT;
  const rows = embeddings.slice(offset, offset + limit);
  const nextOffset = offset + rows.length;
  return { rows, total, next: nextOffset < total ? { offset: nextOffset, limit } : null };
}

// ---- Internal writes -------------------------------------------------------------------------

function modelData(entry: CatalogModel) {
  const [author, slug] = entry.id.split('/') as [string, string];
  const json = (value: unknown) => (value == null ? Prisma.DbNull : (value as Prisma.InputJsonValue));
  return {
    lookup: entry.id.toLowerCase(),
    author,
    slug,
    canonical_slug: entry.canonical_slug ?? entry.id,
    name: entry.name,
    description: entry.description,
    created: entry.created,
    context_length: entry.context_length,
    input_modalities: entry.architecture.input_modalities,
    output_modalities: entry.architecture.output_modalities,
    tokenizer: entry.architecture.tokenizer,
    instruct_type: entry.architecture.instruct_type ?? null,
    pricing_prompt: entry.pricing.prompt,
    pricing_completion: entry.pricing.completion,
    pricing_image: entry.pricing.image ?? '0',
    pricing_request: entry.pricing.request ?? '0',
    top_context_length: entry.top_provider?.context_length ?? entry.context_length,
    top_max_completion_tokens: entry.top_provider?.max_completion_tokens ?? null,
    top_is_moderated: entry.top_provider?.is_moderated ?? false,
    supported_parameters: entry.supported_parameters,
    supported_voices: json(entry.supported_voices),
    default_parameters: json(entry.default_parameters),
    per_request_limits: json(entry.per_request_limits),
    expiration_date: entry.expiration_date ? new Date(entry.expiration_date) : null,
    knowledge_cutoff: entry.knowledge_cutoff ?? null,
    reasoning: json(entry.reasoning),
    video: json(entry.video),
  };
}

function variantData(model: ModelRow, v: CatalogVariant) {
  const id = `${model.id}:${v.variant}`;
  return {
    id,
    lookup: id.toLowerCase(),
    model_id: model.id,
    variant: v.variant,
    name: v.name ?? null,
    context_length: v.context_length ?? null,
    pricing_prompt: v.pricing?.prompt ?? null,
    pricing_completion: v.pricing?.completion ?? null,
    pricing_image: v.pricing?.image ?? null,
    pricing_request: v.pricing?.request ?? null,
  };
}

async function writeVariant(tx: Tx, model: ModelRow, v: CatalogVariant): Promise<VariantRow> {
  const data = variantData(model, v);
  return tx.modelVariant.upsert({
    where: { model_id_variant: { model_id: model.id, variant: v.variant } },
    create: data,
    update: data,
  });
}

async function writeAlias(tx: Tx, alias: string, model: ModelRow): Promise<void> {
  const lookup = alias.toLowerCase();
  if (lookup === model.lookup) throw new Invalid(`alias ${alias} is the model's own id`, { alias });
  await tx.modelAlias.upsert({ where: { lookup }, create: { lookup, model_id: model.id }, update: { model_id: model.id } });
}

/** Writes one catalog entry; its aliases and variants, when listed, replace the stored ones. */
async function writeModel(tx: Tx, entry: CatalogModel): Promise<{ model: ModelRow; aliases: number; variants: number; endpoints: number }> {
  const data = modelData(entry);
  // A model keeps the id (and casing) it was first published with; later writes update it.
  const model = await tx.model.upsert({ where: { lookup: data.lookup }, create: { id: entry.id, ...data }, update: data });
  if (entry.variants) {
    const names = entry.variants.map((v) => v.variant);
    if (new Set(names).size !== names.length) throw new Invalid(`duplicate variant in ${entry.id}`, { model: entry.id });
    await tx.modelVariant.deleteMany({ where: { model_id: model.id, variant: { notIn: names } } });
    for (const v of entry.variants) await writeVariant(tx, model, v);
  }
  if (entry.endpoints) await writeEndpoints(tx, model, entry);
  if (entry.aliases) {
    const lookups = entry.aliases.map((a) => a.toLowerCase());
    await tx.modelAlias.deleteMany({ where: { model_id: model.id, lookup: { notIn: lookups } } });
    for (const alias of entry.aliases) await writeAlias(tx, alias, model);
  }
  return { model, aliases: entry.aliases?.length ?? 0, variants: entry.variants?.length ?? 0, endpoints: entry.endpoints?.length ?? 0 };
}

function providerData(p: CatalogProvider) {
  return {
    name: p.name,
    privacy_policy_url: p.privacy_policy_url ?? null,
    terms_of_service_url: p.terms_of_service_url ?? null,
    status_page_url: p.status_page_url ?? null,
    headquarters: p.headquarters ?? null,
    datacenters: p.datacenters == null ? Prisma.DbNull : p.datacenters,
  };
}

/** Writes providers by slug (created or updated). */
async function writeProviders(tx: Tx, providers: CatalogProvider[]): Promise<void> {
  const slugs = providers.map((p) => p.slug);
  const duplicate = slugs.find((slug, i) => slugs.indexOf(slug) !== i);
  if (duplicate) throw new Invalid(`provider ${duplicate} is listed twice`, { provider: duplicate });
  for (const p of providers) {
    const data = providerData(p);
    await tx.provider.upsert({ where: { slug: p.slug }, create: { slug: p.slug, ...data }, update: data });
  }
}

/** What a published endpoint leaves out comes from its model and provider. */
function endpointData(model: ModelRow, providerName: string, e: CatalogEndpoint, position: number) {
  const supported = e.supported_parameters ?? model.supported_parameters;
  const toolChoice = supported.includes('tool_choice');
  return {
    model_id: model.id,
    provider_slug: e.provider,
    tag: e.tag ?? (e.quantization ? `${e.provider}/${e.quantization}` : e.provider),
    name: e.name ?? `${providerName} | ${model.id}`,
    context_length: e.context_length ?? model.context_length,
    max_completion_tokens: e.max_completion_tokens ?? null,
    max_prompt_tokens: e.max_prompt_tokens ?? null,
    pricing: (e.pricing ?? { prompt: model.pricing_prompt, completion: model.pricing_completion }) as Prisma.InputJsonValue,
    quantization: e.quantization ?? null,
    supported_parameters: supported,
    supports_implicit_caching: e.supports_implicit_caching,
    supports_tool_choice: e.supports_tool_choice ?? { auto: toolChoice, function: toolChoice, none: toolChoice, required: toolChoice },
    status: e.status,
    zdr: e.zdr,
    image: e.image == null ? Prisma.DbNull : (e.image as Prisma.InputJsonValue),
    position,
  };
}

/** Replaces a model's endpoints with the published list; each names a stored provider (else 400). */
async function writeEndpoints(tx: Tx, model: ModelRow, entry: CatalogModel): Promise<void> {
  const endpoints = entry.endpoints ?? [];
  const slugs = [...new Set(endpoints.map((e) => e.provider))];
  const providers = new Map((await tx.provider.findMany({ where: { slug: { in: slugs } } })).map((p) => [p.slug, p.name]));
  const unknown = slugs.find((slug) => !providers.has(slug));
  if (unknown) throw new Invalid(`endpoint of ${entry.id} names unknown provider ${unknown}`, { model: entry.id, provider: unknown });
  const rows = endpoints.map((e, i) => endpointData(model, providers.get(e.provider)!, e, i));
  const tags = rows.map((r) => r.tag);
  const duplicate = tags.find((tag, i) => tags.indexOf(tag) !== i);
  if (duplicate) throw new Invalid(`endpoint tag ${duplicate} is listed twice for ${entry.id}`, { model: entry.id, tag: duplicate });
  await tx.modelEndpoint.deleteMany({ where: { model_id: model.id } });
  if (rows.length > 0) await tx.modelEndpoint.createMany({ data: rows });
}

/** An alias may not shadow a model id (model ids win when resolving): refuse the write. */
async function assertNoNameClash(tx: Tx, lookups: string[]): Promise<void> {
  const aliases = await tx.modelAlias.findMany({ where: { lookup: { in: lookups } }, select: { lookup: true } });
  if (aliases.length === 0) return;
  const clash = await tx.model.findFirst({ where: { lookup: { in: aliases.map((a) => a.lookup) } }, select: { id: true } });
  if (clash) throw new Invalid(`${clash.id} is both a model id and an alias`, { name: clash.id });
}

const WRITE_TX = { maxWait: 10_000, timeout: 60_000 } as const;

/** Internal: upsert one model with (optionally) its aliases and variants; answers the model's row. */
export async function upsertModel(deps: Uses<'db' | 'catalog' | Audited>, actor: PlatformActor, input: CatalogModel): Promise<ModelRow> {
  const audit = auditOfPlatform(actor, deps);
  const written = await deps.db.$transaction(async (tx) => {
    const { model } = await writeModel(tx, input);
    await assertNoNameClash(tx, [model.lookup, ...(input.aliases ?? []).map((a) => a.toLowerCase())]);
    // The catalog concerns no organization; the entry names the fields written, not the whole entry.
    await appendAudit(tx, audit, {
      action: 'models.upsert',
      targetType: 'model',
      targetId: model.id,
      organizationId: null,
      changes: { after: { name: input.name, fields: Object.keys(input).sort(), aliases: input.aliases ?? [] } },
    });
    return model;
  }, WRITE_TX);
  deps.catalog.invalidate();
  return written;
}

/** Internal: import a catalog file; all or nothing. */
export async function importCatalog(deps: Uses<'db' | 'catalog' | Audited>, actor: PlatformActor, input: Catalog): Promise<ImportCatalogOutput> {
  const audit = auditOfPlatform(actor, deps);
  const ids = input.models.map((m) => m.id.toLowerCase());
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate) throw new Invalid(`model ${duplicate} is listed twice`, { model: duplicate });
  const imported = await deps.db.$transaction(async (tx) => {
    const totals = { models: 0, aliases: 0, variants: 0, providers: input.providers?.length ?? 0, endpoints: 0 };
    const touched: string[] = [];
    if (input.providers) await writeProviders(tx, input.providers);
    for (const entry of input.models) {
      const written = await writeModel(tx, entry);
      totals.models += 1;
      totals.aliases += written.aliases;
      totals.variants += written.variants;
      totals.endpoints += written.endpoints;
      touched.push(written.model.lookup, ...(entry.aliases ?? []).map((a) => a.toLowerCase()));
    }
    await assertNoNameClash(tx, touched);
    // A summary: the counts and the models' ids, not the catalog.
    await appendAudit(tx, audit, {
      action: 'models.import',
      targetType: 'catalog',
      targetId: null,
      organizationId: null,
      changes: { after: { ...totals, model_ids: input.models.map((m) => m.id), provider_slugs: (input.providers ?? []).map((p) => p.slug) } },
    });
    return totals;
  }, WRITE_TX);
  deps.catalog.invalidate();
  return imported;
}

/** Internal: point an alias at a model. */
export async function upsertAlias(deps: Uses<'db' | 'catalog' | Audited>, actor: PlatformActor, input: UpsertAliasInput): Promise<UpsertAliasInput> {
  const audit = auditOfPlatform(actor, deps);
  const written = await deps.db.$transaction(async (tx) => {
    const model = await tx.model.findUnique({ where: { lookup: input.model_id.toLowerCase() } });
    if (!model) throw new NotFound(`model ${input.model_id}`);
    await writeAlias(tx, input.alias, model);
    await assertNoNameClash(tx, [input.alias.toLowerCase()]);
    await appendAudit(tx, audit, {
      action: 'models.upsertAlias',
      targetType: 'model_alias',
      targetId: input.alias.toLowerCase(),
      organizationId: null,
      changes: { after: { model_id: model.id } },
    });
    return { alias: input.alias.toLowerCase(), model_id: model.id };
  }, WRITE_TX);
  deps.catalog.invalidate();
  return written;
}

/** Internal: upsert a variant of a model; answers the model with the variant (GET /model shows it as a record). */
export async function upsertVariant(deps: Uses<'db' | 'catalog' | Audited>, actor: PlatformActor, input: UpsertVariantInput): Promise<ResolvedModel> {
  const audit = auditOfPlatform(actor, deps);
  const { model_id, ...variant } = input;
  const model = await deps.db.model.findUnique({ where: { lookup: model_id.toLowerCase() } });
  if (!model) throw new NotFound(`model ${model_id}`);
  const row = await deps.db.$transaction(async (tx) => {
    const row = await writeVariant(tx, model, variant);
    await appendAudit(tx, audit, {
      action: 'models.upsertVariant',
      targetType: 'model',
      targetId: model.id,
      organizationId: null,
      changes: { after: { variant: input.variant, fields: Object.keys(variant).sort() } },
    });
    return row;
  }, WRITE_TX);
  deps.catalog.invalidate();
  return { model, variant: row };
}
