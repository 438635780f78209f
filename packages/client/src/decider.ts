// @switchyard/client/decider: routing decisions in the routing service's own process
// (docs/decider.md). The decider loads a snapshot of what the routing rules read (keys by hash,
// organizations' workspaces, credentials and guardrails, the catalog), keeps it current from the
// server's change stream (tRPC's server-sent events), and answers routing.authorize's decision for
// a request that holds nothing with @switchyard/rules, the rules the server runs. What it cannot
// decide from its snapshot alone it asks the server (routing.authorize) and answers as it did:
// decisions that hold a cost, free models (their quotas are counted by the server), and allowed
// answers that route through a BYOK credential (its secret stays sealed with the server's key).
// While it has not heard from the stream for longer than its maximum staleness, it refuses
// (fails closed) rather than decide from a snapshot that may have missed a revoked key.
import { createTRPCClient, httpSubscriptionLink, type TRPCClient } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { Unsubscribable } from '@trpc/server/observable';
import { EventSource } from 'eventsource';
import {
  type Answers,
  type DecisionKey,
  decide,
  type KeyFacts,
  type LimitCheck,
  type LimitedGuardrail,
  type ModelFacts,
  type Need,
  type Outcome,
  type PolicyCredential,
  type PolicyEndpoint,
  type PolicyGuardrail,
  type PolicyRows,
  type Refusal,
  refusal,
  resolveModelIn,
  variantKey,
} from '@switchyard/rules';
import { createSwitchyardClient, type SwitchyardClient } from './index.js';
import type { AppRouter } from './router.js';

type Outputs = inferRouterOutputs<AppRouter>;
type Inputs = inferRouterInputs<AppRouter>;
type SnapshotData = Outputs['decider']['snapshot']['data'];
type KeysPart = Extract<SnapshotData, { part: 'keys' }>;
type OrganizationsPart = Extract<SnapshotData, { part: 'organizations' }>;
type CatalogPart = Extract<SnapshotData, { part: 'catalog' }>;
type SnapshotKey = KeysPart['keys'][number];
type SnapshotOrganization = OrganizationsPart['organizations'][number];

/** routing.authorize's input and answer, as the decider takes and gives them. */
export type AuthorizeInput = Inputs['routing']['authorize'];
export type AuthorizeDecision = Outputs['routing']['authorize']['data'];

/** The snapshot protocol's version this decider speaks (the server refuses one it does not serve). */
export const DECIDER_PROTOCOL_VERSION = 1;

export interface DeciderOptions {
  /** The server's base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  /** A platform key (tenant keys are refused). It travels in the Authorization header, never in a URL. */
  platformKey: string;
  /**
   * How long the decider goes on deciding without hearing from the change stream (an event or its
   * heartbeat), in ms: past it, every decision is refused with 503 `limits_unavailable` until the
   * stream is back. It bounds how long a revoked key can keep working while the stream is cut.
   * Default 5000; keep it above the server's DECIDER_HEARTBEAT_MS.
   */
  maxStalenessMs?: number;
  /** How old the remaining amounts of the limits behind a decision may be, in ms (the server's USAGE_CACHE_MS for its own). Default 250. */
  spendMaxAgeMs?: number;
  /** retry_after_s of a refusal while the decider fails closed. Default 5. */
  retryAfterS?: number;
  /** Keys per page of the snapshot (at most 5000, the default). */
  pageSize?: number;
  /** The clock (tests fix it). */
  now?: () => Date;
  /** Told about what goes wrong in the background (a failed reload, a refused stream); default: nothing. */
  onError?: (error: unknown) => void;
}

/** What the decider has done and how current it is. */
export interface DeciderMetrics {
  /** Decisions by where they were made, outcome and code (`ok` when allowed). */
  decisions: { source: 'local' | 'server' | 'failed_closed'; outcome: 'allowed' | 'refused'; code: string; count: number }[];
  /** ms since the decider last heard from the change stream (and had applied every change it announced); null before the first. */
  snapshotAgeMs: number | null;
  /** ms between the server's sending and the decider's receipt of the last event or heartbeat (includes clock skew). */
  streamLagMs: number | null;
  /** Whether the change stream is connected. */
  streamConnected: boolean;
  /** Full loads of the snapshot (the first, and each reload the server asked for). */
  loads: number;
  /** Changes applied (a key, an organization or the catalog read again). */
  changesApplied: number;
  keys: number;
  organizations: number;
  /** The last background failure's message, if any. */
  lastError: string | null;
}

