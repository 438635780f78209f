// The spend limits that apply to a request, narrowest first (rules 12-15), and which of them a
// request is short of. The server reads what is left of each (routing_spend(), or routing_reserve()
// when it holds a cost) and the rules decide; the bench's database floor builds the same checks
// (apps/api's testing/floor-statements.ts).
import { refusal, type Refusal } from './refusals.js';
import { type Interval, secondsUntil, sinceOf, windowEnd } from './windows.js';

/** One limit to check, as routing_spend() and routing_reserve() read it. */
export interface LimitCheck {
  /** key, makers, budget:<interval>, guardrail:<id>, credits */
  name: string;
  /**
   * keys: the keys in `keys` and every key minted from them; makers: the limits of the makers above
   * the one key in `keys` (its remaining amount is the least of theirs; none when none has a limit).
   */
  scope: 'keys' | 'makers' | 'workspace' | 'guardrail' | 'credits';
  keys?: string[];
  workspace_id?: string;
  guardrail_id?: string;
  is_default?: boolean;
  /** The window's first UTC day (YYYY-MM-DD); null: lifetime. */
  since: string | null;
  byok: boolean;
  /** USD; unused for credits (the balance is the limit). */
  limit: string;
  /** For messages and `resets_at`. */
  interval: Interval;
}

/** What the limits need of a key (an api_keys row fits). */
export interface LimitedKey {
  id: string;
  workspace_id: string;
  /** USD (a decimal), or null: no limit of its own. */
  limit: { toString(): string } | null;
  limit_reset: Exclude<Interval, 'lifetime'> | null;
  include_byok_in_limit: boolean;
  minted_by_key_id: string | null;
}

/** What the limits need of a guardrail that applies. */
export interface LimitedGuardrail {
  id: string;
  limit_usd: string;
  reset_interval: Exclude<Interval, 'lifetime'> | null;
  include_byok_in_budgets: boolean;
  is_default: boolean;
}

/** What the limits need of the key's workspace: its budgets, and whether BYOK spend counts against them. */
export interface LimitedWorkspace {
  includeByokInBudgets: boolean;
  budgets: readonly { interval: Interval; limit: string }[];
}

/**
 * The spend limits that apply, narrowest first: the key's (its spend and that of the keys minted
 * from it), its makers' (a minted key spends from every limit above it), each guardrail's, each
 * budget, the credit balance (a paid model's only).
 */
export function limitChecks(key: LimitedKey, guardrails: readonly LimitedGuardrail[], workspace: LimitedWorkspace, paid: boolean, now: Date): LimitCheck[] {
  const checks: LimitCheck[] = [];
  if (key.limit !== null) {
    const interval: Interval = key.limit_reset ?? 'lifetime';
    checks.push({
      name: 'key',
      scope: 'keys',
      keys: [key.id],
      since: sinceOf(interval, now),
      byok: key.include_byok_in_limit,
      limit: key.limit.toString(),
      interval,
    });
  }
  if (key.minted_by_key_id !== null) {
    // The makers' own limits and windows are read with the spend (routing_spend, scope "makers").
    checks.push({ name: 'makers', scope: 'makers', keys: [key.id], since: null, byok: false, limit: '0', interval: 'lifetime' });
  }
  for (const g of guardrails) {
    if (g.reset_interval === null) continue;
    checks.push({
      name: `guardrail:${g.id}`,
      scope: 'guardrail',
      guardrail_id: g.id,
      workspace_id: key.workspace_id,
      is_default: g.is_default,
      since: sinceOf(g.reset_interval, now),
      byok: g.include_byok_in_budgets,
      limit: g.limit_usd,
      interval: g.reset_interval,
    });
  }
  for (const b of workspace.budgets) {
    checks.push({
      name: `budget:${b.interval}`,
      scope: 'workspace',
      workspace_id: key.workspace_id,
      since: sinceOf(b.interval, now),
      byok: workspace.includeByokInBudgets,
      limit: b.limit,
      interval: b.interval,
    });
  }
  if (paid) checks.push({ name: 'credits', scope: 'credits', since: null, byok: false, limit: '0', interval: 'lifetime' });
  return checks;
}

/**
 * The refusal of the first check (in the order given) that is short: holding nothing, a check is
 * short once nothing is left; holding c, unless c is left (`short` may decide instead, exactly).
 * A check absent from `remaining` limits nothing (a minted key none of whose makers has a limit).
 */
export function spendRefusal(
  checks: readonly LimitCheck[],
  remaining: ReadonlyMap<string, number>,
  needed: number,
  now: Date,
  short: (check: LimitCheck, left: number) => boolean = (_, left) => (needed > 0 ? left < needed : left <= 0),
): Refusal | null {
  for (const check of checks) {
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
 * Why a hold of at least `min` was not granted: the first check whose exact remaining amount (the
 * statement's decimal text, `exact`) is less than `min`; the credit balance when none is (what the
 * statement saw changed between its reads, which its lock rules out, but the answer stays a refusal).
 */
export function holdRefusal(
  checks: readonly LimitCheck[],
  remaining: ReadonlyMap<string, number>,
  exact: ReadonlyMap<string | null, string>,
  min: number,
  now: Date,
): Refusal {
  const needed = String(min);
  const why = spendRefusal(checks, remaining, min, now, (check) => decimalLess(exact.get(check.name) ?? '0', needed));
  return why ?? refusal('credits_exhausted', { remaining: '0' });
}

/** A decimal as an integer and its power of ten ("-1.25e-3" is -125 × 10^-5). */
function decimalParts(text: string): { digits: bigint; exponent: number } {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text.trim());
  if (!match) throw new RangeError(`not a decimal: ${text}`);
  const [, sign, whole = '', fraction = '', power = '0'] = match;
  const body = whole + fraction;
  const digits = BigInt(body === '' ? '0' : body) * (sign === '-' ? -1n : 1n);
  return { digits, exponent: Number(power) - fraction.length };
}

/** a < b, exactly, for decimal texts (PostgreSQL's numeric, or a JavaScript number's String()). */
export function decimalLess(a: string, b: string): boolean {
  const x = decimalParts(a);
  const y = decimalParts(b);
  const exponent = Math.min(x.exponent, y.exponent);
  return x.digits * 10n ** BigInt(x.exponent - exponent) < y.digits * 10n ** BigInt(y.exponent - exponent);
}
