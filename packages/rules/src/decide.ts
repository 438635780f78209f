// The routing decision (docs/routing.md, "The rules, in order"), as one pure function of what the
// caller reads for it: `decide(request)` is a generator that yields each figure it needs, in the
// rules' order, when it needs it (so nothing is read for a rule a decision never reaches), and
// returns the outcome with its trace. It reads no clock (the request carries `now`), does no I/O
// and keeps nothing between calls, so the server's routing.authorize (answering from its caches
// and the database) and a decider in the routing service's own process (answering from its
// snapshot and leases) run the same rules. Two of the figures are also acts, which the caller
// performs: `free_minute` counts one free-model request (given back by the caller when the
// outcome is a refusal), and `hold` reserves the estimated cost.
import { type LimitCheck, type LimitedGuardrail, type LimitedKey, type LimitedWorkspace, holdRefusal, limitChecks, spendRefusal } from './limits.js';
import {
  evaluatePolicy,
  type PolicyCredential,
  type PolicyEndpoint,
  type PolicyGuardrail,
  type PolicyModel,
  type ProviderPreferences,
  type Region,
  type Route,
} from './policy.js';
import { refusal, type Refusal } from './refusals.js';
import { resetsAtOf, secondsUntil, windowEnd } from './windows.js';

/** What is asked, with the instant it is decided at. */
export interface DecisionRequest {
  /** The model as asked: author/slug, a :variant, or an alias. */
  model: string;
  /** USD to hold until settled; 0 holds nothing. */
  estimated_cost: number;
  region?: Region | undefined;
  provider?: ProviderPreferences | undefined;
  /** true: the outcome carries the trace (what each rule said); otherwise no trace text is built. */
  explain?: boolean | undefined;
  now: Date;
}

/** A tenant key as the rules read it (an api_keys row fits). */
export interface DecisionKey extends LimitedKey {
  hash: string;
  label: string;
  organization_id: string;
  creator_user_id: string;
  disabled: boolean;
  deleted_at: Date | null;
  expires_at: Date | null;
  free_model_daily_limit: number;
}

/** The tenant key a hash names, or null when none does (a platform key's hash is not a tenant key). */
export interface KeyFacts {
  key: DecisionKey;
  organizationDisabled: boolean;
  /** When the secret the hash is of stops working: a secret rotated away from ends with its grace period; null: it does not. */
  secretExpiresAt: Date | null;
}

/** The model the request names, resolved in the catalog, whether it costs nothing, and its catalog endpoints. */
export interface ModelFacts {
  resolved: PolicyModel;
  free: boolean;
  endpoints: readonly PolicyEndpoint[];
}

/** The key's workspace as the rules read it; null when it is gone (deleted). */
export interface DecisionWorkspace<C extends PolicyCredential = PolicyCredential> extends LimitedWorkspace {
  defaultProviderSort: string | null;
  /** The workspace's enabled BYOK credentials and its organization's for every workspace. */
  credentials: readonly C[];
}

/** The guardrails that apply to the key, and its workspace. */
export interface PolicyRows<C extends PolicyCredential = PolicyCredential> {
  guardrails: readonly (PolicyGuardrail & LimitedGuardrail)[];
  workspace: DecisionWorkspace<C> | null;
}

/** The free-model quota per minute, counted for this request; or the counter store away while the quota fails closed. */
export type FreeMinute =
  | { unavailable: true; retry_after_s: number }
  | {
      unavailable?: undefined;
      /** Within the limit (false: refused, and nothing counted). */
      allowed: boolean;
      /** false: the store could not be reached and the quota fails open: allowed, nothing counted. */
      counted: boolean;
      limit: number;
      /** Left in the key's minute after this request. */
      remaining: number;
      resets_at: Date;
      retry_after_s: number | null;
      /** Where the limit came from: the organization's settings row, or the server's default. */
      source: 'organization' | 'default';
    };