export interface Decider {
  /** routing.authorize's answer for this request: the same fields, codes, statuses, messages and rule order. */
  authorize(input: AuthorizeInput): Promise<AuthorizeDecision>;
  metrics(): DeciderMetrics;
  /** Stops the stream and the background work. */
  close(): void;
}

/** A workspace as the rules read it, with the credentials that may serve its keys (its own and its organization's, in routing's order). */
interface Workspace {
  includeByokInBudgets: boolean;
  defaultProviderSort: string | null;
  budgets: { interval: 'daily' | 'weekly' | 'monthly' | 'lifetime'; limit: string }[];
  credentials: Credential[];
  defaultGuardrailId: string;
}

type Credential = PolicyCredential & { sealed: true };
type Guardrail = PolicyGuardrail & LimitedGuardrail & { workspace_id: string };

interface Organization {
  disabled: boolean;
  workspaces: Map<string, Workspace>;
  /** Guardrails by workspace, in id order (is_default: as of their workspace). */
  guardrails: Map<string, Guardrail[]>;
  keyGuardrail: Map<string, string>;
  memberGuardrails: Map<string, Set<string>>;
}

interface CatalogModel {
  id: string;
  lookup: string;
  free: boolean;
}
interface CatalogVariant extends CatalogModel {
  model_id: string;
}
interface Catalog {
  models: Map<string, CatalogModel>;
  aliases: Map<string, CatalogModel>;
  variants: Map<string, CatalogVariant>;
  endpoints: Map<string, PolicyEndpoint[]>;
}

const HASH = /^[0-9a-f]{64}$/;
const REGIONS = new Set(['global', 'europe', 'us']);
const PREFERENCE_FIELDS = new Set(['order', 'only', 'ignore', 'allow_fallbacks', 'zdr']);
const INPUT_FIELDS = new Set(['api_key_hash', 'model', 'estimated_cost', 'region', 'provider', 'explain']);
const SLUG = /^[a-z0-9][a-z0-9._-]*$/i;

const slugs = (v: unknown) =>
  v === undefined || (Array.isArray(v) && v.length <= 100 && v.every((s) => typeof s === 'string' && s.length <= 100 && SLUG.test(s)));

/**
 * Whether an input is plainly one that routing.authorize takes and that holds nothing; anything
 * else (a cost to hold, or an input its schema might refuse) is the server's to answer.
 */
function decidableHere(input: AuthorizeInput): boolean {
  if (typeof input !== 'object' || input === null) return false;
  if (Object.keys(input).some((k) => !INPUT_FIELDS.has(k))) return false;
  if (typeof input.api_key_hash !== 'string' || !HASH.test(input.api_key_hash)) return false;
  if (typeof input.model !== 'string' || input.model.length < 1 || input.model.length > 300) return false;
  if (input.estimated_cost !== undefined && input.estimated_cost !== 0) return false;
  if (input.region !== undefined && !REGIONS.has(input.region)) return false;
  if (input.explain !== undefined && typeof input.explain !== 'boolean') return false;
  const p = input.provider;
  if (p !== undefined) {
    if (typeof p !== 'object' || p === null || Object.keys(p).some((k) => !PREFERENCE_FIELDS.has(k))) return false;
    if (!slugs(p.order) || !slugs(p.only) || !slugs(p.ignore)) return false;
    if (p.allow_fallbacks !== undefined && typeof p.allow_fallbacks !== 'boolean') return false;
    if (p.zdr !== undefined && typeof p.zdr !== 'boolean') return false;
  }
  return true;
}

const dateOf = (s: string | null) => (s === null ? null : new Date(s));

