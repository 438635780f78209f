// routing.authorize and routing.release: the routing service asks before each request whether it
// may go through, and where, and Switchyard decides by everything an organization stored: the key
// (enabled, unexpired, its organization enabled), the model, the guardrails that apply, the BYOK
// credentials, the free-model quota, and the spend limits (the key's limit, the guardrails' limits,
// the workspace's budgets, the credit balance). The rules themselves are @switchyard/rules' (pure,
// shared with the client's decider); this module reads what they ask for and acts on their outcome.
// A decision that holds nothing is made from memory; one that holds an estimated cost makes one
// statement, routing_reserve(), exact across replicas.
import { randomUUID } from 'node:crypto';
import { type ApiKey, type ByokCredential, type Db, queryRows, statement } from '@switchyard/db';
import {
  type Answers,
  decide,
  type HoldAnswer,
  holdRefusal,
  type Interval,
  keyRefusal,
  type LimitCheck,
  limitChecks,
  type Need,
  type Refusal,
  refusal,
  resetsAtOf,
  type Route,
} from '@switchyard/rules';
import type { RoutingAuthorizeInputSchema, RoutingDecision, RoutingEndpoint } from '@switchyard/schema';
import { z } from 'zod';
import type { PlatformActor } from '../../access/callers.js';
import { tenantWhere } from '../../access/tenancy.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { TtlCache } from '../../lib/cache.js';
import type { CacheCounter } from '../../lib/metrics.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { auditOfPlatform } from '../audit/audit.js';
import { isFreeModel, resolveModel } from '../models/resolve-model.js';
import type { MinuteTaken } from './free-quota.js';
import type { HoldRange } from './routing-queries.js';

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
  | 'reservations'
  | 'reservationTtlMs'
  | 'metrics'
  | 'refusalEvents'
  | 'byokReveals'
  | Audited;

type AuthorizeInput = z.output<typeof RoutingAuthorizeInputSchema>;

/** The key a hash names, as the rules read it: null unless it is a tenant key. */
async function keyFacts(deps: Uses<'db' | 'keys'>, hash: string) {
  const found = await deps.keys.find(deps.db, hash);
  return found?.kind === 'tenant' ? found : null;
}

/**
 * Opens a credential's secret for the answer: the only place a decrypted BYOK secret leaves the
 * server. Each credential opened is noted in `revealed` (the bounded audit of reveals).
 */
function endpointOf(secrets: SecretBox, r: Route<ByokCredential>, revealed: ByokCredential[]): RoutingEndpoint {
  const c = r.credential;
  if (c) revealed.push(c);
  return { provider: r.provider, tag: r.tag, zdr: r.zdr, byok: c ? { id: c.id, secret: secrets.open(c.secret_ciphertext!, c.id) } : null };
}

/**
 * routing.authorize, asked by the platform key `actor`: the rules (@switchyard/rules' decide) ask
 * for each figure in their order, answered here from the caches and the database; then the acts
 * that follow from their outcome: a refusal gives back the free-model request it counted and
 * becomes an event of the key's organization, and each BYOK secret an allowed answer reveals is
 * noted for its bounded audit entry in the actor's name (byok.reveal, one per credential per hour),
 * written after the answer, off the request path.
 */
