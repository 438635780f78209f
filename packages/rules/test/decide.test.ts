// The rules alone, without a server: each rule of docs/routing.md in its order, given the figures
// the server (or a decider) would read, and what the trace holds. The server's answers for the
// same rules are tested through routing.authorize (apps/api/test/routing/routing.test.ts).
import { describe, expect, it } from 'vitest';
import {
  type Answers,
  type DecisionKey,
  type DecisionRequest,
  decideWith,
  decimalLess,
  type FreeMinute,
  type HoldAnswer,
  type LimitCheck,
  type Need,
  type Outcome,
  type PolicyCredential,
  type PolicyGuardrail,
  type LimitedGuardrail,
  REFUSAL_ORDER,
} from '../src/index.js';

// A Wednesday, 10:00 UTC: 14 h to midnight, 4 days 14 h to Monday, 20 days 14 h to April.
const NOW = new Date('2026-03-11T10:00:00.000Z');
const TO_MIDNIGHT = 14 * 3600;
const TO_MONTH_END = 20 * 86_400 + TO_MIDNIGHT;

const KEY: DecisionKey = {
  id: 'key-1',
  hash: 'hash-1',
  label: 'sk-sy-v1-abc...xyz',
  organization_id: 'org-1',
  workspace_id: 'ws-1',
  creator_user_id: 'user-1',
  disabled: false,
  deleted_at: null,
  expires_at: null,
  free_model_daily_limit: 50,
  limit: '10',
  limit_reset: 'daily',
  include_byok_in_limit: false,
  minted_by_key_id: null,
};

const GUARDRAIL: PolicyGuardrail & LimitedGuardrail = {
  id: 'guard-1',
  allowed_models: null,
  ignored_models: null,
  allowed_providers: null,
  ignored_providers: null,
  allowed_data_regions: null,
  enforce_zdr: false,
  enforce_zdr_anthropic: null,
  enforce_zdr_openai: null,
  enforce_zdr_google: null,
  enforce_zdr_xai: null,
  enforce_zdr_other: null,
  limit_usd: '5',
  reset_interval: 'monthly',
  include_byok_in_budgets: false,
  is_default: false,
};

const CREDENTIAL: PolicyCredential = {
  id: 'cred-1',
  provider: 'azure',
  disabled: false,
  deleted_at: null,
  secret_ciphertext: 'v1.sealed',
  allowed_models: null,
  allowed_user_ids: null,
  allowed_api_key_hashes: null,
  is_fallback: false,
  is_byok_only: false,
  is_required: false,
  sort_order: 0,
  declared_zdr: null,
};

const MINUTE: FreeMinute = {
  allowed: true,
  counted: true,
  limit: 20,
  remaining: 19,
  resets_at: new Date(NOW.getTime() + 60_000),
  retry_after_s: null,
  source: 'default',
};

/** What a world answers: every figure a decision may ask for, each changeable by a case. */
interface World {
  key: Answers['key'];
  model: Answers['model'];
  policy: Answers['policy'];
  free_usage: number;
  free_minute: FreeMinute;
  /** What is left of each limit, by check name (absent: none). */
  left: Record<string, number>;
  /** The statement's exact text of what is left, when a hold is refused. */
  exact?: Record<string, string>;
}

function world(): World {
  return {
    key: { key: { ...KEY }, organizationDisabled: false, secretExpiresAt: null },
    model: {
      resolved: { model: { id: 'openai/gpt-4o', lookup: 'openai/gpt-4o' }, variant: null },
      free: false,
      endpoints: [
        { provider_slug: 'openai', tag: 'openai', zdr: false, pricing: { prompt: '0.000005', completion: '0.000015' } },
        { provider_slug: 'azure', tag: 'azure', zdr: true, pricing: { prompt: '0.000004', completion: '0.000012' } },
      ],
    },
    policy: {
      guardrails: [{ ...GUARDRAIL }],
      workspace: { includeByokInBudgets: false, defaultProviderSort: null, budgets: [{ interval: 'weekly', limit: '100' }], credentials: [] },
    },
    free_usage: 0,
    free_minute: { ...MINUTE },
    left: { key: 4, 'guardrail:guard-1': 3, 'budget:weekly': 60, credits: 20 },
  };
}