function decisionKey(k: SnapshotKey): DecisionKey {
  return {
    id: k.id,
    hash: k.hash,
    label: k.label,
    organization_id: k.organization_id,
    workspace_id: k.workspace_id,
    creator_user_id: k.creator_user_id,
    disabled: k.disabled,
    deleted_at: dateOf(k.deleted_at),
    expires_at: dateOf(k.expires_at),
    free_model_daily_limit: k.free_model_daily_limit,
    limit: k.limit,
    limit_reset: k.limit_reset,
    include_byok_in_limit: k.include_byok_in_limit,
    minted_by_key_id: k.minted_by_key_id,
  };
}

interface HeldKey {
  key: DecisionKey;
  secretExpiresAt: Date | null;
}

function organizationOf(o: SnapshotOrganization): Organization {
  const workspaces = new Map<string, Workspace>();
  for (const w of o.workspaces) {
    workspaces.set(w.id, {
      includeByokInBudgets: w.include_byok_in_budgets,
      defaultProviderSort: w.default_provider_sort,
      budgets: w.budgets,
      // The organization's credentials come in routing's order: each workspace keeps its own and those for every workspace.
      credentials: o.credentials
        .filter((c) => c.workspace_id === null || c.workspace_id === w.id)
        .map((c) => ({
          id: c.id,
          provider: c.provider,
          disabled: false,
          deleted_at: null,
          // The rules only ask whether there is a secret; it stays sealed with the server.
          secret_ciphertext: c.has_secret ? 'sealed' : null,
          allowed_models: c.allowed_models,
          allowed_user_ids: c.allowed_user_ids,
          allowed_api_key_hashes: c.allowed_api_key_hashes,
          is_fallback: c.is_fallback,
          is_byok_only: c.is_byok_only,
          is_required: c.is_required,
          sort_order: c.sort_order,
          declared_zdr: c.declared_zdr,
          sealed: true as const,
        })),
      defaultGuardrailId: w.default_guardrail_id,
    });
  }
  const guardrails = new Map<string, Guardrail[]>();
  for (const g of o.guardrails) {
    const list = guardrails.get(g.workspace_id) ?? [];
    list.push({
      id: g.id,
      workspace_id: g.workspace_id,
      allowed_models: g.allowed_models,
      ignored_models: g.ignored_models,
      allowed_providers: g.allowed_providers,
      ignored_providers: g.ignored_providers,
      allowed_data_regions: g.allowed_data_regions,
      enforce_zdr: g.enforce_zdr,
      enforce_zdr_anthropic: g.enforce_zdr_anthropic,
      enforce_zdr_openai: g.enforce_zdr_openai,
      enforce_zdr_google: g.enforce_zdr_google,
      enforce_zdr_xai: g.enforce_zdr_xai,
      enforce_zdr_other: g.enforce_zdr_other,
      limit_usd: g.limit_usd,
      reset_interval: g.reset_interval,
      include_byok_in_budgets: g.include_byok_in_budgets,
      is_default: g.id === workspaces.get(g.workspace_id)?.defaultGuardrailId,
    });
    guardrails.set(g.workspace_id, list);
  }
  const keyGuardrail = new Map(o.key_assignments.map((a) => [a.api_key_id, a.guardrail_id]));
  const memberGuardrails = new Map<string, Set<string>>();
  for (const a of o.member_assignments) {
    const set = memberGuardrails.get(a.user_id) ?? new Set<string>();
    set.add(a.guardrail_id);
    memberGuardrails.set(a.user_id, set);
  }
  return { disabled: o.disabled, workspaces, guardrails, keyGuardrail, memberGuardrails };
}

/**
 * The guardrails that apply to a key, as the server's guardrail cache selects them: those of its
 * workspace assigned to the key or to its user; else its workspace's default guardrail, once it
 * exists; in id order.
 */
function applicableGuardrails(org: Organization, workspace: Workspace, key: DecisionKey): Guardrail[] {
  const inWorkspace = org.guardrails.get(key.workspace_id) ?? [];
  const forKey = org.keyGuardrail.get(key.id);
  const forUser = org.memberGuardrails.get(key.creator_user_id);
  let chosen = inWorkspace.filter((g) => g.id === forKey || forUser?.has(g.id));
  if (chosen.length === 0) chosen = inWorkspace.filter((g) => g.id === workspace.defaultGuardrailId);
  return chosen;
}

