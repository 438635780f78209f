// The keys of an organization (GET /key, /keys) and the platform's issueManagementKey. Services take
// (deps, actor, input) (decision 0037): a write's audit entry is made from the actor, and its time is
// the entry's (one deps.now() per operation). The statements are in keys-queries.ts, the records made
// from rows in keys-rows.ts.
import { Prisma, queryRows, rawRows, type ApiKey, type Db } from '@switchyard/db';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { CreateKeyInput, IssueManagementKeyInput, Key, KeySecret, ListKeysInput, ManagedKey, RotateKeyInput, UpdateKeyInput } from '@switchyard/schema';
import { Forbidden, Invalid, NotFound, Unauthorized } from '../../lib/errors.js';
import type { Actor, PlatformActor } from '../../access/callers.js';
import { tenantSql, tenantStatement, tenantValues, tenantWhere } from '../../access/tenancy.js';
import { platformOrganization, resolveWorkspace } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { generateApiKey, hashApiKey, maskApiKey } from '../../access/key-format.js';
import { appendAudit, auditInsertSql, auditOfPlatform, auditOfTenant, auditValues, changedFields, removed } from '../audit/audit.js';
import { createKeyQuery, KEY_COLUMNS, KEY_SELECT, keysPageQuery, usageOf } from './keys-queries.js';
import { limitAndUsageOf, managedKeyOf, NO_USAGE, withLimit } from './keys-rows.js';
import { keepingManagementKey } from './management-key-guard.js';
import { assertMayActOnKey, assertMayMakeKey, assertMayRescopeKey, holdsEverything, wantedKey } from '../../access/ceiling.js';

const RATE_LIMIT_NOTE = 'This field is deprecated and safe to ignore. Rate limits are not expressed per key.';

/** A key's changeable fields before PATCH /keys changes them (the audit entry's `before`). */
const KEY_BEFORE = z.object({
  name: z.string(),
  disabled: z.boolean(),
  limit: z.number().nullable(),
  limit_reset: z.string().nullable(),
  include_byok_in_limit: z.boolean(),
  scopes: z.array(z.string()),
});

/** The fields PATCH /keys may change: UPDATE_KEY takes each as a flag `:<field>_given` and a value `:new_<field>`. */
const UPDATED_FIELDS = ['name', 'disabled', 'limit', 'limit_reset', 'include_byok_in_limit', 'scopes'] as const;

/**
 * PATCH /keys/{hash} in one statement, when no management-key guard is needed: the row as it was
 * (locked), the update, and the audit entry with the fields that changed (`changedFields`' shape),
 * so that the row is locked for one statement only, as before the audit log. A field of
 * UPDATED_FIELDS changes when `:<field>_given`, to `:new_<field>`.
 */