/** Decides in `w`, noting each need in the order asked. */
function run(w: World, request: Partial<DecisionRequest> = {}): { outcome: Outcome; asked: Need['need'][]; checks: readonly LimitCheck[] } {
  const asked: Need['need'][] = [];
  let checks: readonly LimitCheck[] = [];
  const answer = (need: Need): Answers[Need['need']] => {
    asked.push(need.need);
    switch (need.need) {
      case 'key':
        return w.key;
      case 'model':
        return w.model;
      case 'policy':
        return w.policy;
      case 'free_usage':
        return w.free_usage;
      case 'free_minute':
        return w.free_minute;
      case 'spend':
        checks = need.checks;
        return new Map(Object.entries(w.left));
      case 'hold': {
        // As routing_reserve() does: held when every check has at least the amount left.
        checks = need.checks;
        const exact = new Map(Object.entries(w.left).map(([name, left]) => [name, w.exact?.[name] ?? String(left)]));
        const short = need.checks.some((c) => exact.has(c.name) && decimalLess(exact.get(c.name)!, String(need.amount)));
        const held: HoldAnswer = short
          ? { held: false, remaining: new Map(Object.entries(w.left)), exact }
          : { held: true, reservationId: 'res-1', remaining: new Map(Object.entries(w.left).map(([name, left]) => [name, left - need.amount])) };
        return held;
      }
    }
  };
  const outcome = decideWith({ model: 'openai/gpt-4o', estimated_cost: 0, now: NOW, explain: true, ...request }, answer);
  return { outcome, asked, checks };
}

type Case = {
  code: (typeof REFUSAL_ORDER)[number] | 'limits_unavailable';
  status: number;
  retry: number | null;
  /** The world and request that make this rule, and no earlier one, refuse. */
  given: (w: World) => Partial<DecisionRequest> | undefined;
  /** The needs asked, in order. */
  asked: Need['need'][];
  /** The message, where the case pins it. */
  message?: string;
};

const BEFORE_SPEND: Need['need'][] = ['key', 'model', 'policy'];
const FREE: Need['need'][] = ['key', 'model', 'policy', 'free_usage', 'free_minute'];
const makeFree = (w: World) => {
  w.model = {
    ...w.model!,
    resolved: { model: { id: 'meta/llama', lookup: 'meta/llama' }, variant: { id: 'meta/llama:free', lookup: 'meta/llama:free' } },
    free: true,
  };
};