function catalogOf(part: CatalogPart): Catalog {
  const byId = new Map(part.models.map((m) => [m.id, m]));
  const aliases = new Map<string, CatalogModel>();
  for (const a of part.aliases) {
    const m = byId.get(a.model_id);
    if (m) aliases.set(a.lookup, m);
  }
  return {
    models: new Map(part.models.map((m) => [m.lookup, m])),
    aliases,
    variants: new Map(part.variants.map((v) => [variantKey(v.model_id, v.variant), v])),
    endpoints: new Map(
      part.endpoints.map((e) => [e.model_id, e.endpoints.map((x) => ({ provider_slug: x.provider_slug, tag: x.tag, zdr: x.zdr, pricing: x.pricing }))]),
    ),
  };
}

/** The cache key of a set of checks, by every field the spend statement reads. */
function checksKey(organizationId: string, checks: readonly LimitCheck[]): string {
  let key = organizationId;
  for (const c of checks)
    key += `\n${c.name} ${c.scope} ${c.since} ${c.byok} ${c.limit} ${c.workspace_id ?? ''} ${c.is_default ?? ''} ${c.keys?.join(',') ?? ''}`;
  return key;
}

/** Thrown inside a decision that must go to the server instead. */
class AskTheServer extends Error {}

class DeciderImpl implements Decider {
  readonly #options: Required<Omit<DeciderOptions, 'onError'>> & Pick<DeciderOptions, 'onError'>;
  readonly #client: SwitchyardClient;
  readonly #stream: TRPCClient<AppRouter>;
  #keys = new Map<string, HeldKey>();
  /** A key's stable hash to the secret hashes it is held under. */
  #secretsOf = new Map<string, Set<string>>();
  #organizations = new Map<string, Organization>();
  #catalog: Catalog = { models: new Map(), aliases: new Map(), variants: new Map(), endpoints: new Map() };
  readonly #spend = new Map<string, { at: number; remaining: Promise<Map<string, number>>; refreshing: boolean }>();
  readonly #lookups = new Map<string, Promise<HeldKey | null>>();
  readonly #organizationReads = new Map<string, Promise<void>>();

  #subscription: Unsubscribable | undefined;
  #lastEventId: string | null = null;
  #connected = false;
  /** When the decider last heard from the stream (ms, its clock). */
  #heardAt: number | null = null;
  /** When the oldest change not yet applied arrived (null: none pending). */
  #pendingSince: number | null = null;
  #queue: Promise<void> = Promise.resolve();
  #queued = 0;
  #streamLag: number | null = null;
  #loads = 0;
  #applied = 0;
  #lastError: string | null = null;
  #closed = false;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #watchdog: ReturnType<typeof setInterval> | undefined;
  #subscribedAt = 0;
  #backoffMs = 100;
  readonly #decisions = new Map<string, number>();

