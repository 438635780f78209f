// GET /activity (admin-api.md B6): usage by UTC day, model and provider over the last 30 completed
// UTC days, read from the activity_daily rollups the recorder keeps in the statement that records
// each generation. The rows read grow with keys x models x providers x days, never with the number
// of generations. The statement and the items built from its rows take one of as many slots as
// POST /analytics/query has (ANALYTICS_CONCURRENCY), but slots of their own, one organization at most
// half of them: answers are large at the bench's large size, and many built at once took the
// server past its memory budget (decision 0006).
import { queryRows } from '@switchyard/db';
import type { ActivityInput, ActivityItem } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { tenantWhere } from '../../access/tenancy.js';
import { resolveWorkspace } from '../../access/workspaces.js';
import type { Uses } from '../../trpc/service-deps.js';
import { Invalid, NotFound } from '../../lib/errors.js';
import type { CatalogSnapshot } from '../models/catalog-cache.js';
import { resolveModel } from '../models/resolve-model.js';
import { activityDays, activityQuery, type ActivityRow, DAYS, dayOf } from './activity-queries.js';

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
 * GET /activity: the organization's rows of the days asked, in activityLimit's slots (when set); a
 * request whose client has left (`clientGone`, the request's) before its turn is not run.
 */
export async function getActivity(
  deps: Uses<'db' | 'catalog' | 'now' | 'activityLimit' | 'clientGone'>,
  actor: Actor,
  input: ActivityInput,
): Promise<ActivityItem[]> {
  const { db } = deps;
  const snapshot = await deps.catalog.snapshot(db);
  let { first, last } = activityDays(deps.now());
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
  const limit = deps.activityLimit;
  return limit ? limit.run(actor.organizationId, Number.POSITIVE_INFINITY, items, () => deps.clientGone()) : items();
}

function activityItem(snapshot: CatalogSnapshot, r: ActivityRow): ActivityItem {
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