// Rules 1-15 in docs/routing.md's order, then the state limits_unavailable (answered at rule 11).
const CASES: Case[] = [
  {
    code: 'key_unknown',
    status: 401,
    retry: null,
    given: (w) => void (w.key = null),
    asked: ['key'],
    message: 'This API key is not known. Check the key, or create one.',
  },
  {
    code: 'key_deleted',
    status: 401,
    retry: null,
    // A deleted key is disabled too (DELETE /keys/{hash} sets both): it is answered as deleted.
    given: (w) => void Object.assign(w.key!.key, { deleted_at: new Date('2026-03-01T00:00:00Z'), disabled: true }),
    asked: ['key'],
  },
  { code: 'key_disabled', status: 401, retry: null, given: (w) => void (w.key!.key.disabled = true), asked: ['key'] },
  {
    code: 'key_expired',
    status: 401,
    retry: null,
    given: (w) => void (w.key!.key.expires_at = new Date('2026-03-11T09:59:59.000Z')),
    asked: ['key'],
    message: 'This API key expired at 2026-03-11T09:59:59.000Z. Create a new one.',
  },
  { code: 'organization_disabled', status: 401, retry: null, given: (w) => void (w.key!.organizationDisabled = true), asked: ['key'] },
  {
    code: 'model_not_found',
    status: 404,
    retry: null,
    given: (w) => {
      w.model = null;
      return { model: 'nobody/nothing' };
    },
    asked: ['key', 'model'],
    message: 'Model nobody/nothing is not in the catalog. List the models with GET /api/v1/models.',
  },
  {
    code: 'model_not_allowed',
    status: 403,
    retry: null,
    given: (w) => void (w.policy.guardrails[0]!.allowed_models = ['anthropic/claude-3']),
    asked: BEFORE_SPEND,
    message: 'Model openai/gpt-4o is not allowed by guardrail guard-1. An organization admin can change its allowed_models and ignored_models.',
  },
  {
    code: 'region_not_allowed',
    status: 403,
    retry: null,
    given: (w) => {
      w.policy.guardrails[0]!.allowed_data_regions = ['europe'];
      return { region: 'us' };
    },
    asked: BEFORE_SPEND,
  },
  {
    code: 'no_endpoint',
    status: 403,
    retry: null,
    given: () => ({ provider: { only: ['anthropic'] } }),
    asked: BEFORE_SPEND,
    message:
      "No provider endpoint of openai/gpt-4o may serve this request: the provider filters leave none. Relax the request's provider preferences, or ask an admin to change the guardrails' provider lists and ZDR settings.",
  },
  {
    code: 'free_model_daily',
    status: 429,
    retry: TO_MIDNIGHT,
    given: (w) => {
      makeFree(w);
      w.free_usage = 50;
      return {};
    },
    asked: ['key', 'model', 'policy', 'free_usage'],
  },
  {
    code: 'free_model_per_minute',
    status: 429,
    retry: 42,
    given: (w) => {
      makeFree(w);
      w.free_minute = { ...MINUTE, allowed: false, remaining: 0, retry_after_s: 42 };
      return {};
    },
    asked: FREE,
    message:
      "This key has made its 20 free-model requests of this minute. Try again in 42 s, use a paid model, or ask the platform's operator to raise the organization's free_model_requests_per_minute setting (unset: the platform's FREE_MODEL_REQUESTS_PER_MINUTE).",
  },
  {
    code: 'key_limit',
    status: 403,
    retry: TO_MIDNIGHT,
    given: (w) => void (w.left.key = 0),
    asked: [...BEFORE_SPEND, 'spend'],
    message: "This key's daily spending limit of 10 USD is reached (0.000000 USD left). An organization admin can raise it (PATCH /api/v1/keys/{hash}, limit).",
  },
  { code: 'guardrail_limit', status: 403, retry: TO_MONTH_END, given: (w) => void (w.left['guardrail:guard-1'] = -0.5), asked: [...BEFORE_SPEND, 'spend'] },
  {
    code: 'budget_exhausted',
    status: 402,
    retry: 4 * 86_400 + TO_MIDNIGHT,
    given: (w) => void (w.left['budget:weekly'] = 0),
    asked: [...BEFORE_SPEND, 'spend'],
  },
  {
    code: 'credits_exhausted',
    status: 402,
    retry: null,
    given: (w) => void (w.left.credits = 0),
    asked: [...BEFORE_SPEND, 'spend'],
    message: "The organization's credit balance is exhausted (0.000000 USD available). Add credits to use paid models; free models still work.",
  },
  {
    code: 'limits_unavailable',
    status: 503,
    retry: 5,
    given: (w) => {
      makeFree(w);
      w.free_minute = { unavailable: true, retry_after_s: 5 };
      return {};
    },
    asked: FREE,
    message: 'This request cannot be checked against its limits right now (the counter store cannot be reached). Try again in 5 s.',
  },
];

