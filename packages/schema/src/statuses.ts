// Which error statuses each REST operation can answer, and why: contract data, declared once per
// operation (in the procedure's meta, or in its RawOperation), and read from there by both faces
// (which answer only declared statuses, through declaredStatus), the OpenAPI document, the status
// table of docs/api.md and the hostile-input property test (all through the API's
// http/operations.ts), so that none can disagree with another.
import type { ErrorStatus } from './common.js';

/** Each error status an operation can answer, with the reason it would. */
export type Statuses = Partial<Record<ErrorStatus, string>>;

/** What an operation declares about its answers. */
export interface OperationStatuses {
  /** Every error status it can answer, and why. */
  statuses: Statuses;
  /** The statuses its endpoint in the spec lists (401 applies to every endpoint: Authentication). */
  listed: readonly ErrorStatus[];
}

/** Reasons several operations share. */
export const WHY = {
  unauthenticated: 'no Authorization header, or an unknown, disabled or expired key',
  managementOnly:
    "a regular key: management key required (the spec's Authentication, rule 4); a scoped management key without the operation's scope (docs/scopes.md); an access token of the token exchange (it calls no management operation)",
  /** For operations open to every key that a scope narrows (docs/scopes.md's reach table). */
  scopedKey: "a scoped management key without the operation's scope (docs/scopes.md)",
  /** For operations that make, change, rotate, disable or delete authority (docs/scopes.md, "The ceiling"). */
  ceiling: 'a scoped management key acting beyond its own scopes (docs/scopes.md, "The ceiling"; why in error.metadata.reason)',
  platformKey: "a platform key: it has no organization, and calls only the platform's operations",
  tenantKey: 'a key of an organization: platform key required (message "Only platform keys can perform this operation")',
  tooLongForNode: "URL and headers over 16 KB, refused by Node's HTTP parser before the operation runs",
  internal: 'an unexpected failure (logged with its cause)',
  databaseDown: 'the database is unreachable (docs/operations.md, "When the database goes away")',
  rateLimited: "the key's or its organization's API rate limit (docs/rate-limits.md), with Retry-After",
  invalidPage: 'offset or limit not an integer in range, given twice, or malformed',
  longId: 'an id over 200 characters',
  invalidBody: 'a body that is not a JSON object (application/json, UTF-8) or whose fields the schema refuses',
  unstorable: 'NUL or a lone surrogate in any value, nesting deeper than 64, a malformed percent-encoding',
  bodyTooLarge: 'a body over 1 MB (413 is not listed)',
  idempotencyKey: 'an Idempotency-Key that is malformed, or that was used in the last 24 hours with another request (docs/idempotency.md)',
  noWorkspace: "no workspace with that UUID or slug in the key's organization (deleted ones included)",
  /** For operations that do not list 404: a workspace_id that names nothing is input the operation will not take. */
  unknownWorkspace: "workspace_id naming no workspace of the key's organization (404 is not listed)",
  /** For operations that do not list 400: input that cannot name anything names nothing. */
  namesNothing: 'also for an id no record can have (too long, NUL, a lone surrogate, a malformed percent-encoding): 400 is not listed',
} as const;

/** The statuses every operation can answer, whatever it does, with the same reasons. */
export const COMMON: Statuses = { 401: WHY.unauthenticated, 431: WHY.tooLongForNode, 500: WHY.internal, 503: WHY.databaseDown };

/** The statuses every tenant operation can answer besides the common ones: the API's rate limits are for tenant keys. */
export const TENANT_COMMON: Statuses = { 429: WHY.rateLimited };

/** A reason of the operation's own for a common status comes first, then the common one. */
function withCommon(specific: Statuses): Statuses {
  const merged: Statuses = { ...COMMON, ...specific };
  const own = specific[503];
  if (own !== undefined && own !== COMMON[503]) merged[503] = `${own}; or ${COMMON[503]}`;
  return merged;
}

/**
 * An operation's statuses: its own, the common ones (401, 431, 500, 503), 429 on a tenant operation
 * (the API's rate limits), and 403 for the keys of the other plane (access/rules.ts): platform keys
 * on a tenant operation, tenant keys on a platform one.
 */
export function answers(specific: Statuses, plane: 'tenant' | 'platform' | 'public' = 'tenant'): Statuses {
  // The shared catalog's reads take no key (a key, if sent, is not read): neither 401 nor 403.
  if (plane === 'public') {
    const { 401: _, ...common } = withCommon(specific);
    return sorted(common);
  }
  const otherPlane = plane === 'tenant' ? WHY.platformKey : WHY.tenantKey;
  const all: Statuses = {
    ...withCommon(specific),
    ...(plane === 'tenant' ? TENANT_COMMON : {}),
    403: specific[403] ? `${specific[403]}; or ${otherPlane}` : otherPlane,
  };
  return sorted(all);
}

function sorted(statuses: Statuses): Statuses {
  return Object.fromEntries(Object.entries(statuses).sort(([a], [b]) => Number(a) - Number(b)));
}

/**
 * When an operation does not declare the status an error naturally has, the declared one a client
 * handles best: a body over the limit is input the operation will not take (413 -> 400), input
 * that can name nothing, or a resource the key may not see, is a resource not found (400, 403 -> 404),
 * and where 404 is not listed, a parameter that names nothing (a workspace_id) is bad input (404 -> 400).
 */
const SUBSTITUTES: Partial<Record<ErrorStatus, ErrorStatus>> = { 413: 400, 400: 404, 403: 404, 404: 400 };

/**
 * The status an operation answers for an error whose own status is `status`: that status if the
 * operation declares it, else its declared substitute, else the status itself. One rule for both
 * faces: a tRPC call answers the status its REST operation would.
 */
export function declaredStatus(statuses: Statuses, status: ErrorStatus): ErrorStatus {
  if (statuses[status] !== undefined) return status;
  const substitute = SUBSTITUTES[status];
  return substitute !== undefined && statuses[substitute] !== undefined ? substitute : status;
}
