import { LimitReset, modelColumns, Prisma, queryRows, rawRows, statement, type ApiKey, type Db } from '@switchyard/db';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { CreateKeyInput, Key, KeySecret, ListKeysInput, ManagedKey, RotateKeyInput, UpdateKeyInput } from '@switchyard/schema';
import { Invalid, NotFound, Unauthorized } from '../../errors.js';
import type { Actor, KeyCache } from '../../access/callers.js';
import { tenantSql, tenantStatement, tenantValues, tenantWhere, type Tenant } from '../../access/tenancy.js';
import { platformOrganization, resolveWorkspace } from '../../access/workspaces.js';
import { generateApiKey, hashApiKey, maskApiKey } from './key-format.js';
import { periodStarts } from './periods.js';
import { appendAudit, auditInsertSql, auditValues, changedFields, removed, type Audit } from '../audit/audit.js';
import type { UsageCache } from './usage-cache.js';

const RATE_LIMIT_NOTE = 'This field is deprecated and safe to ignore. Rate limits are not expressed per key.';

/**
 * The figures of GET /key and of the Managed key record that move with every generation: each key's
 * lifetime totals and its rollups summed per current period (rows since the start of the widest
 * period: at most ~37 per key, one per day), never generations. One query per key (a page of keys: KEYS_PAGE).
 * Sums are exact (numeric) and come back as text.
 */
const USAGE_SUMS = `
    coalesce(sum(d.usage) FILTER (WHERE d.day >= $2::date), 0)::text AS usage_daily,
    coalesce(sum(d.usage) FILTER (WHERE d.day >= $3::date), 0)::text AS usage_weekly,
    coalesce(sum(d.usage) FILTER (WHERE d.day >= $4::date), 0)::text AS usage_monthly,
    coalesce(sum(d.byok_usage) FILTER (WHERE d.day >= $2::date), 0)::text AS byok_daily,
    coalesce(sum(d.byok_usage) FILTER (WHERE d.day >= $3::date), 0)::text AS byok_weekly,
    coalesce(sum(d.byok_usage) FILTER (WHERE d.day >= $4::date), 0)::text AS byok_monthly,
    least(coalesce(max(d.free_request_count) FILTER (WHERE d.day = $2::date), 0), 2147483647)::int AS free_requests_today`;
/** Rollup row d is key k's, in the current periods ($2: today, $3: the week's start, $4: the month's). */
const IN_PERIODS = `d.api_key_id = k.id AND d.day >= least($3::date, $4::date) AND d.day <= $2::date`;