export async function authorize(deps: Uses<Decides>, actor: PlatformActor, input: AuthorizeInput): Promise<RoutingDecision> {
  const { db } = deps;
  const now = deps.now();
  // The key the decision was about, when it was known (a refusal becomes an event of its organization).
  let key: ApiKey | undefined;
  // What the free-model quota counted, which a refusal by a later rule gives back.
  const taken: MinuteTaken[] = [];
  const answer = async (need: Need): Promise<Answers<ByokCredential>[Need['need']]> => {
    switch (need.need) {
      case 'key': {
        const found = await keyFacts(deps, input.api_key_hash);
        key = found?.key;
        return found;
      }
      case 'model': {
        const snapshot = await deps.catalog.snapshot(db);
        const resolved = resolveModel(snapshot, input.model);
        return resolved && { resolved, free: isFreeModel(resolved), endpoints: snapshot.endpoints.get(resolved.model.id) ?? [] };
      }
      case 'policy': {
        const tenant = {
          kind: 'tenant' as const,
          key: key!,
          organizationId: key!.organization_id,
          workspaceId: key!.workspace_id,
          userId: key!.creator_user_id,
        };
        const [guardrails, workspace] = await Promise.all([
          deps.guardrails.applicable(db, tenant),
          deps.workspaceRouting.of(db, key!.organization_id, key!.workspace_id),
        ]);
        return { guardrails, workspace };
      }
      case 'free_usage':
        return (await deps.usage.of(db, need.key.id, now))?.free_requests_today ?? 0;
      case 'free_minute': {
        const minute = await deps.freeQuota.take(db, need.key);
        if (!('unavailable' in minute)) taken.push(minute);
        return minute;
      }
      case 'spend':
        return deps.spend.remaining(db, need.key.organization_id, need.checks, now);
      case 'hold':
        return hold(deps, need.key, need.checks, { min: need.amount, wanted: need.amount }, now);
    }
  };
  const steps = decide<ByokCredential>({ ...input, now });
  let step = steps.next();
  while (!step.done) step = steps.next(await answer(step.value));
  const outcome = step.value;

  if (outcome.keyValid) deps.keys.noteUse(input.api_key_hash, now);
  const explained = outcome.trace ? { explain: outcome.trace } : {};
  let decision: RoutingDecision;
  if (outcome.allowed) {
    const revealed: ByokCredential[] = [];
    decision = {
      allowed: true,
      reservation_id: outcome.reservationId,
      model: outcome.model,
      endpoints: outcome.routes.map((r) => endpointOf(deps.secrets, r, revealed)),
      remaining: outcome.remaining,
      ...explained,
    };
    if (revealed.length > 0) {
      const audit = auditOfPlatform(actor, deps);
      for (const credential of revealed) deps.byokReveals.note(audit, credential);
    }
  } else {
    decision = { allowed: false, ...outcome.refusal, ...explained };
    await Promise.all(taken.map((minute) => deps.freeQuota.refund(minute)));
    deps.refusalEvents.note(decision, key ?? null, input.model);
  }
  deps.metrics.routingDecisions.inc({ outcome: decision.allowed ? 'allowed' : 'refused', code: decision.allowed ? 'ok' : decision.code });
  return decision;
}

/**
 * Holds an amount against every check, in routing_reserve()'s one statement (with the others of its
 * organization waiting in this process, if any: ReservationQueue): exactly `min` when min = wanted,
 * else the most between min and wanted that every check has left. When it holds nothing, it
 * answers each check's exact remaining amount, from which the rules name the first check short of
 * `min` (holdRefusal).
 */
async function hold(
  deps: Uses<'spend' | 'reservations' | 'reservationTtlMs'>,
  key: Pick<ApiKey, 'id' | 'organization_id' | 'workspace_id'>,
  checks: readonly LimitCheck[],
  range: HoldRange,
  now: Date,
): Promise<(HoldAnswer & { held: true; granted: number }) | (HoldAnswer & { held: false })> {
  const id = randomUUID();
  const rows = await deps.reservations.reserve({ id, key, amount: range, checks, now, ttlMs: deps.reservationTtlMs });
  // A check with no figure (a "makers" check when no maker has a limit) limits nothing: absent.
  const remaining = new Map(rows.filter((r) => r.name !== null && r.remaining !== null).map((r) => [r.name!, Number(r.remaining)]));
  deps.spend.forgetOrganization(key.organization_id);
  if (rows[0]?.reserved) return { held: true, reservationId: id, granted: Number(rows[0].granted), remaining };
  return { held: false, remaining, exact: new Map(rows.filter((r) => r.remaining !== null).map((r) => [r.name, r.remaining!])) };
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
  deps: Uses<'db' | 'keys' | 'guardrails' | 'workspaceRouting' | 'spend' | 'reservations' | 'reservationTtlMs' | 'now'>,
  _actor: PlatformActor,
  input: { api_key_hash: string; paid: boolean; min: number; wanted: number },
): Promise<Grant> {
  if (!(input.min > 0) || !(input.wanted >= input.min) || !Number.isFinite(input.wanted)) {
    throw new RangeError(`a grant needs 0 < min <= wanted (got min ${input.min}, wanted ${input.wanted})`);
  }
  const now = deps.now();
  const found = await keyFacts(deps, input.api_key_hash);
  const refused = keyRefusal(found, now);
  if (refused || !found) return { granted: false, refusal: refused ?? refusal('key_unknown') };
  deps.keys.noteUse(input.api_key_hash, now);
  const key = found.key;
  const actor = { kind: 'tenant' as const, key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
  const [guardrails, workspace] = await Promise.all([
    deps.guardrails.applicable(deps.db, actor),
    deps.workspaceRouting.of(deps.db, key.organization_id, key.workspace_id),
  ]);
  if (!workspace) return { granted: false, refusal: refusal('key_deleted') };
  const checks = limitChecks(key, guardrails, workspace, input.paid, now);
  if (checks.length === 0) throw new RangeError('no limit applies to this key: there is nothing to lease');
  const held = await hold(deps, key, checks, { min: input.min, wanted: input.wanted }, now);
  if (!held.held) return { granted: false, refusal: holdRefusal(checks, held.remaining, held.exact, input.min, now) };
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
