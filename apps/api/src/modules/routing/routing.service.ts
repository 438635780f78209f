// routing.authorize and routing.release: the routing service asks before each request whether it
// may go through, and where, and Switchyard decides by everything an organization stored: the key
// (enabled, unexpired, its organization enabled), the model, the guardrails that apply, the BYOK
// credentials, the free-model quota, and the spend limits (the key's limit, the guardrails' limits,
// the workspace's budgets, the credit balance). The checks run in REFUSAL_ORDER; the first that
// refuses is the answer. A decision that holds nothing is made from memory; one that holds an
// estimated cost makes one statement, routing_reserve(), exact across replicas.
import { randomUUID } from 'node:crypto';
import { type ApiKey, type ByokCredential, type Db, Prisma, queryRows, statement } from '@switchyard/db';
import type { RoutingAuthorizeInputSchema, RoutingDecision, RoutingEndpoint } from '@switchyard/schema';
import { z } from 'zod';
import { secretEnded, type PlatformActor } from '../../access/callers.js';
import { tenantWhere } from '../../access/tenancy.js';
import type { Audited, Uses } from '../../deps.js';
import { TtlCache } from '../../lib/cache.js';
import type { CacheCounter } from '../../lib/metrics.js';
import type { SecretBox } from '../byok/secret-box.js';
import { auditOfPlatform } from '../audit/audit.js';
import { isFreeModel, resolveModel } from '../models/resolve-model.js';
import { limitChecks } from './limit-checks.js';
import { evaluatePolicy, type Region } from './route-policy.js';
import { refusal, type Refusal } from './refusals.js';
import { type HoldRange, reserveQuery } from './routing-queries.js';
import { type Interval, type LimitCheck, resetsAtOf, windowEnd } from './spend.js';

/** What routing decides by per workspace: its budgets, its BYOK credentials and its settings. */
export interface WorkspaceRouting {
  organizationId: string;
  includeByokInBudgets: boolean;
  defaultProviderSort: string | null;
  budgets: { interval: Interval; limit: string }[];
  credentials: ByokCredential[];
}

/**
 * Each workspace's routing rows, kept for at most CACHE_TTL_MS; writes through any process are
 * announced as "routing:<organization id>" (migration "routing_decisions") and forget the
 * organization's entries at once.
 */
export class WorkspaceRoutingCache {
  readonly #entries: TtlCache<string, WorkspaceRouting | null>;

  constructor(ttlMs: number, counter?: CacheCounter) {
    this.#entries = new TtlCache(ttlMs, 10_000, () => true, counter, ttlMs / 4);
  }

  of(db: Db, organizationId: string, workspaceId: string): Promise<WorkspaceRouting | null> {
    return this.#entries.get(workspaceId, async () => {
      const [workspace, credentials] = await Promise.all([
        db.workspace.findFirst({
          where: { ...tenantWhere({ organizationId }), id: workspaceId, deleted_at: null },
          include: { budgets: { orderBy: { reset_interval: 'asc' } } },
        }),
        // The workspace's own credentials and the organization's for every workspace (workspace_id null).
        db.byokCredential.findMany({
          where: { ...tenantWhere({ organizationId }), OR: [{ workspace_id: workspaceId }, { workspace_id: null }], deleted_at: null, disabled: false },
          orderBy: [{ provider: 'asc' }, { sort_order: 'asc' }, { created_at: 'asc' }, { id: 'asc' }],
        }),
      ]);
      if (!workspace) return null;
      return {
        organizationId,
        includeByokInBudgets: workspace.include_byok_in_budgets,
        defaultProviderSort: workspace.default_provider_sort,
        budgets: workspace.budgets.map((b) => ({ interval: b.reset_interval, limit: b.limit_usd.toString() })),
        credentials,
      };
    });
  }

  forgetOrganization(organizationId: string): void {
    this.#entries.deleteWhere((entry) => entry === null || entry.organizationId === organizationId);
  }

  clear(): void {
    this.#entries.clear();
  }
}

