import { Prisma, type ApiKey, type Db } from '@switchyard/db';
import type { CreateKeyInput, Key, KeySummary, ListKeysInput, UpdateKeyInput } from '@switchyard/schema';
import { NotFound } from '../../errors.js';
import type { Actor } from './auth.service.js';
import { generateApiKey, hashApiKey, maskApiKey } from './key-format.js';
import { periodStarts } from './periods.js';

const ZERO = new Prisma.Decimal(0);

const RATE_LIMIT_NOTE =
  'This field is deprecated and safe to ignore. Rate limits are not expressed per key.';

interface Totals {
  usage: Prisma.Decimal;
  byok: Prisma.Decimal;
}

/**
 * GET /key. Usage figures come from the key's lifetime totals and its daily rollups since the start
 * of the widest current period (at most ~37 rows), never from generations, so the cost does not
 * grow with the number of generations.
 */
export async function getKeyInfo(db: Db, actor: Actor, now: Date): Promise<Key> {
  const key = actor.key;
  const starts = periodStarts(now);
  const since = starts.week < starts.month ? starts.week : starts.month;
  const rows = await db.keyUsageDaily.findMany({
    where: { api_key_id: key.id, day: { gte: since, lte: starts.day } },
    select: { day: true, usage: true, byok_usage: true, free_request_count: true },
  });

  const daily: Totals = { usage: ZERO, byok: ZERO };
  const weekly: Totals = { usage: ZERO, byok: ZERO };
  const monthly: Totals = { usage: ZERO, byok: ZERO };
  let freeRequestsToday = 0;
  for (const row of rows) {
    const day = row.day.getTime();
    for (const [total, start] of [
      [daily, starts.day],
      [weekly, starts.week],
      [monthly, starts.month],
    ] as const) {
      if (day >= start.getTime()) {
        total.usage = total.usage.add(row.usage);
        total.byok = total.byok.add(row.byok_usage);
      }
    }
    if (day === starts.day.getTime()) freeRequestsToday = row.free_request_count;
  }

  const lifetime: Totals = { usage: key.usage, byok: key.byok_usage };
  const limitPeriod = key.limit_reset ? { daily, weekly, monthly }[key.limit_reset] : lifetime;
  const spent = key.include_byok_in_limit ? limitPeriod.usage.add(limitPeriod.byok) : limitPeriod.usage;
  const limitRemaining = key.limit === null ? null : Prisma.Decimal.max(ZERO, key.limit.sub(spent)).toNumber();
  const freeLimit = key.free_model_daily_limit;

  return {
    label: key.label,
    limit: key.limit === null ? null : key.limit.toNumber(),
    limit_remaining: limitRemaining,
    limit_reset: key.limit_reset,
    include_byok_in_limit: key.include_byok_in_limit,
    usage: lifetime.usage.toNumber(),
    usage_daily: daily.usage.toNumber(),
    usage_weekly: weekly.usage.toNumber(),
    usage_monthly: monthly.usage.toNumber(),
    byok_usage: lifetime.byok.toNumber(),
    byok_usage_daily: daily.byok.toNumber(),
    byok_usage_weekly: weekly.byok.toNumber(),
    byok_usage_monthly: monthly.byok.toNumber(),
    is_free_tier: key.is_free_tier,
    is_management_key: key.is_management_key,
    is_provisioning_key: key.is_provisioning_key,
    creator_user_id: key.creator_user_id,
    expires_at: key.expires_at ? key.expires_at.toISOString() : null,
    organization_id: key.organization_id,
    workspace_id: key.workspace_id,
    allowed_data_regions: key.allowed_data_regions,
    free_model_daily_requests: {
      used: freeRequestsToday,
      limit: freeLimit,
      remaining: Math.max(0, freeLimit - freeRequestsToday),
    },
    rate_limit: { requests: -1, interval: '10s', note: RATE_LIMIT_NOTE },
  } satisfies Key;
}

function summaryOf(key: ApiKey): KeySummary {
  return {
    hash: key.hash,
    name: key.name,
    label: key.label,
    workspace_id: key.workspace_id,
    creator_user_id: key.creator_user_id,
    is_management_key: key.is_management_key,
    disabled: key.disabled,
    limit: key.limit === null ? null : key.limit.toNumber(),
    limit_reset: key.limit_reset,
    include_byok_in_limit: key.include_byok_in_limit,
    expires_at: key.expires_at ? key.expires_at.toISOString() : null,
    created_at: key.created_at.toISOString(),
  } satisfies KeySummary;
}

/** Creates a key owned by the caller's user, in the caller's organization. */
export async function createKey(db: Db, actor: Actor, input: CreateKeyInput): Promise<{ key: string; data: KeySummary }> {
  const workspaceId = input.workspace_id ?? actor.workspaceId;
  const workspace = await db.workspace.findFirst({
    where: { id: workspaceId, organization_id: actor.organizationId },
    select: { id: true },
  });
  if (!workspace) throw new NotFound(`workspace ${workspaceId}`);
  const secret = generateApiKey();
  const key = await db.apiKey.create({
    data: {
      organization_id: actor.organizationId,
      workspace_id: workspace.id,
      creator_user_id: actor.userId,
      hash: hashApiKey(secret),
      label: maskApiKey(secret),
      name: input.name,
      is_management_key: input.is_management_key ?? false,
      limit: input.limit ?? null,
      limit_reset: input.limit_reset ?? null,
      include_byok_in_limit: input.include_byok_in_limit ?? false,
      expires_at: input.expires_at ? new Date(input.expires_at) : null,
    },
  });
  return { key: secret, data: summaryOf(key) };
}

/** Changes a key of the caller's organization; another organization's key is not found. */
export async function updateKey(db: Db, actor: Actor, input: UpdateKeyInput): Promise<KeySummary> {
  const { hash, ...changes } = input;
  const result = await db.apiKey.updateManyAndReturn({
    where: { hash, organization_id: actor.organizationId },
    data: changes,
  });
  const key = result[0];
  if (!key) throw new NotFound(`key ${hash}`);
  return summaryOf(key);
}

export async function listKeys(
  db: Db,
  actor: Actor,
  input: ListKeysInput,
): Promise<{ data: KeySummary[]; total_count: number }> {
  const where = {
    organization_id: actor.organizationId,
    ...(input.workspace_id ? { workspace_id: input.workspace_id } : {}),
  };
  const [rows, total] = await Promise.all([
    db.apiKey.findMany({ where, orderBy: [{ created_at: 'desc' }, { id: 'asc' }], skip: input.offset, take: input.limit }),
    db.apiKey.count({ where }),
  ]);
  return { data: rows.map(summaryOf), total_count: total };
}

export async function getKey(db: Db, actor: Actor, hash: string): Promise<KeySummary> {
  const key = await db.apiKey.findFirst({ where: { hash, organization_id: actor.organizationId } });
  if (!key) throw new NotFound(`key ${hash}`);
  return summaryOf(key);
}