const UPDATE_KEY = tenantStatement(
  'organization',
  (tenant) => `
  WITH old AS (
  SELECT id, name, disabled, "limit", limit_reset, include_byok_in_limit, coalesce(scopes, '{}') AS scopes
  FROM api_keys WHERE ${tenant.where()} AND hash = :hash AND deleted_at IS NULL
  FOR UPDATE
  ), k AS (
  UPDATE api_keys a SET
    name = CASE WHEN :name_given::boolean THEN :new_name::text ELSE a.name END,
    disabled = CASE WHEN :disabled_given::boolean THEN :new_disabled::boolean ELSE a.disabled END,
    "limit" = CASE WHEN :limit_given::boolean THEN :new_limit::numeric ELSE a."limit" END,
    limit_reset = CASE WHEN :limit_reset_given::boolean THEN :new_limit_reset::limit_reset ELSE a.limit_reset END,
    include_byok_in_limit = CASE WHEN :include_byok_in_limit_given::boolean THEN :new_include_byok_in_limit::boolean ELSE a.include_byok_in_limit END,
    scopes = CASE WHEN :scopes_given::boolean THEN :new_scopes::text[] ELSE a.scopes END,
    updated_at = :now::timestamptz
  FROM old WHERE a.id = old.id
  RETURNING a.*
  ), diff AS (
  SELECT f.field, f.was, f."is" FROM old, k, LATERAL (VALUES
    ('name', :name_given::boolean, to_jsonb(old.name), to_jsonb(k.name)),
    ('disabled', :disabled_given::boolean, to_jsonb(old.disabled), to_jsonb(k.disabled)),
    ('limit', :limit_given::boolean, to_jsonb(old."limit"::float8), to_jsonb(k."limit"::float8)),
    ('limit_reset', :limit_reset_given::boolean, to_jsonb(old.limit_reset::text), to_jsonb(k.limit_reset::text)),
    ('include_byok_in_limit', :include_byok_in_limit_given::boolean, to_jsonb(old.include_byok_in_limit), to_jsonb(k.include_byok_in_limit)),
    ('scopes', :scopes_given::boolean, to_jsonb(old.scopes), to_jsonb(coalesce(k.scopes, '{}')))
  ) AS f(field, given, was, "is")
  WHERE f.given AND f.was IS DISTINCT FROM f."is"
  ), audited AS (
  ${auditInsertSql('k', {
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

/**
 * GET /key. The key row the caller authenticated with may be up to a second old (KeyCache), and
 * its spend figures up to USAGE_CACHE_MS (UsageCache), read in one query whose cost does not grow
 * with the number of generations.
 */
export async function getKeyInfo(deps: Uses<'db' | 'usage' | 'now'>, actor: Actor): Promise<Key> {
  if (actor.session?.method === 'oidc') {
    const reason = 'a session of the identity provider has no key: sessions.current says who it is';
    throw new Forbidden(reason, undefined, { reason });
  }
  const key = actor.key;
  const u = await deps.usage.of(deps.db, key.id, deps.now());
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

/** The Managed key record of a key row, with its usage. */
async function managedKey(db: Db, row: ApiKey, now: Date): Promise<ManagedKey> {
  return managedKeyOf(row, await usageOf(db, row.id, now));
}

/** A key of the caller's organization that is not deleted; 404 otherwise (another organization's too). */
const liveKey = (actor: Actor, hash: string) => ({ hash, ...tenantWhere(actor), deleted_at: null });

const KEY_AUTHORITY = z.object({ id: z.string(), is_management_key: z.boolean(), scopes: z.array(z.string()) });

/**
 * The authority of a live key of the caller's organization, locked until the transaction ends (so
 * that what the ceiling checked is what the change acts on); undefined when there is none.
 */
async function lockedAuthority(tx: Prisma.TransactionClient, actor: Actor, hash: string): Promise<z.infer<typeof KEY_AUTHORITY> | undefined> {
  const [row] = await rawRows(
    tx,
    KEY_AUTHORITY,
    Prisma.sql`SELECT id::text AS id, is_management_key, coalesce(scopes, '{}') AS scopes
      FROM api_keys WHERE ${tenantSql(actor)} AND hash = ${hash} AND deleted_at IS NULL FOR UPDATE`,
  );
  return row;
}

/** The ceiling of an act on a key (access/ceiling.ts), checked on its locked row; an unscoped management key needs no read. */
async function checkedAct(tx: Prisma.TransactionClient, actor: Actor, hash: string, action: string): Promise<void> {
  if (holdsEverything(actor)) return;
  const target = await lockedAuthority(tx, actor, hash);
  if (target) assertMayActOnKey(actor, target, action);
}

/**
 * POST /keys: a key in the named workspace (default: the organization's default workspace). Its
 * creator is the member named, or the caller key's creator. The secret is returned once.
 */
export async function createKey(deps: Uses<'db' | Audited>, actor: Actor, input: CreateKeyInput): Promise<{ secret: string; key: ManagedKey }> {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  // Never more than the caller holds (access/ceiling.ts): 403 before anything is read or made.
  assertMayMakeKey(actor, wantedKey(input.is_management_key === true, input.scopes));
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
  deps: Uses<'db' | Audited>,
  actor: PlatformActor,
  input: IssueManagementKeyInput,
): Promise<{ secret: string; key: ManagedKey }> {
  const { db } = deps;
  const audit = auditOfPlatform(actor, deps);
  const now = audit.at;
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
 * PATCH /keys/{hash}: changes a key of the caller's organization; another organization's key, or a
 * deleted one, is not found. The change applies to this process's next request at once (other
 * processes: within the key cache's TTL).
 */
export async function updateKey(deps: Uses<'db' | 'keys' | Audited>, actor: Actor, input: UpdateKeyInput): Promise<ManagedKey> {
  const { db, keys } = deps;
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
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
    if (!holdsEverything(actor)) {
      const target = await lockedAuthority(tx, actor, hash);
      if (target && newScopes !== undefined) assertMayRescopeKey(actor, target, newScopes);
      else if (target) assertMayActOnKey(actor, target, 'change');
    }
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
  // checked, under its lock. Scopes on a regular key roll the update back. A caller below the
  // ceiling has the target checked on its locked row (access/ceiling.ts).
  const guarded = changes.disabled === true || (newScopes?.length ?? 0) > 0 || !holdsEverything(actor);
  if (!guarded) {
    // Anything else is one statement: the row stays locked for it alone.
    const given = { ...rest, ...(newScopes === undefined ? {} : { scopes: newScopes }) } as Record<string, unknown>;
    const values: Record<string, unknown> = { hash, now: now.toISOString(), ...auditValues(audit, 'keys.update') };
    for (const field of UPDATED_FIELDS) {
      values[`${field}_given`] = field in given && given[field] !== undefined;
      values[`new_${field}`] = given[field] ?? null;
    }
    const [row] = await queryRows(db, UPDATE_KEY, tenantValues(UPDATE_KEY, actor, values));
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
export async function rotateKey(deps: Uses<'db' | 'keys' | Audited>, actor: Actor, input: RotateKeyInput): Promise<{ secret: string; key: ManagedKey }> {
  const { db, keys } = deps;
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  const secret = generateApiKey();
  const ends = new Date(now.getTime() + (input.grace_period_seconds ?? 0) * 1000);
  const row = await db.$transaction(async (tx) => {
    await checkedAct(tx, actor, input.hash, 'rotate');
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
export async function keySecrets(deps: Uses<'db'>, actor: Actor, input: { hash: string }): Promise<KeySecret[]> {
  const { hash } = input;
  const key = await deps.db.apiKey.findFirst({
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
 * DELETE /keys/{hash}: the key authenticates nothing from the next request on (this process at once;
 * others within the key cache's TTL, as the row is both disabled and marked deleted). The row stays,
 * so that its generations and spend history stay the organization's records; its guardrail
 * assignments go.
 */
export async function deleteKey(deps: Uses<'db' | 'keys' | Audited>, actor: Actor, input: { hash: string }): Promise<{ deleted: true }> {
  const { keys } = deps;
  const { hash } = input;
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  const deleted = await deps.db.$transaction((tx) =>
    keepingManagementKey(tx, actor, now, async (tx) => {
      await checkedAct(tx, actor, hash, 'delete');
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
 * unless include_disabled. One statement whatever the number of keys or generations (KEYS_PAGE,
 * keys-queries.ts: the keys with their usage from the daily rollups), and one more to resolve a
 * workspace named.
 */
export async function listKeys(deps: Uses<'db' | 'now'>, actor: Actor, input: ListKeysInput): Promise<ManagedKey[]> {
  const { db } = deps;
  const now = deps.now();
  // A hash-prefix lookup spans the organization unless a workspace is named; otherwise the
  // workspace named, or the organization's default (resolved in the statement).
  const named = input.workspace_id !== undefined ? (await resolveWorkspace(db, actor, input.workspace_id)).id : null;
  const page = keysPageQuery(actor.organizationId, named, input, now);
  const rows = await queryRows(db, page.statement, page.values);
  return rows.map((row) => managedKeyOf(withLimit(row), row));
}

/** GET /keys/{hash}. */
export async function getKey(deps: Uses<'db' | 'now'>, actor: Actor, input: { hash: string }): Promise<ManagedKey> {
  const { db } = deps;
  const now = deps.now();
  const key = await db.apiKey.findFirst({ where: liveKey(actor, input.hash) });
  if (!key) throw new NotFound(`key ${input.hash}`);
  return managedKey(db, key, now);
}