/** A reservation of the estimated cost against every check, and what each check has left. */
export type HoldAnswer =
  | { held: true; reservationId: string; remaining: ReadonlyMap<string, number> }
  | {
      held: false;
      remaining: ReadonlyMap<string, number>;
      /** Each check's remaining amount as the statement's exact decimal text. */
      exact: ReadonlyMap<string | null, string>;
    };

/** What the rules ask for, in the order they ask (each at most once, and only when a rule needs it). */
export type Need =
  | { need: 'key' }
  | { need: 'model' }
  | { need: 'policy'; key: DecisionKey }
  | { need: 'free_usage'; key: DecisionKey }
  | { need: 'free_minute'; key: DecisionKey }
  | { need: 'spend'; key: DecisionKey; checks: readonly LimitCheck[] }
  | { need: 'hold'; key: DecisionKey; checks: readonly LimitCheck[]; amount: number };

/** The answer to each need. */
export interface Answers<C extends PolicyCredential = PolicyCredential> {
  key: KeyFacts | null;
  model: ModelFacts | null;
  policy: PolicyRows<C>;
  /** Free-model requests the key made today (UTC). */
  free_usage: number;
  free_minute: FreeMinute;
  /** What is left of each check (absent: nothing limits it). */
  spend: ReadonlyMap<string, number>;
  hold: HoldAnswer;
}

/** What one rule said, for `explain`. */
export interface TraceEntry {
  rule: string;
  said: string;
}

/** A limit that applied, with what is left of it after this request and when its window starts again. */
export interface RemainingEntry {
  limit: string;
  remaining: number;
  resets_at: string | null;
}

export type Outcome<C extends PolicyCredential = PolicyCredential> = (
  | { allowed: false; refusal: Refusal }
  | {
      allowed: true;
      /** The reservation the `hold` answer made, or null when nothing was held. */
      reservationId: string | null;
      /** The canonical model (the variant's id when one was named). */
      model: string;
      /** In the order to try them; a credential's secret is still sealed. */
      routes: Route<C>[];
      remaining: RemainingEntry[];
    }
) & {
  /** The key passed rules 1-5 (the caller may note its use). */
  keyValid: boolean;
  /** What each rule said, in order; null unless the request asked to explain. */
  trace: TraceEntry[] | null;
};

/** Rules 1-5: the key and its organization, as the API's authentication decides them. */
export function keyRefusal(found: KeyFacts | null, now: Date): Refusal | null {
  if (!found) return refusal('key_unknown');
  const { key } = found;
  if (key.deleted_at) return refusal('key_deleted');
  if (key.disabled) return refusal('key_disabled');
  if (key.expires_at && key.expires_at.getTime() <= now.getTime()) return refusal('key_expired', { at: key.expires_at.toISOString() });
  // A secret rotated away: expired as a key is, at its grace period's end.
  if (found.secretExpiresAt !== null && found.secretExpiresAt.getTime() <= now.getTime()) {
    return refusal('key_expired', { at: found.secretExpiresAt.toISOString() });
  }
  if (found.organizationDisabled) return refusal('organization_disabled');
  return null;
}

/**
 * The decision, rule by rule: yields each Need and takes its Answer (`Answers[need]`), returns the
 * Outcome. The first rule that refuses is the answer.
 */
