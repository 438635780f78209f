// The keys' records from their rows: the Managed key record (managedKeyOf) and the limit and usage
// figures it shares with GET /key's Key record, from a key's columns and its usage row
// (keys-queries.ts).
import { Prisma, type ApiKey } from '@switchyard/db';
import type { ManagedKey } from '@switchyard/schema';
import type { KeyUsageRow } from './keys-queries.js';

/** The usage of a key with no generations. */
export const NO_USAGE = (id: string): KeyUsageRow => ({
  id,
  usage: '0',
  byok_usage: '0',
  usage_daily: '0',
  usage_weekly: '0',
  usage_monthly: '0',
  byok_daily: '0',
  byok_weekly: '0',
  byok_monthly: '0',
  free_requests_today: 0,
});

/** What is left of a key's limit in its current limit_reset period; null when unlimited. */
export function limitRemainingOf(key: Pick<ApiKey, 'limit' | 'limit_reset' | 'include_byok_in_limit'>, u: KeyUsageRow): number | null {
  if (key.limit === null) return null;
  const period = { daily: [u.usage_daily, u.byok_daily], weekly: [u.usage_weekly, u.byok_weekly], monthly: [u.usage_monthly, u.byok_monthly] };
  const [spentUsage, spentByok] = key.limit_reset ? period[key.limit_reset] : [u.usage, u.byok_usage];
  const spent = key.include_byok_in_limit ? new Prisma.Decimal(spentUsage!).add(spentByok!) : new Prisma.Decimal(spentUsage!);
  return Prisma.Decimal.max(0, key.limit.sub(spent)).toNumber();
}

/** The limit and usage fields the Key record (GET /key) and the Managed key record share. */
export function limitAndUsageOf(key: Pick<ApiKey, 'limit' | 'limit_reset' | 'include_byok_in_limit'>, u: KeyUsageRow) {
  return {
    limit: key.limit === null ? null : key.limit.toNumber(),
    limit_remaining: limitRemainingOf(key, u),
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
  };
}

/** The columns of a key that its Managed key record shows. */
export type KeyFields = Pick<
  ApiKey,
  | 'id'
  | 'hash'
  | 'name'
  | 'label'
  | 'disabled'
  | 'workspace_id'
  | 'creator_user_id'
  | 'external_user'
  | 'limit'
  | 'limit_reset'
  | 'include_byok_in_limit'
  | 'created_at'
  | 'updated_at'
  | 'expires_at'
  | 'is_management_key'
  | 'scopes'
>;

export function managedKeyOf(key: KeyFields, u: KeyUsageRow | undefined): ManagedKey {
  if (!u) throw new Error(`no usage row for key ${key.id}`);
  return {
    hash: key.hash,
    name: key.name,
    label: key.label,
    disabled: key.disabled,
    workspace_id: key.workspace_id,
    creator_user_id: key.creator_user_id,
    external_user: key.external_user,
    ...limitAndUsageOf(key, u),
    created_at: key.created_at.toISOString(),
    updated_at: key.updated_at.toISOString(),
    expires_at: key.expires_at ? key.expires_at.toISOString() : null,
    is_management_key: key.is_management_key,
    scopes: key.scopes.length > 0 ? key.scopes : null,
  } satisfies ManagedKey;
}

/** A key's columns as statements read them (KEY_COLUMNS), with the limit as Prisma reads it. */
export function withLimit<Row extends { limit: string | null }>(row: Row): Omit<Row, 'limit'> & { limit: Prisma.Decimal | null } {
  return { ...row, limit: row.limit === null ? null : new Prisma.Decimal(row.limit) };
}
