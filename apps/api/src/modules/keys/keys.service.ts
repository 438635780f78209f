import { Prisma, queryRows, statement, type ApiKey, type Db } from '@switchyard/db';
import type { CreateKeyInput, Key, KeySummary, ListKeysInput, UpdateKeyInput } from '@switchyard/schema';
import { NotFound, Unauthorized } from '../../errors.js';
import type { Actor, KeyCache } from '../../access/callers.js';
import { resolveWorkspace, resolveWorkspaceOrOwn } from '../../access/workspaces.js';
import { generateApiKey, hashApiKey, maskApiKey } from './key-format.js';
import { periodStarts } from './periods.js';

const RATE_LIMIT_NOTE =
  'This field is deprecated and safe to ignore. Rate limits are not expressed per key.';

/**
 * The figures of GET /key that move with every generation: the key's lifetime totals and its
 * rollups summed per current period (rows since the start of the widest period: at most ~37, one
 * per day), never generations. Sums are exact (numeric) and come back as text.
 */
const KEY_USAGE = statement(`
  SELECT k.usage::text AS usage, k.byok_usage::text AS byok_usage,
    coalesce(sum(d.usage) FILTER (WHERE d.day >= $2::date), 0)::text AS usage_daily,
    coalesce(sum(d.usage) FILTER (WHERE d.day >= $3::date), 0)::text AS usage_weekly,
    coalesce(sum(d.usage) FILTER (WHERE d.day >= $4::date), 0)::text AS usage_monthly,
    coalesce(sum(d.byok_usage) FILTER (WHERE d.day >= $2::date), 0)::text AS byok_daily,
    coalesce(sum(d.byok_usage) FILTER (WHERE d.day >= $3::date), 0)::text AS byok_weekly,
    coalesce(sum(d.byok_usage) FILTER (WHERE d.day >= $4::date), 0)::text AS byok_monthly,
    least(coalesce(max(d.free_request_count) FILTER (WHERE d.day = $2::date), 0), 2147483647)::int AS free_requests_today
  FROM api_keys k
  LEFT JOIN key_usage_daily d ON d.api_key_id = k.id AND d.day >= least($3::date, $4::date) AND d.day <= $2::date
  WHERE k.id = $1::uuid
  GROUP BY k.id`);

interface KeyUsageRow {
  usage: string;
  byok_usage: string;
  usage_daily: string;
  usage_weekly: string;
  usage_monthly: string;
  byok_daily: string;
  byok_weekly: string;
  byok_monthly: string;
  free_requests_today: number;
}

const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/**
 * GET /key. The key row the caller authenticated with may be up to a second old (KeyCache): the
 * figures that move are read fresh, in one query, whose cost does not grow with the number of
 * generations.
 */
export async function getKeyInfo(db: Db, actor: Actor, now: Date): Promise<Key> {
  const key = actor.key;
  const starts = periodStarts(now);
  const [u] = await queryRows<KeyUsageRow>(db, KEY_USAGE, [key.id, isoDay(starts.day), isoDay(starts.week), isoDay(starts.month)]);
  if (!u) throw new Unauthorized('deleted key');
  const period = { daily: [u.usage_daily, u.byok_daily], weekly: [u.usage_weekly, u.byok_weekly], monthly: [u.usage_monthly, u.byok_monthly] };
  const [spentUsage, spentByok] = key.limit_reset ? period[key.limit_reset] : [u.usage, u.byok_usage];
  const spent = key.include_byok_in_limit ? new Prisma.Decimal(spentUsage!).add(spentByok!) : new Prisma.Decimal(spentUsage!);
  const limitRemaining = key.limit === null ? null : Prisma.Decimal.max(0, key.limit.sub(spent)).toNumber();
  const freeRequestsToday = u.free_requests_today;
  const freeLimit = key.free_model_daily_limit;

  return {
    label: key.label,
    limit: key.limit === null ? null : key.limit.toNumber(),
    limit_remaining: limitRemaining,
    limit_reset: key.limit_reset,
    include_byok_in_limit: key.include_byok_in_limit,
    usage: Number(u.usage),
    usage_daily: Number(u.usage_daily),
    usage_weekly: Number(u.usage_weekly),
    usage_monthly: Number(u.usage_monthly),
    byok_usage: Number(u.byok_usage),
    byok_usage_daily: Number(u.byok_daily),
    byok_usage_weekly: Number(u.byok_weekly),
    byok_usage_monthly: Number(u.byok_monthly),
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
  const workspace = await resolveWorkspaceOrOwn(db, actor, input.workspace_id);
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

/**
 * Changes a key of the caller's organization; another organization's key is not found. The
 * change applies to this process's next request at once (other processes: within the cache's TTL).
 */
export async function updateKey(db: Db, keys: KeyCache, actor: Actor, input: UpdateKeyInput): Promise<KeySummary> {
  const { hash, ...changes } = input;
  const result = await db.apiKey.updateManyAndReturn({
    where: { hash, organization_id: actor.organizationId },
    data: changes,
  });
  const key = result[0];
  if (!key) throw new NotFound(`key ${hash}`);
  keys.forget(hash);
  return summaryOf(key);
}

export async function listKeys(
  db: Db,
  actor: Actor,
  input: ListKeysInput,
): Promise<{ data: KeySummary[]; total_count: number }> {
  const where = {
    organization_id: actor.organizationId,
    ...(input.workspace_id ? { workspace_id: (await resolveWorkspace(db, actor, input.workspace_id)).id } : {}),
    ...(input.hash_prefix ? { hash: { startsWith: input.hash_prefix } } : {}),
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
