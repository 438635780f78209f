// BYOK provider credentials. The provider secret is sealed (AES-256-GCM, see secret-box.ts) before it
// reaches the database and is never returned or logged; the record carries only its masked label.
// Every write appends its audit entry in its own transaction, made from the actor and deps.
import { randomUUID } from 'node:crypto';
import type { ByokCredential as ByokRow, Db } from '@switchyard/db';
import type { ByokCredential, CreateByokInput, ListByokInput, UpdateByokInput } from '@switchyard/schema';
import { Invalid, NotFound } from '../../lib/errors.js';
import { jsonList, listOrNull } from '../../lib/json-list.js';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import { defaultWorkspaceId, findOwned, resolveWorkspace } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfTenant, changedFields, created, removed } from '../audit/audit.js';
import { pageOf } from '../pages.js';
import { resealDestinationSecrets } from '../destinations/destinations-secrets.js';
import { resealByokSecrets } from './byok-reseal.js';

/**
 * `sk-...AbCd`: the first 3 characters, "...", the last 4 (compat.md), for keys of 28 characters or
 * more. A label never reveals more than a quarter of the secret: shorter keys show fewer characters,
 * the last ones first (they tell keys apart), e.g. `...78` for an 8-character key.
 */
function maskProviderKey(secret: string): string {
  const budget = Math.floor(secret.length / 4);
  const last = Math.min(4, budget);
  const first = Math.min(3, budget - last);
  return `${secret.slice(0, first)}...${last > 0 ? secret.slice(-last) : ''}`;
}

function credentialOf(row: ByokRow): ByokCredential {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    label: row.label,
    provider: row.provider,
    disabled: row.disabled,
    is_fallback: row.is_fallback,
    sort_order: row.sort_order,
    allowed_api_key_hashes: listOrNull(row.allowed_api_key_hashes),
    allowed_models: listOrNull(row.allowed_models),
    allowed_user_ids: listOrNull(row.allowed_user_ids),
    declared_zdr: row.declared_zdr,
    is_byok_only: row.is_byok_only,
    is_required: row.is_required,
    created_at: row.created_at.toISOString(),
  } satisfies ByokCredential;
}

/** The organization's live credential; a non-UUID, foreign or deleted id is simply not found. */
async function findCredential(db: Db, actor: Actor, id: string): Promise<ByokRow> {
  return findOwned(actor, 'byok credential', id, (where) => db.byokCredential.findFirst({ where: { ...where, deleted_at: null } }));
}

export async function getByok(deps: Uses<'db'>, actor: Actor, input: { id: string }): Promise<ByokCredential> {
  return credentialOf(await findCredential(deps.db, actor, input.id));
}

/** A named workspace, or the organization's default one (admin-api.md A24, A25). */
async function workspaceOf(db: Db, actor: Actor, ref: string | undefined) {
  return resolveWorkspace(db, actor, ref ?? (await defaultWorkspaceId(db, actor)));
}

/** allowed_api_key_hashes must name live keys of the caller's organization: any other hash is a 400. */
async function assertOwnKeyHashes(db: Db, actor: Actor, hashes: string[] | null | undefined): Promise<void> {
  if (!hashes) return;
  const wanted = [...new Set(hashes)];
  const found = await db.apiKey.findMany({
    where: { ...tenantWhere(actor), deleted_at: null, hash: { in: wanted } },
    select: { hash: true },
  });
  const known = new Set(found.map((row) => row.hash));
  const unknown = wanted.filter((hash) => !known.has(hash));
  if (unknown.length > 0) {
    throw new Invalid("allowed_api_key_hashes names keys that are not the organization's", {
      reason: 'unknown or foreign key hashes',
      invalid_api_key_hashes: unknown,
    });
  }
}

/**
 * GET /byok: the live credentials that apply in one workspace (default: the default workspace), in
 * routing order: its own, and the organization's for every workspace (workspace_id null).
 */
export async function listByok(deps: Uses<'db'>, actor: Actor, input: ListByokInput) {
  const { db } = deps;
  const workspace = await workspaceOf(db, actor, input.workspace_id);
  const where = {
    ...tenantWhere(actor),
    OR: [{ workspace_id: workspace.id }, { workspace_id: null }],
    deleted_at: null,
    ...(input.provider ? { provider: input.provider } : {}),
  };
  return pageOf(
    input,
    (slice) => db.byokCredential.findMany({ where, orderBy: [{ provider: 'asc' }, { sort_order: 'asc' }, { created_at: 'asc' }, { id: 'asc' }], ...slice }),
    () => db.byokCredential.count({ where }),
    credentialOf,
  );
}