describe('the routing rules', () => {
  it('cover every refusal, in the documented order', () => {
    expect(CASES.map((c) => c.code)).toEqual([...REFUSAL_ORDER, 'limits_unavailable']);
  });

  it.each(CASES)('$code: $status, asking only for what the rules before it need', (c) => {
    const w = world();
    const request = c.given(w) ?? {};
    const { outcome, asked } = run(w, request);
    expect(outcome.allowed).toBe(false);
    if (outcome.allowed) return;
    expect(outcome.refusal).toMatchObject({ code: c.code, status: c.status, retry_after_s: c.retry });
    if (c.message) expect(outcome.refusal.message).toBe(c.message);
    expect(asked).toEqual(c.asked);
    // The trace ends with the decision, naming the first refusal.
    expect(outcome.trace?.at(-1)).toEqual({ rule: 'decision', said: `refused: ${c.code} (${c.status})` });
    expect(outcome.keyValid).toBe(!c.asked.every((n) => n === 'key'));
  });

  it('names the first of several refusals', () => {
    const w = world();
    w.left.key = 0;
    w.left.credits = 0;
    w.free_usage = 99;
    const { outcome } = run(w, { provider: { only: ['nobody'] } });
    expect(!outcome.allowed && outcome.refusal.code).toBe('no_endpoint');
  });

  it('refuses a key whose rotated-away secret has passed its grace period, and a key whose workspace is gone', () => {
    const rotated = world();
    rotated.key!.secretExpiresAt = new Date('2026-03-11T09:00:00.000Z');
    const r = run(rotated).outcome;
    expect(!r.allowed && r.refusal.message).toBe('This API key expired at 2026-03-11T09:00:00.000Z. Create a new one.');
    const gone = world();
    gone.policy = { ...gone.policy, workspace: null };
    const g = run(gone);
    expect(!g.outcome.allowed && g.outcome.refusal.code).toBe('key_deleted');
    expect(g.outcome.keyValid).toBe(true);
  });

  it("refuses by a minted key's maker, and skips a check with no figure", () => {
    const w = world();
    w.key!.key.minted_by_key_id = 'maker-1';
    w.left.makers = 0;
    const { outcome } = run(w);
    expect(!outcome.allowed && outcome.refusal).toMatchObject({ code: 'key_limit', retry_after_s: null });
    expect(!outcome.allowed && outcome.refusal.message).toMatch(/^The spending limit of the key that minted this key is reached/);
    delete w.left.makers;
    expect(run(w).outcome.allowed).toBe(true);
  });
});