/**
 * What a decision is made from: the key, catalog, guardrail, workspace and spend caches, the
 * free-model quota per minute (counted by the limiter), the secret box (BYOK secrets), how long a
 * reservation holds its amount unless settled or released (reservationTtlMs), the metrics, the
 * refusal events and the bounded audit of BYOK reveals (both written off the request path), and the
 * request's origin for that audit.
 */
type Decides =
  | 'db'
  | 'keys'
  | 'catalog'
  | 'guardrails'
  | 'usage'
  | 'secrets'
  | 'workspaceRouting'
  | 'spend'
  | 'freeQuota'
  | 'reservationTtlMs'
  | 'metrics'
  | 'refusalEvents'
  | 'byokReveals'
  | Audited;

type RoutingDeps = Uses<Decides>;

type AuthorizeInput = z.output<typeof RoutingAuthorizeInputSchema>;

/** 401 refusals: the key and its organization, as authenticate() decides them for the API. */
async function keyRefusal(deps: Uses<'db' | 'keys'>, hash: string, now: Date): Promise<{ refusal: Refusal; key?: ApiKey } | { key: ApiKey }> {
  const found = await deps.keys.find(deps.db, hash);
  if (found?.kind !== 'tenant') return { refusal: refusal('key_unknown') };
  const key = found.key;
  if (key.deleted_at) return { refusal: refusal('key_deleted'), key };
  if (key.disabled) return { refusal: refusal('key_disabled'), key };
  if (key.expires_at && key.expires_at.getTime() <= now.getTime()) return { refusal: refusal('key_expired', { at: key.expires_at.toISOString() }), key };
  // A secret rotated away: expired as a key is, at its grace period's end.
  if (secretEnded(found, now)) return { refusal: refusal('key_expired', { at: found.secretExpiresAt!.toISOString() }), key };
  if (found.organizationDisabled) return { refusal: refusal('organization_disabled'), key };
  deps.keys.noteUse(hash, now);
  return { key };
}

const secondsUntil = (at: Date | null, now: Date) => (at ? Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000)) : null);

/**
 * The refusal of the first check (in the order given) that is short: holding nothing, a check is
 * short once nothing is left; holding c, unless c is left (`short` may decide instead, exactly).
 */
function spendRefusal(
  checks: readonly LimitCheck[],
  remaining: ReadonlyMap<string, number>,
  needed: number,
  now: Date,
  short: (check: LimitCheck, left: number) => boolean = (_, left) => (needed > 0 ? left < needed : left <= 0),
): Refusal | null {
  for (const check of checks) {
    // A check with no figure limits nothing (a minted key none of whose makers has a limit).
    if (!remaining.has(check.name)) continue;
    const left = remaining.get(check.name)!;
    if (!short(check, left)) continue;
    const details = { window: check.interval, limit: check.limit, remaining: Math.max(0, left).toFixed(6), guardrail: check.guardrail_id ?? '' };
    const retry = secondsUntil(windowEnd(check.interval, now), now);
    if (check.scope === 'keys') return refusal('key_limit', details, retry);
    if (check.scope === 'makers') return refusal('key_limit', { ...details, maker: 1 }, null);
    if (check.scope === 'guardrail') return refusal('guardrail_limit', details, retry);
    if (check.scope === 'workspace') return refusal('budget_exhausted', details, retry);
    return refusal('credits_exhausted', details, null);
  }
  return null;
}

/**
 * Opens a credential's secret for the answer: the only place a decrypted BYOK secret leaves the
 * server. Each credential opened is noted in `revealed` (the bounded audit of reveals).
 */
function endpointOf(
  secrets: SecretBox,
  r: { provider: string; tag: string | null; zdr: boolean; credential: ByokCredential | null },
  revealed: ByokCredential[],
): RoutingEndpoint {
  const c = r.credential;
  if (c) revealed.push(c);
  return { provider: r.provider, tag: r.tag, zdr: r.zdr, byok: c ? { id: c.id, secret: secrets.open(c.secret_ciphertext!, c.id) } : null };
}

