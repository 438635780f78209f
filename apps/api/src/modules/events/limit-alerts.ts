// Spend alerts (decision 0026; docs/events.md): `limit.threshold_crossed` when recorded
// spend reaches a threshold percentage of a key's limit, a workspace budget or a guardrail's limit
// in its current window, and `credits.low` when the organization's credit balance falls under the
// settings row's `credits_low_usd`. One statement per recorded batch, run by the recorder in the
// batch's own transaction, right after the statement that adds the spend: the events commit with
// the spend that caused them, or not at all. The same statement emits the batch's generation traces
// (generation-traces.ts: TRACE_EVENTS_SQL), so that recording makes one round trip for its events.
//
// Once per crossing: each alert's cause is unique in the outbox (ON CONFLICT (cause) DO NOTHING),
// and names the limit, its window and its amount, and the threshold. The statement emits every
// threshold that spend has reached, not only those this batch went past, so a crossing missed by
// no one: every batch that adds spend to an organization waits for the organization's row lock
// (the recorder's org_locks, taken for USD or BYOK spend) held by the one before it until its
// commit, and this statement, the next in that transaction, reads (in its own snapshot, taken
// after the lock) every batch committed before it plus its own. Two batches, on one replica or two,
// cannot both see spend under a threshold they cross together.
//
// Spend is what routing_spend() (migration "routing_decisions", the routing plane's one function
// for spend in a window) counts, in the windows spend.ts computes, called with `now` = infinity so
// that no reservation counts: an alert reports spend recorded, not held.
import { namedStatement } from '@switchyard/db';
import { z } from 'zod';
import { defaultGuardrailId } from '../guardrails/default-guardrail.js';
import { type Interval, sinceOf, windowEnd, windowStart } from '../routing/spend.js';
import { TRACE_EVENTS_SQL } from './generation-traces.js';

export const LIMIT_THRESHOLD_CROSSED = 'limit.threshold_crossed';
export const CREDITS_LOW = 'credits.low';
/** The payloads' version: fields are only added within it; a field removed or changed in meaning is a new version (docs/events.md). */
export const LIMIT_ALERTS_VERSION = 1;
/** Thresholds of an organization without a settings row (the column's default). */
export const DEFAULT_ALERT_THRESHOLDS = [50, 80, 100] as const;

/*
 * :keys the batch's keys, :workspaces their workspaces, :default_guardrails each workspace's default
 * guardrail id, :organizations their organizations, :windows each interval's window { since, start,
 * end } (spend.ts), :now; and TRACE_EVENTS_SQL's, each generation's id, organization and workspace.
 *
 * - limits: the batch's keys, their workspaces' budgets, and the guardrails that may cover a key of
 *   the batch (only their spend changed): assigned to it or to its member, and the workspace's
 *   default guardrail (routing_spend() decides which keys it covers). Not every guardrail of the
 *   workspace: a workspace may have hundreds.
 * - checks: each limit as limitChecks() (@switchyard/rules) builds it for routing_spend().
 * - alerts: a key's `api_key` names it as the API does (GET/PATCH/DELETE /keys/{hash}); null for a
 *   budget or a guardrail.
 * - traces: the batch's generation traces (generation-traces.ts), in the same statement.
 */