describe('an allowed decision', () => {
  it('answers the routes, what is left of every limit, and a trace of every rule in order', () => {
    const w = world();
    w.policy.workspace = { ...w.policy.workspace!, credentials: [CREDENTIAL], defaultProviderSort: 'price' };
    const { outcome, checks } = run(w, { provider: { order: ['azure'] } });
    expect(checks.map((c) => c.name)).toEqual(['key', 'guardrail:guard-1', 'budget:weekly', 'credits']);
    expect(outcome).toMatchObject({ allowed: true, reservationId: null, model: 'openai/gpt-4o', keyValid: true });
    if (!outcome.allowed) return;
    expect(outcome.routes.map((r) => [r.provider, r.credential?.id ?? null])).toEqual([
      ['azure', 'cred-1'],
      ['azure', null],
      ['openai', null],
    ]);
    expect(outcome.remaining).toEqual([
      { limit: 'key', remaining: 4, resets_at: '2026-03-12T00:00:00.000Z' },
      { limit: 'guardrail:guard-1', remaining: 3, resets_at: '2026-04-01T00:00:00.000Z' },
      { limit: 'budget:weekly', remaining: 60, resets_at: '2026-03-16T00:00:00.000Z' },
      { limit: 'credits', remaining: 20, resets_at: null },
    ]);
    expect(outcome.trace).toEqual([
      { rule: 'key', said: 'enabled, unexpired, organization enabled: sk-sy-v1-abc...xyz of org-1, workspace ws-1' },
      { rule: 'model', said: 'openai/gpt-4o is openai/gpt-4o' },
      { rule: 'guardrails', said: 'guard-1' },
      { rule: 'policy', said: 'model, region (global), providers and ZDR allow 3 route(s): azure (BYOK), azure, openai' },
      { rule: 'free:daily', said: 'not a free model' },
      { rule: 'free:minute', said: 'not a free model' },
      { rule: 'key', said: '4 USD left, more than 0 needed (daily)' },
      { rule: 'guardrail:guard-1', said: '3 USD left, more than 0 needed (monthly)' },
      { rule: 'budget:weekly', said: '60 USD left, more than 0 needed (weekly)' },
      { rule: 'credits', said: '20 USD left, more than 0 needed (lifetime)' },
      { rule: 'decision', said: 'allowed; nothing held' },
    ]);
  });

  it('builds no trace unless asked to explain', () => {
    expect(run(world(), { explain: false }).outcome.trace).toBeNull();
    const refused = world();
    refused.key = null;
    expect(run(refused, { explain: undefined }).outcome.trace).toBeNull();
  });

  it('counts a free model against its daily and minute quotas, and not against the credit balance', () => {
    const w = world();
    makeFree(w);
    w.free_usage = 10;
    const { outcome, checks, asked } = run(w);
    expect(asked).toEqual([...FREE, 'spend']);
    expect(checks.map((c) => c.name)).not.toContain('credits');
    expect(outcome.allowed && outcome.model).toBe('meta/llama:free');
    expect(outcome.allowed && outcome.remaining.slice(0, 2)).toEqual([
      { limit: 'free:daily', remaining: 39, resets_at: '2026-03-12T00:00:00.000Z' },
      { limit: 'free:minute', remaining: 19, resets_at: '2026-03-11T10:01:00.000Z' },
    ]);
    expect(outcome.trace?.slice(4, 6)).toEqual([
      { rule: 'free:daily', said: '10 of 50 free-model requests made today' },
      {
        rule: 'free:minute',
        said: "1 of 20 free-model requests of this key's minute made (until 2026-03-11T10:01:00.000Z; the limit from FREE_MODEL_REQUESTS_PER_MINUTE)",
      },
    ]);
    // The store away, failing open: allowed, uncounted, no free:minute entry.
    w.free_minute = { ...MINUTE, counted: false };
    const open = run(w).outcome;
    expect(open.allowed && open.remaining.map((r) => r.limit)).not.toContain('free:minute');
    expect(open.trace?.[5]?.said).toBe('the counter store cannot be reached: allowed, not counted (COUNTER_STORE_FAILURE_FREE_MODELS=open)');
  });

  it('holds an estimated cost in one hold, and answers its reservation', () => {
    const { outcome, asked } = run(world(), { estimated_cost: 0.5 });
    expect(asked).toEqual([...BEFORE_SPEND, 'hold']);
    expect(outcome).toMatchObject({ allowed: true, reservationId: 'res-1' });
    expect(outcome.trace?.[6]).toEqual({ rule: 'key', said: '3.5 USD left after holding, 0.5 needed (daily)' });
    expect(outcome.trace?.at(-1)).toEqual({ rule: 'decision', said: 'allowed; 0.5 USD held as res-1' });
  });

  it('refuses a hold by the exact remaining amount, not its rounding', () => {
    const w = world();
    // As a number it is 0.02, enough; as PostgreSQL's numeric it is just short.
    w.left.key = 0.02;
    w.exact = { key: '0.019999999999999999999' };
    const { outcome } = run(w, { estimated_cost: 0.02 });
    expect(!outcome.allowed && outcome.refusal.code).toBe('key_limit');
    expect(outcome.trace?.[6]).toEqual({ rule: 'key', said: '0.02 USD left, 0.02 needed (daily)' });
  });

  it('holds nothing and checks nothing when no limit applies', () => {
    const w = world();
    makeFree(w);
    w.key!.key.limit = null;
    w.policy = { guardrails: [], workspace: { ...w.policy.workspace!, budgets: [] } };
    const { outcome, asked } = run(w, { estimated_cost: 1 });
    expect(asked.at(-1)).toBe('spend');
    expect(outcome.trace?.slice(-2)).toEqual([
      { rule: 'limits', said: 'none applies' },
      { rule: 'decision', said: 'allowed; nothing held' },
    ]);
  });
});

describe('decimalLess', () => {
  it.each([
    ['0.019999999999999999999', '0.02', true],
    ['0.02', '0.020000000000', false],
    ['-0.5', '0', true],
    ['0', '1e-7', true],
    ['0.0000001', '1e-7', false],
    ['12.5', '12.499999', false],
    ['5000000000000000000000', '5e+21', false],
    ['4999999999999999999999.9', '5e+21', true],
  ])('%s < %s: %s', (a, b, less) => {
    expect(decimalLess(a, b)).toBe(less);
  });
});