export function* decide<C extends PolicyCredential = PolicyCredential>(request: DecisionRequest): Generator<Need, Outcome<C>, unknown> {
  const { now } = request;
  // Its text is made only when asked for (most decisions are not explained).
  const trace: TraceEntry[] | null = request.explain ? [] : null;
  const said = (rule: string, what: () => string) => void trace?.push({ rule, said: what() });
  let keyValid = false;
  const refused = (r: Refusal): Outcome<C> => {
    said('decision', () => `refused: ${r.code} (${r.status})`);
    return { allowed: false, refusal: r, keyValid, trace };
  };

  const found = (yield { need: 'key' }) as Answers['key'];
  const keyRefused = keyRefusal(found, now);
  if (keyRefused || !found) return refused(keyRefused ?? refusal('key_unknown'));
  const { key } = found;
  keyValid = true;
  said('key', () => `enabled, unexpired, organization enabled: ${key.label} of ${key.organization_id}, workspace ${key.workspace_id}`);

  const model = (yield { need: 'model' }) as Answers['model'];
  if (!model) return refused(refusal('model_not_found', { model: request.model }));
  const { resolved } = model;
  said('model', () => `${request.model} is ${resolved.variant?.id ?? resolved.model.id}`);

  const { guardrails, workspace } = (yield { need: 'policy', key }) as Answers<C>['policy'];
  // A key's workspace is live while the key is (a deleted workspace retires its keys).
  if (!workspace) return refused(refusal('key_deleted'));
  said('guardrails', () =>
    guardrails.length === 0 ? 'none applies' : guardrails.map((g) => `${g.id}${g.is_default ? ' (the workspace default)' : ''}`).join(', '),
  );

  const verdict = evaluatePolicy<C>({
    guardrails,
    model: resolved,
    route: {
      endpoints: model.endpoints,
      credentials: workspace.credentials,
      key: { hash: key.hash, userId: key.creator_user_id },
      region: request.region ?? 'global',
      preferences: request.provider ?? {},
      defaultSort: workspace.defaultProviderSort,
    },
  });
  if (verdict.refusal) return refused(verdict.refusal);
  said(
    'policy',
    () =>
      `model, region (${request.region ?? 'global'}), providers and ZDR allow ${verdict.routes.length} route(s): ${verdict.routes.map((r) => `${r.tag ?? r.provider}${r.credential ? ' (BYOK)' : ''}`).join(', ')}`,
  );

  const { free } = model;
  const remaining: RemainingEntry[] = [];
  if (free) {
    const used = (yield { need: 'free_usage', key }) as Answers['free_usage'];
    const tomorrow = windowEnd('daily', now);
    said('free:daily', () => `${used} of ${key.free_model_daily_limit} free-model requests made today`);
    if (used >= key.free_model_daily_limit) {
      return refused(refusal('free_model_daily', { limit: key.free_model_daily_limit }, secondsUntil(tomorrow, now)));
    }
    remaining.push({ limit: 'free:daily', remaining: key.free_model_daily_limit - used - 1, resets_at: tomorrow?.toISOString() ?? null });

    // Counted now (exact across replicas); the caller gives it back if a later rule refuses.
    const minute = (yield { need: 'free_minute', key }) as Answers['free_minute'];
    if (minute.unavailable) {
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
    // Uncounted (the store away, failing open): no count to report.
    if (minute.counted) remaining.push({ limit: 'free:minute', remaining: minute.remaining, resets_at: minute.resets_at.toISOString() });
  }

  if (!free) said('free:daily', () => 'not a free model');
  if (!free) said('free:minute', () => 'not a free model');
  const checks = limitChecks(key, guardrails, workspace, !free, now);
  const cost = request.estimated_cost;
  let reservationId: string | null = null;
  let left: ReadonlyMap<string, number>;
  if (cost > 0 && checks.length > 0) {
    const held = (yield { need: 'hold', key, checks, amount: cost }) as Answers['hold'];
    left = held.remaining;
    for (const check of checks)
      said(check.name, () => `${left.get(check.name)} USD left${held.held ? ' after holding' : ''}, ${cost} needed (${check.interval})`);
    if (!held.held) return refused(holdRefusal(checks, held.remaining, held.exact, cost, now));
    reservationId = held.reservationId;
  } else {
    left = (yield { need: 'spend', key, checks }) as Answers['spend'];
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
    reservationId,
    model: resolved.variant?.id ?? resolved.model.id,
    routes: verdict.routes,
    remaining,
    keyValid,
    trace,
  };
}

/**
 * Runs the decision with answers at hand (a snapshot in memory, a test's table): `answer` gives
 * each need's answer at once. A caller whose answers take I/O drives `decide` itself.
 */
export function decideWith<C extends PolicyCredential = PolicyCredential>(
  request: DecisionRequest,
  answer: (need: Need) => Answers<C>[Need['need']],
): Outcome<C> {
  const steps = decide<C>(request);
  let step = steps.next();
  while (!step.done) step = steps.next(answer(step.value));
  return step.value;
}