/**
 * routing.authorize, asked by the platform key `actor`: each BYOK secret the answer reveals is noted
 * for its bounded audit entry in the actor's name (byok.reveal, one per credential per hour), written
 * after the answer, off the request path.
 */
export async function authorize(deps: Uses<Decides>, actor: PlatformActor, input: AuthorizeInput): Promise<RoutingDecision> {
  // What a rule counted that a refusal by a later rule gives back (the free-model quota per minute).
  const undo: (() => Promise<void>)[] = [];
  // The key the decision was about, when it was known: a refusal becomes an event of its organization;
  // the BYOK credentials whose secrets the answer reveals.
  const asked: { key?: ApiKey; revealed: ByokCredential[] } = { revealed: [] };
  const decision = await decide(deps, input, undo, asked);
  if (!decision.allowed) await Promise.all(undo.map((giveBack) => giveBack()));
  if (!decision.allowed) deps.refusalEvents.note(decision, asked.key ?? null, input.model);
  if (decision.allowed && asked.revealed.length > 0) {
    const audit = auditOfPlatform(actor, deps);
    for (const credential of asked.revealed) deps.byokReveals.note(audit, credential);
  }
  deps.metrics.routingDecisions.inc({ outcome: decision.allowed ? 'allowed' : 'refused', code: decision.allowed ? 'ok' : decision.code });
  return decision;
}

