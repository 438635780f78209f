// The keys' statements (keys.service.ts makes them): a key's usage figures from the daily rollups
// (usageOf, also read by UsageCache and the PKCE exchange), a page of GET /keys (keysPageQuery) and
// POST /keys' insert with its audit entry (createKeyQuery). The builders are also the bench's
// database floor (through statements.ts).
import { LimitReset, modelColumns, namedStatement, queryRows, type Db } from '@switchyard/db';
import type { CreateKeyInput, ListKeysInput } from '@switchyard/schema';
import { z } from 'zod';
import { Invalid } from '../../lib/errors.js';
import { tenantStatement, tenantValues } from '../../access/tenancy.js';
import { auditInsertSql, auditValues, type Audit } from '../audit/audit.js';
import { hashApiKey, maskApiKey } from '../../access/key-format.js';
import type { KeyFields } from './keys-rows.js';
import { periodStarts } from './periods.js';

/**
 * The figures of GET /key and of the Managed key record that move with every generation: each key's
 * lifetime totals and its rollups summed per current period (rows since the start of the widest
 * period: at most ~37 per key, one per day), never generations. One query per key (a page of keys: KEYS_PAGE).
 * Sums are exact (numeric) and come back as text.
 */
const USAGE_SUMS = `
    coalesce(sum(d.usage) FILTER (WHERE d.day >= :today::date), 0)::text AS usage_daily,
    coalesce(sum(d.usage) FILTER (WHERE d.day >= :week_start::date), 0)::text AS usage_weekly,
    coalesce(sum(d.usage) FILTER (WHERE d.day >= :month_start::date), 0)::text AS usage_monthly,
    coalesce(sum(d.byok_usage) FILTER (WHERE d.day >= :today::date), 0)::text AS byok_daily,
    coalesce(sum(d.byok_usage) FILTER (WHERE d.day >= :week_start::date), 0)::text AS byok_weekly,
    coalesce(sum(d.byok_usage) FILTER (WHERE d.day >= :month_start::date), 0)::text AS byok_monthly,
    least(coalesce(max(d.free_request_count) FILTER (WHERE d.day = :today::date), 0), 2147483647)::int AS free_requests_today`;
/** Rollup row d is key k's, in the current periods (up to :today, from the earlier of :week_start and :month_start). */
const IN_PERIODS = `d.api_key_id = k.id AND d.day >= least(:week_start::date, :month_start::date) AND d.day <= :today::date`;

/** The columns of a key's usage row (KEYS_USAGE), which KEYS_PAGE answers too. */
export const USAGE_COLUMNS = {
  id: z.string(),
  usage: z.string(),
  byok_usage: z.string(),
  usage_daily: z.string(),
  usage_weekly: z.string(),
  usage_monthly: z.string(),
  byok_daily: z.string(),
  byok_weekly: z.string(),
  byok_monthly: z.string(),
  free_requests_today: z.number().int(),
};

/** The columns of a key that its Managed key record shows (KeyFields), as KEY_COLUMNS reads them: the limit as text. */
export const KEY_SELECT = `id, hash, name, label, disabled, workspace_id::text AS workspace_id, creator_user_id, external_user,
    "limit"::text AS "limit", limit_reset::text AS limit_reset, include_byok_in_limit, created_at, updated_at, expires_at, is_management_key,
    coalesce(scopes, '{}') AS scopes`;

export const KEY_COLUMNS = modelColumns<KeyFields>()({
  id: z.string(),
  hash: z.string(),
  name: z.string(),
  label: z.string(),
  disabled: z.boolean(),
  workspace_id: z.string(),
  creator_user_id: z.string(),
  external_user: z.string().nullable(),
  limit: z.string().nullable(),
  limit_reset: z.enum(LimitReset).nullable(),
  include_byok_in_limit: z.boolean(),
  created_at: z.date(),
  updated_at: z.date(),
  expires_at: z.date().nullable(),
  is_management_key: z.boolean(),
  scopes: z.array(z.string()),
});