/** The columns of a key's usage row (KEYS_USAGE), which KEYS_PAGE answers too. */
const USAGE_COLUMNS = {
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
const KEY_SELECT = `id, hash, name, label, disabled, workspace_id::text AS workspace_id, creator_user_id, external_user,
    "limit"::text AS "limit", limit_reset::text AS limit_reset, include_byok_in_limit, created_at, updated_at, expires_at, is_management_key,
    coalesce(scopes, '{}') AS scopes`;

const KEY_COLUMNS = modelColumns<KeyFields>()({
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

const KEYS_USAGE = statement(
  `
  SELECT k.id, k.usage::text AS usage, k.byok_usage::text AS byok_usage, ${USAGE_SUMS}
  FROM api_keys k
  LEFT JOIN key_usage_daily d ON ${IN_PERIODS}
  WHERE k.id = $1::uuid
  GROUP BY k.id`,
  z.object(USAGE_COLUMNS),
);

/**
 * GET /keys: a page of an organization's live keys with their usage, in one statement (the list is
 * the administration's hot read: one round trip, and rows as the driver gives them, not through
 * Prisma's engine). $1 organization; $5 the workspace, or null for the organization's default;
 * $6 every workspace (a hash-prefix lookup); $7 disabled keys too; $8 hash prefix or null;
 * $9 offset; $10 limit or null (all).
 */
const KEYS_PAGE = tenantStatement(
  'organization',
  (tenant) => `
  WITH page AS (
    SELECT ${KEY_SELECT}, usage::text AS usage, byok_usage::text AS byok_usage
    FROM api_keys k
    WHERE ${tenant.where('k')} AND k.deleted_at IS NULL
      AND ($6::boolean OR k.workspace_id = coalesce($5::uuid, (SELECT o.default_workspace_id FROM organizations o WHERE o.id = ${tenant.organizationId})))
      AND ($7::boolean OR NOT k.disabled)
      AND ($8::text IS NULL OR starts_with(k.hash, $8::text))
    ORDER BY k.created_at DESC, k.id ASC
    OFFSET $9 LIMIT $10
  )
  SELECT k.*, u.*
  FROM page k
  -- Sums per key in a lateral subquery, so that the key's 17 columns need no GROUP BY (which sorted
  -- the page on all of them): 20% less database CPU per page (bench: db cpu 1.10-1.14 -> 0.88-0.91
  -- ms). A single key (KEYS_USAGE) is cheaper grouped: 0.06-0.07 ms against 0.13-0.14 ms lateral.
  CROSS JOIN LATERAL (SELECT ${USAGE_SUMS} FROM key_usage_daily d WHERE ${IN_PERIODS}) u
  ORDER BY k.created_at DESC, k.id ASC`,
  // The key's columns (the limit as text) and its usage.
  z.object({ ...KEY_COLUMNS, ...USAGE_COLUMNS }),
);

/**
 * POST /keys: the key, in the workspace named ($3) or the organization's default, in one statement
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
                        include_byok_in_limit, expires_at, external_user, external_api_key_hash, created_at, updated_at, scopes)
  SELECT $2::uuid, o.id, w.id, $4, $5, $6, $7, $8, $9::numeric, $10::limit_reset,
         $11, $12::timestamptz, $13, $14, $15::timestamptz, $15::timestamptz, $16::text[]
  FROM organizations o
  JOIN workspaces w ON w.id = coalesce($3::uuid, o.default_workspace_id) AND w.organization_id = o.id AND w.deleted_at IS NULL
  WHERE o.id = ${tenant.organizationId}
  FOR KEY SHARE OF w
  RETURNING *
  ), audited AS (
  ${auditInsertSql(17, 'k', {
    organization: 'k.organization_id',
    targetType: `'key'`,
    targetId: 'k.hash',
    changes: `jsonb_build_object('after', jsonb_build_object('name', k.name, 'label', k.label, 'workspace_id', k.workspace_id,
      'is_management_key', k.is_management_key, 'limit', k."limit", 'limit_reset', k.limit_reset, 'include_byok_in_limit', k.include_byok_in_limit,
      'expires_at', k.expires_at, 'creator_user_id', k.creator_user_id, 'external_user', k.external_user, 'scopes', coalesce(k.scopes, '{}')))`,
  })}
  )
  SELECT ${KEY_SELECT} FROM k`,
  z.object(KEY_COLUMNS),
);

/** A key's changeable fields before PATCH /keys changes them (the audit entry's `before`). */
const KEY_BEFORE = z.object({
  name: z.string(),
  disabled: z.boolean(),
  limit: z.number().nullable(),
  limit_reset: z.string().nullable(),
  include_byok_in_limit: z.boolean(),
  scopes: z.array(z.string()),
});

/** The fields PATCH /keys may change, in UPDATE_KEY's order: each is a flag "given" and a value. */
const UPDATED_FIELDS = ['name', 'disabled', 'limit', 'limit_reset', 'include_byok_in_limit', 'scopes'] as const;

/**
 * PATCH /keys/{hash} in one statement, when no management-key guard is needed: the row as it was
 * (locked), the update, and the audit entry with the fields that changed (`changedFields`' shape),
 * so that the row is locked for one statement only, as before the audit log. $2 the hash; for each
 * of UPDATED_FIELDS a flag and a value ($3..$14); $15 the time; $16.. the audit values.
 */
const UPDATE_KEY = tenantStatement(
  'organization',
  (tenant) => `
  WITH old AS (
  SELECT id, name, disabled, "limit", limit_reset, include_byok_in_limit, coalesce(scopes, '{}') AS scopes
  FROM api_keys WHERE ${tenant.where()} AND hash = $2 AND deleted_at IS NULL
  FOR UPDATE
  ), k AS (
  UPDATE api_keys a SET
    name = CASE WHEN $3::boolean THEN $4::text ELSE a.name END,
    disabled = CASE WHEN $5::boolean THEN $6::boolean ELSE a.disabled END,
    "limit" = CASE WHEN $7::boolean THEN $8::numeric ELSE a."limit" END,
    limit_reset = CASE WHEN $9::boolean THEN $10::limit_reset ELSE a.limit_reset END,
    include_byok_in_limit = CASE WHEN $11::boolean THEN $12::boolean ELSE a.include_byok_in_limit END,
    scopes = CASE WHEN $13::boolean THEN $14::text[] ELSE a.scopes END,
    updated_at = $15::timestamptz
  FROM old WHERE a.id = old.id
  RETURNING a.*
  ), diff AS (
  SELECT f.field, f.was, f."is" FROM old, k, LATERAL (VALUES
    ('name', $3::boolean, to_jsonb(old.name), to_jsonb(k.name)),
    ('disabled', $5::boolean, to_jsonb(old.disabled), to_jsonb(k.disabled)),
    ('limit', $7::boolean, to_jsonb(old."limit"::float8), to_jsonb(k."limit"::float8)),
    ('limit_reset', $9::boolean, to_jsonb(old.limit_reset::text), to_jsonb(k.limit_reset::text)),
    ('include_byok_in_limit', $11::boolean, to_jsonb(old.include_byok_in_limit), to_jsonb(k.include_byok_in_limit)),
    ('scopes', $13::boolean, to_jsonb(old.scopes), to_jsonb(coalesce(k.scopes, '{}')))
  ) AS f(field, given, was, "is")
  WHERE f.given AND f.was IS DISTINCT FROM f."is"
  ), audited AS (
  ${auditInsertSql(16, 'k', {
    organization: 'k.organization_id',
    targetType: `'key'`,
    targetId: 'k.hash',
    changes: `jsonb_build_object('before', (SELECT coalesce(jsonb_object_agg(field, was), '{}') FROM diff),
      'after', (SELECT coalesce(jsonb_object_agg(field, "is"), '{}') FROM diff))`,
  })}
  )
  SELECT ${KEY_SELECT} FROM k`,
  z.object(KEY_COLUMNS),
);

/** The usage of a key with no generations. */
const NO_USAGE = (id: string): KeyUsageRow => ({
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

export type KeyUsageRow = z.output<typeof KEYS_USAGE.row>;

const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/** The usage row of a key; undefined when there is no such key. */
export async function usageOf(db: Db, keyId: string, now: Date): Promise<KeyUsageRow | undefined> {
  const starts = periodStarts(now);
  // One key per statement: with `k.id = ANY($1::uuid[])` PostgreSQL planned it afresh on every
  // call and spent 0.23-0.27 ms of CPU on it at the bench's large size (10,000 keys), against
  // 0.05-0.09 ms for `k.id = $1` (3,000 runs each on one connection). Every caller reads one key.
  const [row] = await queryRows(db, KEYS_USAGE, [keyId, isoDay(starts.day), isoDay(starts.week), isoDay(starts.month)]);
  return row;
}

/** What is left of a key's limit in its current limit_reset period; null when unlimited. */
export function limitRemainingOf(key: Pick<ApiKey, 'limit' | 'limit_reset' | 'include_byok_in_limit'>, u: KeyUsageRow): number | null {
  if (key.limit === null) return null;
  const period = { daily: [u.usage_daily, u.byok_daily], weekly: [u.usage_weekly, u.byok_weekly], monthly: [u.usage_monthly, u.byok_monthly] };
  const [spentUsage, spentByok] = key.limit_reset ? period[key.limit_reset] : [u.usage, u.byok_usage];
  const spent = key.include_byok_in_limit ? new Prisma.Decimal(spentUsage!).add(spentByok!) : new Prisma.Decimal(spentUsage!);
  return Prisma.Decimal.max(0, key.limit.sub(spent)).toNumber();
}

/** The limit and usage fields the Key record (GET /key) and the Managed key record share. */
function limitAndUsageOf(key: Pick<ApiKey, 'limit' | 'limit_reset' | 'include_byok_in_limit'>, u: KeyUsageRow) {
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

/**
 * GET /key. The key row the caller authenticated with may be up to a second old (KeyCache), and
 * its spend figures up to USAGE_CACHE_MS (UsageCache), read in one query whose cost does not grow
 * with the number of generations.
 */
export async function getKeyInfo(db: Db, usage: UsageCache, actor: Actor, now: Date): Promise<Key> {
  const key = actor.key;
  const u = await usage.of(db, key.id, now);
  if (!u) throw new Unauthorized('deleted key');
  const freeRequestsToday = u.free_requests_today;
  const freeLimit = key.free_model_daily_limit;

  return {
    label: key.label,
    ...limitAndUsageOf(key, u),
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

/** The columns of a key that its Managed key record shows. */
type KeyFields = Pick<
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

function managedKeyOf(key: KeyFields, u: KeyUsageRow | undefined): ManagedKey {
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

/** The Managed key record of a key row, with its usage. */
async function managedKey(db: Db, row: ApiKey, now: Date): Promise<ManagedKey> {
  return managedKeyOf(row, await usageOf(db, row.id, now));
}

/** A key of the caller's organization that is not deleted; 404 otherwise (another organization's too). */
const liveKey = (actor: Actor, hash: string) => ({ hash, ...tenantWhere(actor), deleted_at: null });

/**
 * POST /keys: a key in the named workspace (default: the organization's default workspace). Its
 * creator is the member named, or the caller key's creator. The secret is returned once.
 */
export async function createKey(db: Db, actor: Actor, input: CreateKeyInput, now: Date, audit: Audit): Promise<{ secret: string; key: ManagedKey }> {
  // A key that expired before it was made could never be used.
  if (input.expires_at && new Date(input.expires_at).getTime() <= now.getTime()) {
    throw new Invalid('expires_at is not in the future', { reason: 'expires_at in the past' });
  }
  // null: the organization's default, found by the insert itself.
  const workspaceId = input.workspace_id !== undefined ? (await resolveWorkspace(db, actor, input.workspace_id)).id : null;
  const creator = input.creator_user_id ?? actor.userId;
  if (input.creator_user_id) {
    const member = await db.organizationMember.findUnique({
      where: { organization_id_user_id: { ...tenantWhere(actor), user_id: creator } },
      select: { id: true },
    });
    if (!member) throw new Invalid('creator_user_id is not a member of the organization', { reason: 'unknown creator_user_id' });
  }
  const secret = generateApiKey();
  const insert = createKeyQuery(actor.organizationId, workspaceId, creator, input, { id: randomUUID(), secret }, now, audit, 'keys.create');
  const [row] = await queryRows(db, insert.statement, insert.values);
  if (!row) {
    // The workspace named was deleted since it was resolved (the default one is never deleted).
    if (input.workspace_id !== undefined) throw new NotFound(`workspace ${input.workspace_id}`);
    throw new Error(`organization ${actor.organizationId} or its default workspace not found`);
  }
  const key = withLimit(row);
  // A key made a moment ago has spent nothing: its usage is zero, without a query.
  return { secret, key: managedKeyOf(key, NO_USAGE(key.id)) };
}

/**
 * organizations.issueManagementKey (platform keys only): a new management key in the organization's
 * default workspace, for when it has none left that anyone holds. Its creator is the organization's
 * oldest admin (else its oldest member). The secret is returned once.
 */
export async function issueManagementKey(
  db: Db,
  input: { organization_id: string; name?: string | undefined },
  now: Date,
  audit: Audit,
): Promise<{ secret: string; key: ManagedKey }> {
  const organization = await platformOrganization(db, input.organization_id);
  const tenant = { organizationId: organization.id };
  // org_role sorts in its declared order: admins first.
  const creator = await db.organizationMember.findFirst({
    where: tenantWhere(tenant),
    orderBy: [{ role: 'asc' }, { created_at: 'asc' }, { id: 'asc' }],
  });
  if (!creator) throw new Invalid(`organization ${organization.id} has no member to record as the key's creator`, { reason: 'no member' });
  const secret = generateApiKey();
  const insert = createKeyQuery(
    organization.id,
    null,
    creator.user_id,
    { name: input.name ?? 'Management key', is_management_key: true },
    { id: randomUUID(), secret },
    now,
    audit,
    'organizations.issueManagementKey',
  );
  const [row] = await queryRows(db, insert.statement, insert.values);
  if (!row) throw new Error(`organization ${organization.id} or its default workspace not found`);
  return { secret, key: managedKeyOf(withLimit(row), NO_USAGE(row.id)) };
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
) {
  return {
    statement: CREATE_KEY,
    values: tenantValues(
      CREATE_KEY,
      { organizationId },
      key.id,
      workspaceId,
      creator,
      hashApiKey(key.secret),
      maskApiKey(key.secret),
      input.name,
      input.is_management_key ?? false,
      input.limit ?? null,
      input.limit_reset ?? null,
      input.include_byok_in_limit ?? false,
      // Timestamps as ISO text in UTC (node-postgres would write a Date in the process's time zone).
      input.expires_at ? new Date(input.expires_at).toISOString() : null,
      input.external?.user ?? null,
      input.external?.api_key ? hashApiKey(input.external.api_key) : null,
      now.toISOString(),
      scopesOf(input),
      ...auditValues(audit, action),
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
 * PATCH /keys/{hash}: changes a key of the caller's organization; another organization's key, or a
 * deleted one, is not found. The change applies to this process's next request at once (other
 * processes: within the key cache's TTL).
 */
export async function updateKey(db: Db, keys: KeyCache, actor: Actor, input: UpdateKeyInput, now: Date, audit: Audit): Promise<ManagedKey> {
  const { hash, scopes, ...rest } = input;
  const newScopes = scopes === undefined ? undefined : [...new Set(scopes ?? [])].sort();
  const changes = newScopes === undefined ? rest : { ...rest, scopes: newScopes };
  const update = async (tx: Prisma.TransactionClient) => {
    // The row as it was, locked until the change commits (the audit entry's `before`).
    const [before] = await rawRows(
      tx,
      KEY_BEFORE,
      Prisma.sql`
      SELECT name, disabled, "limit"::float8 AS "limit", limit_reset::text AS limit_reset, include_byok_in_limit, coalesce(scopes, '{}') AS scopes
      FROM api_keys WHERE ${tenantSql(actor)} AND hash = ${hash} AND deleted_at IS NULL FOR UPDATE`,
    );
    if (!before) return [];
    const rows = await tx.apiKey.updateManyAndReturn({ where: liveKey(actor, hash), data: changes });
    // Scopes are for management keys only (checked on the row, in the same transaction: nothing changes otherwise).
    if (rows[0] && !rows[0].is_management_key && (newScopes?.length ?? 0) > 0) {
      throw new Invalid('scopes are for management keys only', { reason: 'scopes on a regular key' });
    }
    const after = rows[0];
    if (after) {
      const is = { ...after, limit: after.limit === null ? null : Number(after.limit) };
      await appendAudit(tx, audit, { action: 'keys.update', targetType: 'key', targetId: hash, changes: changedFields(before, is, Object.keys(changes)) });
    }
    return rows;
  };
  // Disabling or scoping may take the organization's last unscoped management key: that is
  // checked, under its lock. Scopes on a regular key roll the update back.
  const guarded = changes.disabled === true || (newScopes?.length ?? 0) > 0;
  if (!guarded) {
    // Anything else is one statement: the row stays locked for it alone.
    const given = { ...rest, ...(newScopes === undefined ? {} : { scopes: newScopes }) } as Record<string, unknown>;
    const values = UPDATED_FIELDS.flatMap((field) => [field in given && given[field] !== undefined, given[field] ?? null]);
    const [row] = await queryRows(db, UPDATE_KEY, tenantValues(UPDATE_KEY, actor, hash, ...values, now.toISOString(), ...auditValues(audit, 'keys.update')));
    if (!row) throw new NotFound(`key ${hash}`);
    keys.forget(hash);
    const key = withLimit(row);
    return managedKeyOf(key, await usageOf(db, key.id, now));
  }
  const result = await db.$transaction((tx) => keepingManagementKey(tx, actor, now, update));
  const key = result[0];
  if (!key) throw new NotFound(`key ${hash}`);
  keys.forget(hash);
  return managedKey(db, key, now);
}

/**
 * POST /keys/{hash}/rotate: a new secret for a key of the caller's organization (another
 * organization's key, or a deleted one, is not found). The key keeps its stable hash and everything
 * else: name, limits, usage, guardrail assignments, allow-lists. The secrets in use keep working
 * for `grace_period_seconds` (default 0: they stop at once), then authenticate nothing: each
 * request checks its secret's end (KeyCache.find), so a grace period's end needs no announcement.
 * The label becomes the new secret's masked form; that update announces the key
 * ("key:<hash>"), so every process forgets the key's secrets it holds and reads their new ends.
 * One transaction: the key row is locked by its update, so two rotations of one key queue.
 */
export async function rotateKey(
  db: Db,
  keys: KeyCache,
  actor: Actor,
  input: RotateKeyInput,
  now: Date,
  audit: Audit,
): Promise<{ secret: string; key: ManagedKey }> {
  const secret = generateApiKey();
  const ends = new Date(now.getTime() + (input.grace_period_seconds ?? 0) * 1000);
  const row = await db.$transaction(async (tx) => {
    const [key] = await tx.apiKey.updateManyAndReturn({ where: liveKey(actor, input.hash), data: { label: maskApiKey(secret) } });
    if (!key) return undefined;
    // Secrets already ending sooner keep their end: a rotation never lengthens a grace period.
    await tx.apiKeySecret.updateMany({
      where: { api_key_id: key.id, OR: [{ expires_at: null }, { expires_at: { gt: ends } }] },
      data: { expires_at: ends },
    });
    await tx.apiKeySecret.create({
      data: { secret_hash: hashApiKey(secret), api_key_id: key.id, organization_id: key.organization_id, created_at: now },
    });
    await appendAudit(tx, audit, {
      action: 'keys.rotate',
      targetType: 'key',
      targetId: key.hash,
      changes: { after: { label: key.label, grace_period_seconds: input.grace_period_seconds ?? 0, previous_secrets_expire_at: ends.toISOString() } },
    });
    return key;
  });
  keys.forget(input.hash);
  if (!row) throw new NotFound(`key ${input.hash}`);
  return { secret, key: await managedKey(db, row, now) };
}

/** keys.secrets: a key's secrets, newest first, with their ends and last uses; another organization's key is not found. */
export async function keySecrets(db: Db, actor: Actor, hash: string): Promise<KeySecret[]> {
  const key = await db.apiKey.findFirst({
    where: liveKey(actor, hash),
    select: { secrets: { orderBy: [{ created_at: 'desc' }, { secret_hash: 'asc' }] } },
  });
  if (!key) throw new NotFound(`key ${hash}`);
  return key.secrets.map(
    (s) =>
      ({
        hash_prefix: s.secret_hash.slice(0, 12),
        current: s.expires_at === null,
        created_at: s.created_at.toISOString(),
        expires_at: s.expires_at ? s.expires_at.toISOString() : null,
        last_used_at: s.last_used_at ? s.last_used_at.toISOString() : null,
      }) satisfies KeySecret,
  );
}

/**
 * Runs `change` (which disables, deletes or scopes keys of the actor's organization) under the
 * organization's row lock, and refuses it (400, nothing changed) when it leaves the organization
 * without an enabled, unexpired, unscoped management key: nothing could then make it a new one but the
 * platform. The lock makes two such changes at once (two management keys disabling each other)
 * wait for each other, so that the second sees the first.
 */
export async function keepingManagementKey<T>(
  tx: Prisma.TransactionClient,
  actor: Tenant,
  now: Date,
  change: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  await tx.$executeRaw`SELECT 1 FROM organizations WHERE id = ${actor.organizationId} FOR UPDATE`;
  const result = await change(tx);
  const left = await tx.apiKey.count({
    where: {
      ...tenantWhere(actor),
      is_management_key: true,
      // Only an unscoped key can do everything, including making new keys of any scope.
      scopes: { isEmpty: true },
      disabled: false,
      deleted_at: null,
      OR: [{ expires_at: null }, { expires_at: { gt: now } }],
    },
  });
  if (left === 0) {
    throw new Invalid("the organization's last enabled, unscoped management key cannot be disabled, deleted or scoped", {
      reason: 'last management key',
    });
  }
  return result;
}

/**
 * DELETE /keys/{hash}: the key authenticates nothing from the next request on (this process at once;
 * others within the key cache's TTL, as the row is both disabled and marked deleted). The row stays,
 * so that its generations and spend history stay the organization's records; its guardrail
 * assignments go.
 */
export async function deleteKey(db: Db, keys: KeyCache, actor: Actor, hash: string, now: Date, audit: Audit): Promise<{ deleted: true }> {
  const deleted = await db.$transaction((tx) =>
    keepingManagementKey(tx, actor, now, async (tx) => {
      const [key] = await tx.apiKey.updateManyAndReturn({ where: liveKey(actor, hash), data: { deleted_at: now, disabled: true } });
      if (!key) return false;
      await tx.guardrailKeyAssignment.deleteMany({ where: { api_key_id: key.id } });
      await appendAudit(tx, audit, { action: 'keys.delete', targetType: 'key', targetId: key.hash, changes: removed({ name: key.name, label: key.label }) });
      return true;
    }),
  );
  keys.forget(hash);
  if (!deleted) throw new NotFound(`key ${hash}`);
  return { deleted: true };
}

/**
 * GET /keys: keys of one workspace (default: the default workspace), newest first; enabled ones
 * unless include_disabled. One statement whatever the number of keys or generations (KEYS_PAGE:
 * the keys with their usage from the daily rollups), and one more to resolve a workspace named.
 */
export async function listKeys(db: Db, actor: Actor, input: ListKeysInput, now: Date): Promise<ManagedKey[]> {
  // A hash-prefix lookup spans the organization unless a workspace is named; otherwise the
  // workspace named, or the organization's default (resolved in the statement).
  const named = input.workspace_id !== undefined ? (await resolveWorkspace(db, actor, input.workspace_id)).id : null;
  const page = keysPageQuery(actor.organizationId, named, input, now);
  const rows = await queryRows(db, page.statement, page.values);
  return rows.map((row) => managedKeyOf(withLimit(row), row));
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
      isoDay(starts.day),
      isoDay(starts.week),
      isoDay(starts.month),
      workspaceId,
      workspaceId === null && input.hash_prefix !== undefined,
      input.include_disabled ?? false,
      input.hash_prefix ?? null,
      input.offset ?? 0,
      input.limit ?? null,
    ),
  };
}

/** A key's columns as statements read them (KEY_COLUMNS), with the limit as Prisma reads it. */
function withLimit<Row extends { limit: string | null }>(row: Row): Omit<Row, 'limit'> & { limit: Prisma.Decimal | null } {
  return { ...row, limit: row.limit === null ? null : new Prisma.Decimal(row.limit) };
}

/** GET /keys/{hash}. */
export async function getKey(db: Db, actor: Actor, hash: string, now: Date): Promise<ManagedKey> {
  const key = await db.apiKey.findFirst({ where: liveKey(actor, hash) });
  if (!key) throw new NotFound(`key ${hash}`);
  return managedKey(db, key, now);
}
