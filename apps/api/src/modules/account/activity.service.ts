// GET /activity (admin-api.md B6): usage by UTC day, model and provider over the last 30 completed
// UTC days, read from the activity_daily rollups the recorder keeps in the statement that records
// each generation. The rows read grow with keys x models x providers x days, never with the number
// of generations. The statement and the items built from its rows take one of as many slots as
// POST /analytics/query has (ANALYTICS_CONCURRENCY), but slots of their own, one organization at most
// half of them: an answer is about 1,000 rows and 290 KB at the bench's large size, and 32 built at
// once took the server past 250 MB of RSS.
import { queryRows, type Db } from '@switchyard/db';
import type { ActivityInput, ActivityItem } from '@switchyard/schema';
import { z } from 'zod';
import type { Actor } from '../../access/callers.js';
import { tenantStatement, tenantValues, tenantWhere } from '../../access/tenancy.js';
import type { AnalyticsLimit } from '../analytics/analytics-limit.js';
import { resolveWorkspace } from '../../access/workspaces.js';
import { Invalid, NotFound } from '../../errors.js';
import type { CatalogSnapshot } from '../models/catalog-cache.js';
import { resolveModel } from '../models/resolve-model.js';

const DAYS = 30;
const DAY_MS = 86_400_000;

const ACTIVITY = tenantStatement(
  'organization',
  (tenant) => `
  SELECT day::text AS date, model, provider_name,
         CASE WHEN $7 THEN workspace_id::text END AS workspace_id,
         sum(requests)::text AS requests, sum(prompt_tokens)::text AS prompt_tokens,
         sum(completion_tokens)::text AS completion_tokens, sum(reasoning_tokens)::text AS reasoning_tokens,
         sum(usage)::text AS usage, sum(byok_usage)::text AS byok_usage
  FROM activity_daily
  WHERE ${tenant.where()} AND day BETWEEN $2::date AND $3::date
    AND ($4::uuid IS NULL OR workspace_id = $4::uuid)
    AND ($5::uuid IS NULL OR api_key_id = $5::uuid)
    AND ($6::text IS NULL OR user_id = $6::text)
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

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The last 30 completed UTC days: [today - 30, today - 1]. */
export function activityDays(now: Date): { first: string; last: string } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { first: dayOf(today - DAYS * DAY_MS), last: dayOf(today - DAY_MS) };
}

/** The catalog's permanent slug of a recorded model and its endpoint at a provider (by slug or name). */
function catalogNames(snapshot: CatalogSnapshot, model: string, provider: string): { permaslug: string; endpointId: string } {
  const resolved = resolveModel(snapshot, model);
  if (!resolved) return { permaslug: model, endpointId: '' };
  const wanted = provider.toLowerCase();
  const endpoint = (snapshot.endpoints.get(resolved.model.id) ?? []).find((e) => {
    const p = snapshot.providers.get(e.provider_slug);
    return e.provider_slug === wanted || p?.name.toLowerCase() === wanted;
  });
  return { permaslug: resolved.model.canonical_slug, endpointId: endpoint?.id ?? '' };
}

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
    values: tenantValues(ACTIVITY, { organizationId }, days.first, days.last, filters.workspaceId, filters.keyId, filters.userId, filters.byWorkspace),
  };
}

export async function getActivity(
  db: Db,
  snapshot: CatalogSnapshot,
  actor: Actor,
  input: ActivityInput,
  now: Date,
  options: { limit?: AnalyticsLimit; clientGone?: () => boolean } = {},
): Promise<ActivityItem[]> {
  let { first, last } = activityDays(now);
  if (input.date !== undefined) {
    const day = new Date(`${input.date}T00:00:00Z`);
    if (Number.isNaN(day.getTime()) || dayOf(day.getTime()) !== input.date || input.date < first || input.date > last) {
      throw new Invalid(`date ${input.date} is not one of the last ${DAYS} completed UTC days (${first}..${last})`, {
        parameter: 'date',
        reason: `within ${first}..${last}`,
      });
    }
    first = last = input.date;
  }
  const workspaceId = input.workspace_id === undefined ? null : (await resolveWorkspace(db, actor, input.workspace_id)).id;
  let keyId: string | null = null;
  if (input.api_key_hash !== undefined) {
    const key = await db.apiKey.findFirst({ where: { hash: input.api_key_hash, ...tenantWhere(actor) }, select: { id: true } });
    if (!key) throw new NotFound(`key ${input.api_key_hash}`);
    keyId = key.id;
  }
  if (input.user_id !== undefined) {
    const member = await db.organizationMember.findUnique({
      where: { organization_id_user_id: { ...tenantWhere(actor), user_id: input.user_id } },
      select: { id: true },
    });
    if (!member) throw new NotFound(`member ${input.user_id}`);
  }
  const query = activityQuery(
    actor.organizationId,
    { first, last },
    { workspaceId, keyId, userId: input.user_id ?? null, byWorkspace: input.group_by === 'workspace' },
  );
  const items = async () => {
    const rows = await queryRows(db, query.statement, query.values);
    return rows.map((r) => activityItem(snapshot, r));
  };
  // Waits for its turn as long as it takes (408 is not one of GET /activity's statuses); a request
  // whose client has left by then is not run.
  const { limit, clientGone } = options;
  return limit ? limit.run(actor.organizationId, Number.POSITIVE_INFINITY, items, clientGone) : items();
}

function activityItem(snapshot: CatalogSnapshot, r: z.output<typeof ACTIVITY.row>): ActivityItem {
  const { permaslug, endpointId } = catalogNames(snapshot, r.model, r.provider_name);
  return {
    date: r.date,
    model: r.model,
    model_permaslug: permaslug,
    endpoint_id: endpointId,
    provider_name: r.provider_name,
    requests: Number(r.requests),
    prompt_tokens: Number(r.prompt_tokens),
    completion_tokens: Number(r.completion_tokens),
    reasoning_tokens: Number(r.reasoning_tokens),
    usage: Number(r.usage),
    byok_usage_inference: Number(r.byok_usage),
    ...(r.workspace_id !== null ? { workspace_id: r.workspace_id } : {}),
  } satisfies ActivityItem;
}