const KEYS_USAGE = namedStatement(
  `
  SELECT k.id, k.usage::text AS usage, k.byok_usage::text AS byok_usage, ${USAGE_SUMS}
  FROM api_keys k
  LEFT JOIN key_usage_daily d ON ${IN_PERIODS}
  WHERE k.id = :key_id::uuid
  GROUP BY k.id`,
  z.object(USAGE_COLUMNS),
);

/**
 * GET /keys: a page of an organization's live keys with their usage, in one statement (the list is
 * the administration's hot read: one round trip, and rows as the driver gives them, not through
 * Prisma's engine). :workspace_id null is the organization's default workspace; :every_workspace
 * (a hash-prefix lookup) lists all of them; :hash_prefix null matches every key; :limit null is all.
 * The usage sums are a lateral subquery per key, so that the key's columns need no GROUP BY (which
 * sorted the page on all of them); a single key (KEYS_USAGE) is cheaper grouped (decision 0013).
 */
const KEYS_PAGE = tenantStatement(
  'organization',
  (tenant) => `
  WITH page AS (
    SELECT ${KEY_SELECT}, usage::text AS usage, byok_usage::text AS byok_usage
    FROM api_keys k
    WHERE ${tenant.where('k')} AND k.deleted_at IS NULL
      AND (:every_workspace::boolean OR k.workspace_id = coalesce(:workspace_id::uuid, (SELECT o.default_workspace_id FROM organizations o WHERE o.id = ${tenant.organizationId})))
      AND (:include_disabled::boolean OR NOT k.disabled)
      AND (:hash_prefix::text IS NULL OR starts_with(k.hash, :hash_prefix::text))
    ORDER BY k.created_at DESC, k.id ASC
    OFFSET :offset LIMIT :limit
  )
  SELECT k.*, u.*
  FROM page k
  CROSS JOIN LATERAL (SELECT ${USAGE_SUMS} FROM key_usage_daily d WHERE ${IN_PERIODS}) u
  ORDER BY k.created_at DESC, k.id ASC`,
  // The key's columns (the limit as text) and its usage.
  z.object({ ...KEY_COLUMNS, ...USAGE_COLUMNS }),
);

/**
 * POST /keys: the key, in the workspace named (:workspace_id) or the organization's default, in one statement
 * (the default workspace and the insert were two queries through Prisma's engine). The workspace
 * must be the organization's and live here too: nothing is written into another organization's
 * workspace whatever the caller passed, nor into one deleted since it was resolved. FOR KEY SHARE
 * waits for a deletion in progress (deleteWorkspace locks the row FOR UPDATE), then reads the row
 * again: a workspace deleted meanwhile gives no row, where the foreign key alone would have let the
 * key into it (the row stays, marked deleted).
 */
const CREATE_KEY = tenantStatement(
  'organization',
  (tenant) => `
  WITH k AS (
  INSERT INTO api_keys (id, organization_id, workspace_id, creator_user_id, hash, label, name, is_management_key, "limit", limit_reset,
                        include_byok_in_limit, expires_at, external_user, external_api_key_hash, created_at, updated_at, scopes, minted_by_key_id)
  SELECT :key_id::uuid, o.id, w.id, :creator_user_id, :hash, :label, :name, :is_management_key, :limit::numeric, :limit_reset::limit_reset,
         :include_byok_in_limit, :expires_at::timestamptz, :external_user, :external_api_key_hash, :now::timestamptz, :now::timestamptz,
         :scopes::text[], :minted_by_key_id::uuid
  FROM organizations o
  JOIN workspaces w ON w.id = coalesce(:workspace_id::uuid, o.default_workspace_id) AND w.organization_id = o.id AND w.deleted_at IS NULL
  WHERE o.id = ${tenant.organizationId}
  FOR KEY SHARE OF w
  RETURNING *
  ), audited AS (
  ${auditInsertSql('k', {
    organization: 'k.organization_id',
    targetType: `'key'`,
    targetId: 'k.hash',
    changes: `jsonb_build_object('after', jsonb_build_object('name', k.name, 'label', k.label, 'workspace_id', k.workspace_id,
      'is_management_key', k.is_management_key, 'limit', k."limit", 'limit_reset', k.limit_reset, 'include_byok_in_limit', k.include_byok_in_limit,
      'expires_at', k.expires_at, 'creator_user_id', k.creator_user_id, 'external_user', k.external_user, 'scopes', coalesce(k.scopes, '{}'))
      || CASE WHEN k.minted_by_key_id IS NULL THEN '{}'::jsonb
              ELSE jsonb_build_object('minted_by', (SELECT m.hash FROM api_keys m WHERE m.id = k.minted_by_key_id)) END)`,
  })}
  )
  SELECT ${KEY_SELECT} FROM k`,
  z.object(KEY_COLUMNS),
);