const ALERTS = namedStatement(
  `WITH settings AS (
     SELECT o.id AS organization_id, coalesce(s.alert_thresholds, '{${DEFAULT_ALERT_THRESHOLDS.join(',')}}'::int[]) AS thresholds,
            s.credits_low_usd, o.credit_balance, o.total_credits, o.total_usage
       FROM organizations o LEFT JOIN organization_settings s ON s.organization_id = o.id
      WHERE o.id = ANY(:organizations::text[])
   ), limits AS (
     SELECT k.organization_id, k.workspace_id, 'key' AS kind, k.id, coalesce(k.limit_reset::text, 'lifetime') AS period,
            k."limit" AS amount, k.include_byok_in_limit AS byok, NULL::boolean AS is_default, k.hash AS key_hash, k.name AS key_name
       FROM api_keys k
      WHERE k.id = ANY(:keys::uuid[]) AND k."limit" > 0 AND k.deleted_at IS NULL
     UNION ALL
     SELECT b.organization_id, b.workspace_id, 'budget', b.id, b.reset_interval::text, b.limit_usd, w.include_byok_in_budgets, NULL, NULL, NULL
       FROM budgets b JOIN workspaces w ON w.id = b.workspace_id
      WHERE b.workspace_id = ANY(:workspaces::uuid[]) AND b.limit_usd > 0 AND w.deleted_at IS NULL
     UNION ALL
     SELECT g.organization_id, g.workspace_id, 'guardrail', g.id, g.reset_interval::text, g.limit_usd, g.include_byok_in_budgets, g.id = d.default_id, NULL, NULL
       FROM guardrails g JOIN unnest(:workspaces::uuid[], :default_guardrails::uuid[]) AS d(workspace_id, default_id) ON d.workspace_id = g.workspace_id
      WHERE g.reset_interval IS NOT NULL AND g.limit_usd > 0
        AND (g.id = d.default_id
          OR EXISTS (SELECT 1 FROM api_keys k
                      WHERE k.id = ANY(:keys::uuid[]) AND k.workspace_id = g.workspace_id
                        AND (EXISTS (SELECT 1 FROM guardrail_key_assignments a WHERE a.api_key_id = k.id AND a.guardrail_id = g.id)
                          OR EXISTS (SELECT 1 FROM guardrail_member_assignments m WHERE m.guardrail_id = g.id AND m.user_id = k.creator_user_id))))
   ), checks AS (
     SELECT l.*, l.kind || ':' || l.id AS name, :windows::jsonb -> l.period AS win,
            jsonb_strip_nulls(jsonb_build_object(
              'name', l.kind || ':' || l.id,
              'scope', CASE l.kind WHEN 'key' THEN 'keys' WHEN 'budget' THEN 'workspace' ELSE 'guardrail' END,
              'keys', CASE WHEN l.kind = 'key' THEN jsonb_build_array(l.id) END,
              'workspace_id', CASE WHEN l.kind <> 'key' THEN l.workspace_id END,
              'guardrail_id', CASE WHEN l.kind = 'guardrail' THEN l.id END,
              'is_default', l.is_default,
              'since', :windows::jsonb -> l.period -> 'since',
              'byok', l.byok,
              'limit', l.amount::text)) AS spec
       FROM limits l
   ), spent AS (
     SELECT c.*, c.amount - r.remaining AS spent
       FROM (SELECT organization_id, jsonb_agg(c.spec) AS checks FROM checks c GROUP BY organization_id) o
      CROSS JOIN LATERAL routing_spend(o.organization_id, o.checks, 'infinity'::timestamptz) r
       JOIN checks c ON c.organization_id = o.organization_id AND c.name = r.name
   ), alerts AS (
     SELECT s.organization_id, s.workspace_id, '${LIMIT_THRESHOLD_CROSSED}' AS type,
            '${LIMIT_THRESHOLD_CROSSED}:' || s.kind || ':' || s.id || ':' || coalesce(s.win->>'start', 'lifetime') || ':'
              || trim_scale(s.amount)::text || ':' || t.percent AS cause,
            jsonb_build_object(
              'version', ${LIMIT_ALERTS_VERSION},
              'kind', s.kind,
              'id', s.id,
              'api_key', CASE WHEN s.kind = 'key' THEN jsonb_build_object('id', s.id, 'hash', s.key_hash, 'hash_prefix', left(s.key_hash, 12), 'name', s.key_name) END,
              'threshold_percent', t.percent,
              'limit', trim_scale(s.amount),
              'spent', trim_scale(s.spent),
              'window', jsonb_build_object('interval', s.period, 'start', s.win->'start', 'end', s.win->'end'),
              'include_byok', s.byok,
              'organization_id', s.organization_id,
              'workspace_id', s.workspace_id) AS payload
       FROM spent s
       JOIN settings st ON st.organization_id = s.organization_id
      CROSS JOIN LATERAL unnest(st.thresholds) AS t(percent)
      WHERE s.spent * 100 >= s.amount * t.percent
     UNION ALL
     SELECT st.organization_id, NULL::uuid, '${CREDITS_LOW}',
            '${CREDITS_LOW}:' || st.organization_id || ':' || trim_scale(st.total_credits)::text || ':' || trim_scale(st.credits_low_usd)::text,
            jsonb_build_object(
              'version', ${LIMIT_ALERTS_VERSION},
              'organization_id', st.organization_id,
              'balance', trim_scale(st.credit_balance),
              'threshold_usd', trim_scale(st.credits_low_usd),
              'total_credits', trim_scale(st.total_credits),
              'total_usage', trim_scale(st.total_usage))
       FROM settings st
      WHERE st.credit_balance < st.credits_low_usd
   ), traces AS (
     ${TRACE_EVENTS_SQL}
   )
   INSERT INTO events (id, organization_id, workspace_id, type, cause, payload, created_at)
   SELECT gen_random_uuid(), organization_id, workspace_id, type, cause, payload, :now::timestamptz
     FROM (SELECT * FROM alerts UNION ALL SELECT * FROM traces) x ORDER BY cause
   ON CONFLICT (cause) DO NOTHING
   RETURNING id::text AS id, type`,
  z.object({ id: z.string(), type: z.string() }),
);

/** What a recorded batch touched: each generation, its organization, workspace and key. */
export interface RecordedScope {
  id: string;
  organization_id: string;
  workspace_id: string;
  api_key_id: string;
}

const INTERVALS: readonly Interval[] = ['daily', 'weekly', 'monthly', 'lifetime'];

/** Each interval's window at `now`, as the statement reads it: the first day routing_spend() counts from, and its bounds. */
function windowsAt(now: Date): Record<Interval, { since: string | null; start: string | null; end: string | null }> {
  const entries = INTERVALS.map((i) => [
    i,
    { since: sinceOf(i, now), start: windowStart(i, now)?.toISOString() ?? null, end: windowEnd(i, now)?.toISOString() ?? null },
  ]);
  return Object.fromEntries(entries) as Record<Interval, { since: string | null; start: string | null; end: string | null }>;
}

/**
 * The events statement of a batch recorded at `now`, its alerts and its generation traces, and its
 * values (the recorder runs it in the batch's transaction).
 */
export function alertsQuery(scopes: readonly RecordedScope[], now: Date) {
  const keys = [...new Set(scopes.map((s) => s.api_key_id))];
  const workspaces = [...new Set(scopes.map((s) => s.workspace_id))];
  const organizations = [...new Set(scopes.map((s) => s.organization_id))];
  return {
    statement: ALERTS,
    values: {
      keys,
      workspaces,
      default_guardrails: workspaces.map(defaultGuardrailId),
      organizations,
      windows: JSON.stringify(windowsAt(now)),
      now,
      generation_ids: scopes.map((s) => s.id),
      generation_organizations: scopes.map((s) => s.organization_id),
      generation_workspaces: scopes.map((s) => s.workspace_id),
    },
  };
}
