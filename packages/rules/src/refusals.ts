// Every way routing.authorize refuses: a stable code, the status to answer the end user with, and a
// message that names the limit and how to change it. REFUSAL_ORDER is the fixed order in which they
// are checked: when several would refuse, the answer names the first (docs/routing.md).

export interface Refusal {
  status: 401 | 402 | 403 | 404 | 429 | 503;
  code: RefusalCode;
  message: string;
  retry_after_s: number | null;
}

type Details = Record<string, string | number>;

const REFUSALS = {
  key_unknown: [401, () => 'This API key is not known. Check the key, or create one.'],
  key_deleted: [401, () => 'This API key was deleted. Create a new one.'],
  key_disabled: [401, () => 'This API key is disabled. An organization admin can enable it again (PATCH /api/v1/keys/{hash}).'],
  key_expired: [401, (d) => `This API key expired at ${d.at}. Create a new one.`],
  organization_disabled: [401, () => "This key's organization is disabled. Contact the platform's support."],
  model_not_found: [404, (d) => `Model ${d.model} is not in the catalog. List the models with GET /api/v1/models.`],
  model_not_allowed: [
    403,
    (d) => `Model ${d.model} is not allowed by guardrail ${d.guardrail}. An organization admin can change its allowed_models and ignored_models.`,
  ],
  region_not_allowed: [
    403,
    (d) =>
      `Requests through the ${d.region} region are not allowed by guardrail ${d.guardrail} (allowed: ${d.allowed}). Use an allowed regional host, or ask an admin to change allowed_data_regions.`,
  ],
  no_endpoint: [
    403,
    (d) =>
      `No provider endpoint of ${d.model} may serve this request: ${d.why}. Relax the request's provider preferences, or ask an admin to change the guardrails' provider lists and ZDR settings.`,
  ],
  free_model_daily: [
    429,
    (d) =>
      `This key has made its ${d.limit} free-model requests of today (UTC). Try again after midnight UTC, use a paid model, or ask an admin to raise the key's free_model_daily_limit.`,
  ],
  free_model_per_minute: [
    429,
    (d) =>
      d.limit === 0
        ? `This organization allows no free-model requests (its ${d.setting} is 0). Use a paid model, or ask the platform's operator to raise it.`
        : `This key has made its ${d.limit} free-model requests of this minute. Try again in ${d.retry} s, use a paid model, or ask the platform's operator to raise the organization's ${d.setting}.`,
  ],
  key_limit: [
    403,
    (d) =>
      d.maker
        ? `The spending limit of the key that minted this key is reached (${d.remaining} USD left): a key minted through an authorization code spends from its maker's limit. An organization admin can raise that limit (PATCH /api/v1/keys/{hash}, limit).`
        : `This key's ${d.window} spending limit of ${d.limit} USD is reached (${d.remaining} USD left). An organization admin can raise it (PATCH /api/v1/keys/{hash}, limit).`,
  ],
  guardrail_limit: [
    403,
    (d) =>
      `Guardrail ${d.guardrail}'s ${d.window} spending limit of ${d.limit} USD is reached (${d.remaining} USD left). An organization admin can raise its limit_usd.`,
  ],
  budget_exhausted: [
    402,
    (d) =>
      `The workspace's ${d.window} budget of ${d.limit} USD is spent (${d.remaining} USD left). An organization admin can raise it (PUT /api/v1/workspaces/{id}/budgets/${d.window}).`,
  ],
  credits_exhausted: [
    402,
    (d) => `The organization's credit balance is exhausted (${d.remaining} USD available). Add credits to use paid models; free models still work.`,
  ],
  // Not a rule but a state: what a limit needs to decide cannot be reached (the counter store), so
  // the decision is refused where that limit is checked, until it can be. Not in REFUSAL_ORDER.
  limits_unavailable: [503, (d) => `This request cannot be checked against its limits right now (${d.what} cannot be reached). Try again in ${d.retry} s.`],
} as const satisfies Record<string, readonly [Refusal['status'], (details: Details) => string]>;

export type RefusalCode = keyof typeof REFUSALS;

/** The order of the checks: the first that refuses is the answer (limits_unavailable is a state, answered where a limit cannot be checked). */
export const REFUSAL_ORDER = (Object.keys(REFUSALS) as RefusalCode[]).filter((code) => code !== 'limits_unavailable');

export function refusal(code: RefusalCode, details: Details = {}, retryAfterS: number | null = null): Refusal {
  const [status, message] = REFUSALS[code];
  return { status, code, message: message(details), retry_after_s: retryAfterS };
}