/** POST /byok; `workspace_id: null` makes a credential for every workspace of the organization. */
export async function createByok(deps: Uses<'db' | 'secrets' | Audited>, actor: Actor, input: CreateByokInput): Promise<ByokCredential> {
  const audit = auditOfTenant(actor, deps);
  const { db, secrets: box } = deps;
  const workspace = input.workspace_id === null ? null : await workspaceOf(db, actor, input.workspace_id);
  await assertOwnKeyHashes(db, actor, input.allowed_api_key_hashes);
  // The id is chosen here so that it can bind the ciphertext to this row.
  const id = randomUUID();
  const row = await db.$transaction(async (tx) => {
    const row = await tx.byokCredential.create({
      data: {
        id,
        ...tenantData(actor),
        workspace_id: workspace?.id ?? null,
        name: input.name ?? null,
        provider: input.provider,
        label: maskProviderKey(input.key),
        secret_ciphertext: box.seal(input.key, id),
        disabled: input.disabled ?? false,
        is_fallback: input.is_fallback ?? false,
        sort_order: input.sort_order ?? 0,
        declared_zdr: input.declared_zdr ?? null,
        is_byok_only: input.is_byok_only ?? false,
        is_required: input.is_required ?? false,
        allowed_api_key_hashes: jsonList(input.allowed_api_key_hashes ?? null),
        allowed_models: jsonList(input.allowed_models ?? null),
        allowed_user_ids: jsonList(input.allowed_user_ids ?? null),
      },
    });
    // The secret as answers show it: its masked label.
    await appendAudit(tx, audit, { action: 'byok.create', targetType: 'byok_credential', targetId: row.id, changes: created(credentialOf(row)) });
    return row;
  });
  return credentialOf(row);
}

/**
 * PATCH /byok/{id}: changes the fields given; `key` replaces the sealed secret in place (and the
 * label). The write is conditional on the row being live, so a concurrent delete wins.
 */
export async function updateByok(deps: Uses<'db' | 'secrets' | Audited>, actor: Actor, input: UpdateByokInput): Promise<ByokCredential> {
  const audit = auditOfTenant(actor, deps);
  const { db, secrets: box } = deps;
  const existing = await findCredential(db, actor, input.id);
  const { id: _id, key, allowed_api_key_hashes, allowed_models, allowed_user_ids, ...flags } = input;
  if ((flags.is_fallback ?? existing.is_fallback) && (flags.is_byok_only ?? existing.is_byok_only)) {
    throw new Invalid('is_fallback cannot be combined with is_byok_only', { reason: 'is_fallback with is_byok_only' });
  }
  await assertOwnKeyHashes(db, actor, allowed_api_key_hashes);
  const row = await db.$transaction(async (tx) => {
    const [row] = await tx.byokCredential.updateManyAndReturn({
      where: { id: existing.id, deleted_at: null },
      data: {
        ...flags,
        ...(key === undefined ? {} : { label: maskProviderKey(key), secret_ciphertext: box.seal(key, existing.id) }),
        allowed_api_key_hashes: jsonList(allowed_api_key_hashes),
        allowed_models: jsonList(allowed_models),
        allowed_user_ids: jsonList(allowed_user_ids),
      },
    });
    if (!row) throw new NotFound(`byok credential ${input.id}`);
    // A new key shows as its masked label, as answers show it.
    const fields = Object.keys(input).flatMap((field) => (field === 'id' ? [] : field === 'key' ? ['label'] : [field]));
    await appendAudit(tx, audit, {
      action: 'byok.update',
      targetType: 'byok_credential',
      targetId: row.id,
      changes: changedFields(credentialOf(existing), credentialOf(row), fields),
    });
    return row;
  });
  return credentialOf(row);
}

/**
 * DELETE /byok/{id}: the sealed secret is destroyed (set to null) and the record marked deleted (at
 * the audit entry's time); it is no longer listed or found. The row stays for the generations that used it.
 */
export async function deleteByok(deps: Uses<'db' | Audited>, actor: Actor, input: { id: string }): Promise<{ deleted: true }> {
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  const { db } = deps;
  const existing = await findCredential(db, actor, input.id);
  await db.$transaction(async (tx) => {
    const { count } = await tx.byokCredential.updateMany({
      where: { id: existing.id, deleted_at: null },
      data: { secret_ciphertext: null, disabled: true, deleted_at: now },
    });
    if (count === 0) throw new NotFound(`byok credential ${input.id}`);
    await appendAudit(tx, audit, {
      action: 'byok.delete',
      targetType: 'byok_credential',
      targetId: existing.id,
      changes: removed({ name: existing.name, provider: existing.provider, label: existing.label }),
    });
  });
  return { deleted: true };
}

/**
 * byok.resealSecrets: every secret of the organization sealed by an older key (BYOK keys, destination
 * secrets), in one transaction with its audit entry (the counts; never a secret or a ciphertext).
 */
export async function resealOrganizationSecrets(deps: Uses<'db' | 'secrets' | Audited>, actor: Actor): Promise<{ resealed: number }> {
  const audit = auditOfTenant(actor, deps);
  const box = deps.secrets;
  return deps.db.$transaction(
    async (tx) => {
      const byok = await resealByokSecrets(tx, box, actor);
      const destinations = await resealDestinationSecrets(tx, box, actor);
      const resealed = byok.resealed + destinations.resealed;
      await appendAudit(tx, audit, {
        action: 'byok.resealSecrets',
        targetType: 'organization',
        targetId: actor.organizationId,
        changes: { after: { resealed, byok_secrets: byok.resealed, destination_secrets: destinations.resealed } },
      });
      return { resealed };
    },
    { timeout: 60_000, maxWait: 30_000 },
  );
}