export type KeyUsageRow = z.output<typeof KEYS_USAGE.row>;

const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/** The usage row of a key; undefined when there is no such key. */
export async function usageOf(db: Db, keyId: string, now: Date): Promise<KeyUsageRow | undefined> {
  const starts = periodStarts(now);
  // One key per statement: with `k.id = ANY(<an array>::uuid[])` PostgreSQL planned it afresh on
  // every call, several times the CPU of `k.id = :key_id` at the bench's large size. Every caller
  // reads one key.
  const [row] = await queryRows(db, KEYS_USAGE, {
    key_id: keyId,
    today: isoDay(starts.day),
    week_start: isoDay(starts.week),
    month_start: isoDay(starts.month),
  });
  return row;
}

/**
 * The one statement POST /keys makes per key, with its values: `workspaceId` is the workspace named
 * (already resolved), or null for the organization's default; `creator` the member recorded as
 * creator. The statement also appends the audit log's entry (`action`, by `audit`'s actor).
 * Exported for the bench's database floor.
 */
export function createKeyQuery(
  organizationId: string,
  workspaceId: string | null,
  creator: string,
  input: CreateKeyInput,
  key: { id: string; secret: string },
  now: Date,
  audit: Audit,
  action: string,
  /** The key that minted this one through an authorization code (its id); null for POST /keys. */
  mintedBy: string | null = null,
) {
  return {
    statement: CREATE_KEY,
    values: tenantValues(
      CREATE_KEY,
      { organizationId },
      {
        key_id: key.id,
        workspace_id: workspaceId,
        creator_user_id: creator,
        hash: hashApiKey(key.secret),
        label: maskApiKey(key.secret),
        name: input.name,
        is_management_key: input.is_management_key ?? false,
        limit: input.limit ?? null,
        limit_reset: input.limit_reset ?? null,
        include_byok_in_limit: input.include_byok_in_limit ?? false,
        // Timestamps as ISO text in UTC (node-postgres would write a Date in the process's time zone).
        expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
        external_user: input.external?.user ?? null,
        external_api_key_hash: input.external?.api_key ? hashApiKey(input.external.api_key) : null,
        now: now.toISOString(),
        scopes: scopesOf(input),
        minted_by_key_id: mintedBy,
        ...auditValues(audit, action),
      },
    ),
  };
}

/**
 * The scopes to store for a key (POST or PATCH): sorted, each once; none for null or empty. Only
 * a management key has scopes: any for a regular key is refused (400).
 */
function scopesOf(input: { scopes?: string[] | null | undefined; is_management_key?: boolean | undefined }): string[] {
  const scopes = [...new Set(input.scopes ?? [])].sort();
  if (scopes.length > 0 && input.is_management_key !== true) {
    throw new Invalid('scopes are for management keys only', { reason: 'scopes on a regular key' });
  }
  return scopes;
}

/**
 * The one statement GET /keys makes per page, with its values: `workspaceId` is the workspace
 * named (already checked to be the organization's), or null for the default one. Exported for the
 * bench's database floor.
 */
export function keysPageQuery(organizationId: string, workspaceId: string | null, input: ListKeysInput, now: Date) {
  const starts = periodStarts(now);
  return {
    statement: KEYS_PAGE,
    values: tenantValues(
      KEYS_PAGE,
      { organizationId },
      {
        today: isoDay(starts.day),
        week_start: isoDay(starts.week),
        month_start: isoDay(starts.month),
        workspace_id: workspaceId,
        every_workspace: workspaceId === null && input.hash_prefix !== undefined,
        include_disabled: input.include_disabled ?? false,
        hash_prefix: input.hash_prefix ?? null,
        offset: input.offset ?? 0,
        limit: input.limit ?? null,
      },
    ),
  };
}