async function decide(
  deps: RoutingDeps,
  input: AuthorizeInput,
  undo: (() => Promise<void>)[],
  asked: { key?: ApiKey; revealed: ByokCredential[] },
): Promise<RoutingDecision> {
  const { db } = deps;
  const now = deps.now();
  // What each rule said, for `explain` (switchyard route check --explain): its text is made only
  // when asked for (most decisions are not explained).
  const trace: { rule: string; said: string }[] | null = input.explain ? [] : null;
  const said = (rule: string, what: () => string) => void trace?.push({ rule, said: what() });
  const explained = trace ? { explain: trace } : {};
  const refused = (r: Refusal): RoutingDecision => {
    said('decision', () => `refused: ${r.code} (${r.status})`);
    return { allowed: false, ...r, ...explained };
  };

  const who = await keyRefusal(deps, input.api_key_hash, now);
  asked.key = who.key;
  if ('refusal' in who) return refused(who.refusal);
  const key = who.key;
  said('key', () => `enabled, unexpired, organization enabled: ${key.label} of ${key.organization_id}, workspace ${key.workspace_id}`);

  const snapshot = await deps.catalog.snapshot(db);
  const model = resolveModel(snapshot, input.model);
  if (!model) return refused(refusal('model_not_found', { model: input.model }));
  said('model', () => `${input.model} is ${model.variant?.id ?? model.model.id}`);

  const actor = { kind: 'tenant' as const, key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
  const [guardrails, workspace] = await Promise.all([
    deps.guardrails.applicable(db, actor),
    deps.workspaceRouting.of(db, key.organization_id, key.workspace_id),
  ]);
  // A key's workspace is live while the key is (a deleted workspace retires its keys).
  if (!workspace) return refused(refusal('key_deleted'));
  said('guardrails', () =>
    guardrails.length === 0 ? 'none applies' : guardrails.map((g) => `${g.id}${g.is_default ? ' (the workspace default)' : ''}`).join(', '),
  );

  const verdict = evaluatePolicy({
    guardrails,
    model,
    route: {
      endpoints: snapshot.endpoints.get(model.model.id) ?? [],
      credentials: workspace.credentials,
      key: { hash: key.hash, userId: key.creator_user_id },
      region: (input.region ?? 'global') as Region,
      preferences: input.provider ?? {},
      defaultSort: workspace.defaultProviderSort,
    },
  });
  if (verdict.refusal) return refused(verdict.refusal);
  said(
    'policy',
    () =>
      `model, region (${input.region ?? 'global'}), providers and ZDR allow ${verdict.routes.length} route(s): ${verdict.routes.map((r) => `${r.tag ?? r.provider}${r.credential ? ' (BYOK)' : ''}`).join(', ')}`,
  );

  const free = isFreeModel(model);
  const remaining: { limit: string; remaining: number; resets_at: string | null }[] = [];
  if (free) {
    const usage = await deps.usage.of(db, key.id, now);
    const used = usage?.free_requests_today ?? 0;
    const tomorrow = windowEnd('daily', now);
    said('free:daily', () => `${used} of ${key.free_model_daily_limit} free-model requests made today`);
    if (used >= key.free_model_daily_limit) {
      return refused(refusal('free_model_daily', { limit: key.free_model_daily_limit }, secondsUntil(tomorrow, now)));
    }
    remaining.push({ limit: 'free:daily', remaining: key.free_model_daily_limit - used - 1, resets_at: tomorrow?.toISOString() ?? null });

    // Counted now, in the limiter's store (exact across replicas); given back if a later rule refuses.
    const minute = await deps.freeQuota.take(db, key);
    if ('unavailable' in minute) {
      said(
        'free:minute',
        () => `the counter store cannot be reached: refused (COUNTER_STORE_FAILURE_FREE_MODELS=closed); try again in ${minute.retry_after_s} s`,
      );
      return refused(refusal('limits_unavailable', { what: 'the counter store', retry: minute.retry_after_s }, minute.retry_after_s));
    }
    if (!minute.counted) {
      said('free:minute', () => 'the counter store cannot be reached: allowed, not counted (COUNTER_STORE_FAILURE_FREE_MODELS=open)');
    }
    const setting =
      minute.source === 'organization'
        ? 'free_model_requests_per_minute setting'
        : "free_model_requests_per_minute setting (unset: the platform's FREE_MODEL_REQUESTS_PER_MINUTE)";
    if (minute.counted)
      said(
        'free:minute',
        () =>
          `${minute.allowed ? `${minute.limit - minute.remaining} of ${minute.limit}` : `all ${minute.limit}`} free-model requests of this key's minute made (until ${minute.resets_at.toISOString()}; the limit from ${minute.source === 'organization' ? "the organization's settings row" : 'FREE_MODEL_REQUESTS_PER_MINUTE'})`,
      );
    if (!minute.allowed) {
      return refused(refusal('free_model_per_minute', { limit: minute.limit, retry: minute.retry_after_s ?? 0, setting }, minute.retry_after_s));
    }
    undo.push(() => deps.freeQuota.refund(minute));
    // Uncounted (the store away, failing open): no count to report.
    if (minute.counted) remaining.push({ limit: 'free:minute', remaining: minute.remaining, resets_at: minute.resets_at.toISOString() });
  }

  if (!free) said('free:daily', () => 'not a free model');
  if (!free) said('free:minute', () => 'not a free model');
  const checks = limitChecks(key, guardrails, workspace, !free, now);
  const cost = input.estimated_cost;
  let reservationId: string | null = null;
  let left: Map<string, number>;
  if (cost > 0 && checks.length > 0) {
    const held = await hold(deps, key, checks, { min: cost, wanted: cost }, now);
    left = held.remaining;
    for (const check of checks)
      said(check.name, () => `${left.get(check.name)} USD left${held.held ? ' after holding' : ''}, ${cost} needed (${check.interval})`);
    if (held.held) {
      reservationId = held.reservationId;
    } else {
      return refused(held.refusal);
    }
  } else {
    left = await deps.spend.remaining(db, key.organization_id, checks, now);
    for (const check of checks) said(check.name, () => `${left.get(check.name)} USD left, more than 0 needed (${check.interval})`);
    const why = spendRefusal(checks, left, 0, now);
    if (why) return refused(why);
  }
  for (const check of checks) {
    if (!left.has(check.name)) continue;
    remaining.push({ limit: check.name, remaining: left.get(check.name)!, resets_at: resetsAtOf(check.interval, now) });
  }
  if (checks.length === 0) said('limits', () => 'none applies');
  said('decision', () => (reservationId ? `allowed; ${cost} USD held as ${reservationId}` : 'allowed; nothing held'));

  return {
    allowed: true,
    reservation_id: reservationId,
    model: model.variant?.id ?? model.model.id,
    endpoints: verdict.routes.map((r) => endpointOf(deps.secrets, r, asked.revealed)),
    remaining,
    ...explained,
  };
}

/**
 * Holds an amount against every check, in routing_reserve()'s one statement: exactly `min` when
 * min = wanted, else the most between min and wanted that every check has left. When it holds
 * nothing, the refusal is the first check found short of `min` (in exact decimals).
 */
async function hold(
  deps: Uses<'db' | 'spend' | 'reservationTtlMs'>,
  key: Pick<ApiKey, 'id' | 'organization_id' | 'workspace_id'>,
  checks: readonly LimitCheck[],
  range: HoldRange,
  now: Date,
): Promise<
  { held: true; reservationId: string; granted: number; remaining: Map<string, number> } | { held: false; refusal: Refusal; remaining: Map<string, number> }
> {
  const id = randomUUID();
  const reserve = reserveQuery(id, key, range, checks, now, deps.reservationTtlMs);
  const rows = await queryRows(deps.db, reserve.statement, reserve.values);
  // A check with no figure (a "makers" check when no maker has a limit) limits nothing: absent.
  const remaining = new Map(rows.filter((r) => r.name !== null && r.remaining !== null).map((r) => [r.name!, Number(r.remaining)]));
  deps.spend.forgetOrganization(key.organization_id);
  if (rows[0]?.reserved) return { held: true, reservationId: id, granted: Number(rows[0].granted), remaining };
  const exact = new Map(rows.filter((r) => r.remaining !== null).map((r) => [r.name, new Prisma.Decimal(r.remaining!)]));
  const needed = new Prisma.Decimal(range.min);
  const why = spendRefusal(checks, remaining, range.min, now, (check) => (exact.get(check.name) ?? new Prisma.Decimal(0)).lessThan(needed));
  return { held: false, refusal: why ?? refusal('credits_exhausted', { remaining: '0' }), remaining };
}

/** What a partial grant answers: what it holds and each limit's remaining amount after it, or why it holds nothing. */
export type Grant =
  | { granted: true; reservation_id: string; amount: number; remaining: { limit: string; remaining: number; resets_at: string | null }[] }
  | { granted: false; refusal: Refusal };

/**
 * A partial grant, for the edge decider's leases: for the key `api_key_hash` (a paid model's spend
 * when `paid`, which the credit balance also limits), holds the most that every limit that applies
 * has left, up to `wanted` and at least `min` (USD, 0 < min <= wanted), in routing_reserve()'s one
 * statement: one snapshot of every limit, under the organization's reservation lock, so that the
 * grants and decisions of every replica never hold more than a limit has left. The grant is a
 * reservation: recording settles it (reservation_id), routing.release frees it, giveBack frees a
 * part of it, and it expires after RESERVATION_TTL_MS. Refuses as routing.authorize does (the key's
 * refusals, then the first limit short of `min`). Not an API operation yet: a service for the
 * platform's own callers (SERVER_ACTOR or a platform key).
 */
export async function grant(
  deps: Uses<'db' | 'keys' | 'guardrails' | 'workspaceRouting' | 'spend' | 'reservationTtlMs' | 'now'>,
  _actor: PlatformActor,
  input: { api_key_hash: string; paid: boolean; min: number; wanted: number },
): Promise<Grant> {
  if (!(input.min > 0) || !(input.wanted >= input.min) || !Number.isFinite(input.wanted)) {
    throw new RangeError(`a grant needs 0 < min <= wanted (got min ${input.min}, wanted ${input.wanted})`);
  }
  const now = deps.now();
  const who = await keyRefusal(deps, input.api_key_hash, now);
  if ('refusal' in who) return { granted: false, refusal: who.refusal };
  const key = who.key;
  const actor = { kind: 'tenant' as const, key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
  const [guardrails, workspace] = await Promise.all([
    deps.guardrails.applicable(deps.db, actor),
    deps.workspaceRouting.of(deps.db, key.organization_id, key.workspace_id),
  ]);
  if (!workspace) return { granted: false, refusal: refusal('key_deleted') };
  const checks = limitChecks(key, guardrails, workspace, input.paid, now);
  if (checks.length === 0) throw new RangeError('no limit applies to this key: there is nothing to lease');
  const held = await hold(deps, key, checks, { min: input.min, wanted: input.wanted }, now);
  if (!held.held) return { granted: false, refusal: held.refusal };
  return {
    granted: true,
    reservation_id: held.reservationId,
    amount: held.granted,
    remaining: checks
      .filter((check) => held.remaining.has(check.name))
      .map((check) => ({ limit: check.name, remaining: held.remaining.get(check.name)!, resets_at: resetsAtOf(check.interval, now) })),
  };
}

const GIVE_BACK = statement(
  `SELECT organization_id, held::text AS held FROM routing_give_back($1::uuid, $2::numeric)`,
  z.object({ organization_id: z.string(), held: z.string() }),
);

/**
 * Gives back `amount` (USD, > 0) of what the reservation holds: it keeps the rest (deleted once it
 * holds nothing), and the amount given back is free at once for every limit it held against.
 * Returns what it still holds, or null when it was gone (settled, released or expired).
 */
export async function giveBack(
  deps: Uses<'db' | 'spend'>,
  _actor: PlatformActor,
  input: { reservation_id: string; amount: number },
): Promise<{ held: number | null }> {
  if (!(input.amount > 0) || !Number.isFinite(input.amount)) throw new RangeError(`a give-back needs an amount above 0 (got ${input.amount})`);
  const [row] = await queryRows(deps.db, GIVE_BACK, [input.reservation_id, String(input.amount)]);
  if (row) deps.spend.forgetOrganization(row.organization_id);
  return { held: row ? Number(row.held) : null };
}

const RELEASE = statement(`DELETE FROM spend_reservations WHERE id = $1::uuid RETURNING organization_id`, z.object({ organization_id: z.string() }));

/** routing.release: the request never reached a provider; what it held is free again. */
export async function release(deps: Uses<'db' | 'spend'>, _actor: PlatformActor, input: { reservation_id: string }): Promise<{ released: boolean }> {
  const rows = await queryRows(deps.db, RELEASE, [input.reservation_id]);
  for (const row of rows) deps.spend.forgetOrganization(row.organization_id);
  return { released: rows.length > 0 };
}

const EXPIRE = statement(
  `DELETE FROM spend_reservations WHERE expires_at <= $1::timestamptz RETURNING organization_id`,
  z.object({ organization_id: z.string() }),
);

/** Deletes the reservations past their time (they already count against nothing); returns how many. A sweep: its actor is SERVER_ACTOR. */
export async function expireReservations(deps: Uses<'db' | 'now'>, _actor: PlatformActor): Promise<number> {
  return (await queryRows(deps.db, EXPIRE, [deps.now()])).length;
}

const OPEN = statement(
  `SELECT count(*)::int AS count, coalesce(sum(amount), 0)::float8 AS amount FROM spend_reservations WHERE expires_at > $1::timestamptz`,
  z.object({ count: z.number().int(), amount: z.number() }),
);

/** The reservations that still hold an amount, across every organization and replica (a platform figure, read for the metrics by SERVER_ACTOR). */
export async function openReservations(deps: Uses<'db' | 'now'>, _actor: PlatformActor): Promise<{ count: number; amount: number }> {
  const [row] = await queryRows(deps.db, OPEN, [deps.now()]);
  return row ?? { count: 0, amount: 0 };
}

/** The advisory lock of the reservation expiry job (jobs/runner.ts: one replica a round). */
export const RESERVATION_SWEEP_LOCK = 0x5253_5650; // "RSVP"
