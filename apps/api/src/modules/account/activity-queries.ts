// GET /activity's statement (activity.service.ts) and its days: the last 30 completed UTC days
// (activityDays). activityQuery is also the bench's database floor (through statements.ts).
import { z } from 'zod';
import { tenantStatement, tenantValues } from '../../access/tenancy.js';

/** How many completed UTC days GET /activity covers. */
export const DAYS = 30;
const DAY_MS = 86_400_000;

const ACTIVITY = tenantStatement(
  'organization',
  (tenant) => `
  SELECT day::text AS date, model, provider_name,
         CASE WHEN :by_workspace THEN workspace_id::text END AS workspace_id,
         sum(requests)::text AS requests, sum(prompt_tokens)::text AS prompt_tokens,
         sum(completion_tokens)::text AS completion_tokens, sum(reasoning_tokens)::text AS reasoning_tokens,
         sum(usage)::text AS usage, sum(byok_usage)::text AS byok_usage
  FROM activity_daily
  WHERE ${tenant.where()} AND day BETWEEN :first_day::date AND :last_day::date
    AND (:workspace_id::uuid IS NULL OR workspace_id = :workspace_id::uuid)
    AND (:key_id::uuid IS NULL OR api_key_id = :key_id::uuid)
    AND (:user_id::text IS NULL OR user_id = :user_id::text)
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4`,
  z.object({
    date: z.string(),
    model: z.string(),
    provider_name: z.string(),
    workspace_id: z.string().nullable(),
    requests: z.string(),
    prompt_tokens: z.string(),
    completion_tokens: z.string(),
    reasoning_tokens: z.string(),
    usage: z.string(),
    byok_usage: z.string(),
  }),
);

export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The last 30 completed UTC days: [today - 30, today - 1]. */
export function activityDays(now: Date): { first: string; last: string } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { first: dayOf(today - DAYS * DAY_MS), last: dayOf(today - DAY_MS) };
}

/** A row of GET /activity's statement. */
export type ActivityRow = z.output<typeof ACTIVITY.row>;

/**
 * The one statement GET /activity makes per answer, with its values: the days (activityDays, or one
 * of them) and the filters already resolved to ids. Exported for the bench's database floor.
 */
export function activityQuery(
  organizationId: string,
  days: { first: string; last: string },
  filters: { workspaceId: string | null; keyId: string | null; userId: string | null; byWorkspace: boolean },
) {
  return {
    statement: ACTIVITY,
    values: tenantValues(
      ACTIVITY,
      { organizationId },
      {
        first_day: days.first,
        last_day: days.last,
        workspace_id: filters.workspaceId,
        key_id: filters.keyId,
        user_id: filters.userId,
        by_workspace: filters.byWorkspace,
      },
    ),
  };
}