  constructor(options: DeciderOptions) {
    this.#options = {
      url: options.url.replace(/\/+$/, ''),
      platformKey: options.platformKey,
      maxStalenessMs: options.maxStalenessMs ?? 5_000,
      spendMaxAgeMs: options.spendMaxAgeMs ?? 250,
      retryAfterS: options.retryAfterS ?? 5,
      pageSize: Math.min(options.pageSize ?? 5_000, 5_000),
      now: options.now ?? (() => new Date()),
      onError: options.onError,
    };
    this.#client = createSwitchyardClient({ url: this.#options.url, apiKey: options.platformKey });
    const authorization = `Bearer ${options.platformKey}`;
    this.#stream = createTRPCClient<AppRouter>({
      links: [
        httpSubscriptionLink({
          url: `${this.#options.url}/trpc`,
          EventSource,
          // The key goes in a header: eventsource's own fetch takes it (tRPC's connectionParams would put it in the URL).
          eventSourceOptions: {
            fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, authorization } }),
          },
        }),
      ],
    });
  }

  async start(): Promise<void> {
    const position = await this.#load();
    this.#lastEventId = position;
    // Current as of the read: the stream, from its position, brings what changed since.
    this.#heardAt = this.#clock();
    this.#subscribe();
    // A stream can go quiet without ending (a half-open connection, an answer the event source gave
    // up on): past half the staleness without a word, it is opened again.
    const every = Math.max(50, this.#options.maxStalenessMs / 4);
    this.#watchdog = setInterval(() => {
      const now = this.#clock();
      if (this.#heardAt !== null && now - this.#heardAt > this.#options.maxStalenessMs / 2 && now - this.#subscribedAt > this.#options.maxStalenessMs / 2) {
        this.#subscribe();
      }
    }, every);
    this.#watchdog.unref?.();
  }

  /** Reads the whole snapshot and puts it in place at once; answers the stream position it was read from. */
  async #load(): Promise<string> {
    const version = DECIDER_PROTOCOL_VERSION;
    const catalogPart = (await this.#client.decider.snapshot.query({ part: 'catalog', version })).data as CatalogPart;
    const organizations = new Map<string, Organization>();
    let cursor: string | null = null;
    do {
      const page = (await this.#client.decider.snapshot.query({ part: 'organizations', version, cursor })).data as OrganizationsPart;
      for (const o of page.organizations) organizations.set(o.id, organizationOf(o));
      cursor = page.next_cursor;
    } while (cursor !== null);
    const keys = new Map<string, HeldKey>();
    const secretsOf = new Map<string, Set<string>>();
    cursor = null;
    do {
      const page = (await this.#client.decider.snapshot.query({ part: 'keys', version, cursor, limit: this.#options.pageSize })).data as KeysPart;
      for (const k of page.keys) this.#hold(keys, secretsOf, k);
      cursor = page.next_cursor;
    } while (cursor !== null);
    this.#catalog = catalogOf(catalogPart);
    this.#organizations = organizations;
    this.#keys = keys;
    this.#secretsOf = secretsOf;
    this.#spend.clear();
    this.#loads++;
    return catalogPart.position;
  }

  #hold(keys: Map<string, HeldKey>, secretsOf: Map<string, Set<string>>, k: SnapshotKey): HeldKey {
    const held = { key: decisionKey(k), secretExpiresAt: dateOf(k.secret_expires_at) };
    keys.set(k.secret_hash, held);
    let set = secretsOf.get(k.hash);
    if (!set) secretsOf.set(k.hash, (set = new Set()));
    set.add(k.secret_hash);
    return held;
  }

  #subscribe(): void {
    if (this.#closed) return;
    this.#subscribedAt = this.#clock();
    this.#subscription?.unsubscribe();
    this.#subscription = this.#stream.decider.changes.subscribe(
      { version: DECIDER_PROTOCOL_VERSION, lastEventId: this.#lastEventId },
      {
        onStarted: () => {
          this.#connected = true;
          this.#heardAt = this.#clock();
          this.#backoffMs = 100;
        },
        onConnectionStateChange: (state) => {
          this.#connected = state.state === 'pending';
          if (state.error) this.#fail(state.error);
        },
        onData: (value) => this.#received(value as unknown),
        onError: (error) => {
          this.#connected = false;
          this.#fail(error);
          this.#resubscribeLater();
        },
        // The server ended the stream (it is closing): connect again, to it or to whatever answers at the URL.
        onComplete: () => {
          this.#connected = false;
          this.#resubscribeLater();
        },
      },
    );
  }

  #resubscribeLater(): void {
    if (this.#closed) return;
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.#subscribe(), this.#backoffMs);
    this.#backoffMs = Math.min(this.#backoffMs * 2, 5_000);
  }

  #received(value: unknown): void {
    const tracked = value as { id?: string; data?: unknown };
    const event = (typeof tracked.id === 'string' ? tracked.data : value) as
      | { type: 'change'; topic: string; at: string }
      | { type: 'reload'; at: string }
      | { type: 'heartbeat'; at: string };
    if (typeof tracked.id === 'string') this.#lastEventId = tracked.id;
    const now = this.#clock();
    this.#heardAt = now;
    this.#streamLag = Math.max(0, now - Date.parse(event.at));
    if (event.type === 'heartbeat') return;
    this.#pendingSince ??= now;
    this.#queued++;
    this.#queue = this.#queue.then(() => this.#apply(event));
  }

  /** Applies one change: reads again what it names (retried until it is read, or the decider closes). */
  async #apply(event: { type: 'change'; topic: string } | { type: 'reload' }): Promise<void> {
    for (let wait = 100; !this.#closed; wait = Math.min(wait * 2, 5_000)) {
      try {
        if (event.type === 'reload') await this.#load();
        else await this.#applyTopic(event.topic);
        this.#applied++;
        break;
      } catch (error) {
        this.#fail(error);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
    if (--this.#queued === 0) this.#pendingSince = null;
  }

  async #applyTopic(topic: string): Promise<void> {
    const version = DECIDER_PROTOCOL_VERSION;
    const colon = topic.indexOf(':');
    const kind = colon < 0 ? topic : topic.slice(0, colon);
    const subject = colon < 0 ? '' : topic.slice(colon + 1);
    if (kind === 'catalog') {
      this.#catalog = catalogOf((await this.#client.decider.snapshot.query({ part: 'catalog', version })).data as CatalogPart);
    } else if (kind === 'key') {
      const part = (await this.#client.decider.snapshot.query({ part: 'keys', version, hashes: [subject] })).data as KeysPart;
      for (const secret of this.#secretsOf.get(subject) ?? []) this.#keys.delete(secret);
      this.#secretsOf.delete(subject);
      for (const k of part.keys) this.#hold(this.#keys, this.#secretsOf, k);
    } else if (kind === 'organization' || kind === 'guardrails' || kind === 'routing') {
      const part = (await this.#client.decider.snapshot.query({ part: 'organizations', version, ids: [subject] })).data as OrganizationsPart;
      for (const o of part.organizations) this.#organizations.set(o.id, organizationOf(o));
      for (const id of part.gone) this.#organizations.delete(id);
      // Budgets and guardrails' limits may have changed: remaining amounts are read again.
      for (const [key] of this.#spend) if (key.startsWith(`${subject}\n`) || key === subject) this.#spend.delete(key);
    }
    // Other announcements (members' order) change nothing the rules read.
  }

  #fail(error: unknown): void {
    this.#lastError = error instanceof Error ? error.message : String(error);
    this.#options.onError?.(error);
  }

  #clock(): number {
    return this.#options.now().getTime();
  }

  /** ms since the decider was last current: heard from the stream, with nothing announced left unapplied. */
  #age(now: number): number | null {
    if (this.#heardAt === null) return null;
    return now - Math.min(this.#heardAt, this.#pendingSince ?? Number.POSITIVE_INFINITY);
  }

  #count(source: 'local' | 'server' | 'failed_closed', decision: AuthorizeDecision): AuthorizeDecision {
    const key = `${source} ${decision.allowed ? 'allowed' : 'refused'} ${decision.allowed ? 'ok' : decision.code}`;
    this.#decisions.set(key, (this.#decisions.get(key) ?? 0) + 1);
    return decision;
  }

  #failClosed(): AuthorizeDecision {
    const retry = this.#options.retryAfterS;
    const r: Refusal = refusal('limits_unavailable', { what: "Switchyard's change stream", retry }, retry);
    return this.#count('failed_closed', { allowed: false, ...r });
  }

  async authorize(input: AuthorizeInput): Promise<AuthorizeDecision> {
    if (this.#closed) throw new Error('the decider is closed');
    const nowMs = this.#clock();
    // A stream that dropped a moment ago is not yet a reason: what it may have missed is bounded by the staleness.
    const age = this.#age(nowMs);
    if (age === null || age > this.#options.maxStalenessMs) return this.#failClosed();
    if (!decidableHere(input)) return this.#ask(input);
    try {
      const decision = await this.#decide(input, new Date(nowMs));
      return this.#count('local', decision);
    } catch (error) {
      if (error instanceof AskTheServer) return this.#ask(input);
      // A figure it had to read (a hash it does not hold, the limits' remaining amounts) could not be: no decision without it.
      this.#fail(error);
      return this.#failClosed();
    }
  }

  /** The server's own decision (routing.authorize); it answers 503 when the server cannot be reached. */
  async #ask(input: AuthorizeInput): Promise<AuthorizeDecision> {
    try {
      return this.#count('server', (await this.#client.routing.authorize.mutate(input)).data);
    } catch (error) {
      const status = (error as { status?: number }).status ?? 0;
      // An answer of the server (400 for an input it refuses, 403 for a key that is not a platform key) is the caller's to see.
      if (status !== 0 && status < 500) throw error;
      this.#fail(error);
      return this.#failClosed();
    }
  }

  async #decide(input: AuthorizeInput, now: Date): Promise<AuthorizeDecision> {
    const steps = decide<Credential>({ model: input.model, estimated_cost: 0, region: input.region, provider: input.provider, explain: input.explain, now });
    let step = steps.next();
    while (!step.done) step = steps.next(await this.#answer(step.value, input));
    const outcome: Outcome<Credential> = step.value;
    const explained = outcome.trace ? { explain: outcome.trace } : {};
    if (!outcome.allowed) return { allowed: false, ...outcome.refusal, ...explained };
    // A BYOK route carries its secret, which only the server opens (and audits).
    if (outcome.routes.some((r) => r.credential !== null)) throw new AskTheServer();
    return {
      allowed: true,
      reservation_id: null,
      model: outcome.model,
      endpoints: outcome.routes.map((r) => ({ provider: r.provider, tag: r.tag, zdr: r.zdr, byok: null })),
      remaining: outcome.remaining,
      ...explained,
    };
  }

  async #answer(need: Need, input: AuthorizeInput): Promise<Answers<Credential>[Need['need']]> {
    switch (need.need) {
      case 'key':
        return this.#keyFacts(input.api_key_hash);
      case 'model':
        return this.#model(input.model);
      case 'policy':
        return this.#policy(need.key);
      case 'spend':
        return this.#remaining(need.key.organization_id, need.checks);
      // Free models' quotas are counted by the server; a cost to hold is reserved there.
      case 'free_usage':
      case 'free_minute':
      case 'hold':
        throw new AskTheServer();
    }
  }

  async #keyFacts(hash: string): Promise<KeyFacts | null> {
    // A hash not in the snapshot (a key made after it was read, or a deleted one) is looked up, as the server looks up one it has not cached.
    const held = this.#keys.get(hash) ?? (await this.#lookup(hash));
    if (!held) return null;
    const org = this.#organizations.get(held.key.organization_id);
    return { key: held.key, organizationDisabled: org?.disabled ?? false, secretExpiresAt: held.secretExpiresAt };
  }

  #lookup(hash: string): Promise<HeldKey | null> {
    let pending = this.#lookups.get(hash);
    if (!pending) {
      pending = this.#client.decider.snapshot
        .query({ part: 'keys', version: DECIDER_PROTOCOL_VERSION, hashes: [hash] })
        .then(async ({ data }) => {
          let found: HeldKey | null = null;
          for (const k of (data as KeysPart).keys) {
            const held = this.#hold(this.#keys, this.#secretsOf, k);
            if (k.secret_hash === hash) found = held;
          }
          // An organization made after the snapshot was read comes with its first key (its state is rule 5's).
          if (found && !this.#organizations.has(found.key.organization_id)) await this.#readOrganization(found.key.organization_id);
          return found;
        })
        .finally(() => this.#lookups.delete(hash));
      this.#lookups.set(hash, pending);
    }
    return pending;
  }

  #model(name: string): ModelFacts | null {
    const resolved = resolveModelIn(this.#catalog, name);
    if (!resolved) return null;
    const { model, variant } = resolved;
    return {
      resolved: { model: { id: model.id, lookup: model.lookup }, variant: variant ? { id: variant.id, lookup: variant.lookup } : null },
      free: (variant ?? model).free,
      endpoints: this.#catalog.endpoints.get(model.id) ?? [],
    };
  }

  async #policy(key: DecisionKey): Promise<PolicyRows<Credential>> {
    let org = this.#organizations.get(key.organization_id);
    let workspace = org?.workspaces.get(key.workspace_id);
    if (!org || !workspace) {
      // Creating an organization or a workspace is not announced: one the snapshot lacks is read
      // before the key is answered as deleted (a deleted workspace's keys are deleted with it, so
      // this is rare for a live key).
      await this.#readOrganization(key.organization_id);
      org = this.#organizations.get(key.organization_id);
      workspace = org?.workspaces.get(key.workspace_id);
      if (!org || !workspace) return { guardrails: [], workspace: null };
    }
    return { guardrails: applicableGuardrails(org, workspace, key), workspace };
  }

  /** Reads one organization's rows again (concurrent reads of one share a request). */
  #readOrganization(id: string): Promise<void> {
    let pending = this.#organizationReads.get(id);
    if (!pending) {
      pending = this.#client.decider.snapshot
        .query({ part: 'organizations', version: DECIDER_PROTOCOL_VERSION, ids: [id] })
        .then(({ data }) => {
          const part = data as OrganizationsPart;
          for (const o of part.organizations) this.#organizations.set(o.id, organizationOf(o));
          for (const gone of part.gone) this.#organizations.delete(gone);
        })
        .finally(() => this.#organizationReads.delete(id));
      this.#organizationReads.set(id, pending);
    }
    return pending;
  }

  /** What is left of each check, read from the server at most once per spendMaxAgeMs (again in the background in its last quarter). */
  #remaining(organizationId: string, checks: readonly LimitCheck[]): Promise<Map<string, number>> | Map<string, number> {
    if (checks.length === 0) return new Map();
    const key = checksKey(organizationId, checks);
    const now = this.#clock();
    const entry = this.#spend.get(key);
    const maxAge = this.#options.spendMaxAgeMs;
    const read = () =>
      this.#client.decider.spend
        .query({ version: DECIDER_PROTOCOL_VERSION, organization_id: organizationId, checks: [...checks] })
        .then(({ data }) => new Map(data.remaining.map((r) => [r.name, r.remaining])));
    if (entry && now - entry.at < maxAge) {
      if (!entry.refreshing && now - entry.at >= (maxAge * 3) / 4) {
        entry.refreshing = true;
        const next = read();
        next.then(
          () => this.#spend.set(key, { at: now, remaining: next, refreshing: false }),
          () => {
            entry.refreshing = false;
          },
        );
      }
      return entry.remaining;
    }
    const remaining = read();
    this.#spend.set(key, { at: now, remaining, refreshing: false });
    remaining.catch(() => {
      if (this.#spend.get(key)?.remaining === remaining) this.#spend.delete(key);
    });
    if (this.#spend.size > 10_000) this.#spend.delete(this.#spend.keys().next().value!);
    return remaining;
  }

  metrics(): DeciderMetrics {
    const now = this.#clock();
    return {
      decisions: [...this.#decisions].map(([key, count]) => {
        const [source, outcome, code] = key.split(' ') as ['local' | 'server' | 'failed_closed', 'allowed' | 'refused', string];
        return { source, outcome, code, count };
      }),
      snapshotAgeMs: this.#age(now),
      streamLagMs: this.#streamLag,
      streamConnected: this.#connected,
      loads: this.#loads,
      changesApplied: this.#applied,
      keys: this.#keys.size,
      organizations: this.#organizations.size,
      lastError: this.#lastError,
    };
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#watchdog);
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
    this.#connected = false;
  }
}

/**
 * A decider: loads the snapshot (resolves once it is loaded), then follows the change stream.
 * Rejects when the snapshot cannot be read (a tenant key: 403; no server: a connection error).
 */
export async function createDecider(options: DeciderOptions): Promise<Decider> {
  const decider = new DeciderImpl(options);
  try {
    await decider.start();
  } catch (error) {
    decider.close();
    throw error;
  }
  return decider;
}
