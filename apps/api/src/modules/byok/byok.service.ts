// BYOK provider credentials. The provider secret is sealed (AES-256-GCM, see secret-box.ts) before it
// reaches the database and is never returned or logged; the record carries only its masked label.
import { randomUUID } from 'node:crypto';
import { Prisma, type ByokCredential as ByokRow, type Db } from '@switchyard/db';
import type { ByokCredential, CreateByokInput, DisableByokInput, ListByokInput, RotateByokSecretInput } from '@switchyard/schema';
import { NotFound } from '../../errors.js';
import { jsonList, listOrNull } from '../../json-list.js';
import type { Actor } from '../../access/callers.js';
import { isUuid, resolveWorkspaceOrOwn } from '../../access/workspaces.js';
import type { SecretBox } from './secret-box.js';

/**
 * `sk-...AbCd`: the first 3 characters, "...", the last 4 (compat.md), for keys of 28 characters or
 * more. A label never reveals more than a quarter of the secret: shorter keys show fewer characters,
 * the last ones first (they tell keys apart), e.g. `...78` for an 8-character key.
 */
export function maskProviderKey(secret: string): string {
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

/** The organization's credential; a non-UUID or foreign id is simply not found. */
async function findCredential(db: Db, actor: Actor, id: string): Promise<ByokRow> {
  const row = isUuid(id)
    ? await db.byokCredential.findFirst({ where: { id: id.toLowerCase(), organization_id: actor.organizationId } })
    : null;
  if (!row) throw new NotFound(`byok credential ${id}`);
  return row;
}

export async function getByok(db: Db, actor: Actor, input: { id: string }): Promise<ByokCredential> {
  return credentialOf(await findCredential(db, actor, input.id));
}

/** Internal: a workspace's credentials in routing order (provider, then sort_order). */
export async function listByok(db: Db, actor: Actor, input: ListByokInput) {
  const workspace = await resolveWorkspaceOrOwn(db, actor, input.workspace_id);
  const where = { workspace_id: workspace.id };
  const [rows, total] = await Promise.all([
    db.byokCredential.findMany({
      where,
      orderBy: [{ provider: 'asc' }, { sort_order: 'asc' }, { created_at: 'asc' }, { id: 'asc' }],
      skip: input.offset,
      take: input.limit,
    }),
    db.byokCredential.count({ where }),
  ]);
  return { data: rows.map(credentialOf), total_count: total };
}

export async function createByok(db: Db, box: SecretBox, actor: Actor, input: CreateByokInput): Promise<ByokCredential> {
  const workspace = await resolveWorkspaceOrOwn(db, actor, input.workspace_id);
  // The id is chosen here so that it can bind the ciphertext to this row.
  const id = randomUUID();
  const row = await db.byokCredential.create({
    data: {
      id,
      organization_id: actor.organizationId,
      workspace_id: workspace.id,
      name: input.name,
      provider: input.provider,
      label: maskProviderKey(input.key),
      secret_ciphertext: box.seal(input.key, id),
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
  return credentialOf(row);
}

export async function rotateByokSecret(
  db: Db,
  box: SecretBox,
  actor: Actor,
  input: RotateByokSecretInput,
): Promise<ByokCredential> {
  const existing = await findCredential(db, actor, input.id);
  const row = await db.byokCredential.update({
    where: { id: existing.id },
    data: { label: maskProviderKey(input.key), secret_ciphertext: box.seal(input.key, existing.id) },
  });
  return credentialOf(row);
}

export async function disableByok(db: Db, actor: Actor, input: DisableByokInput): Promise<ByokCredential> {
  const existing = await findCredential(db, actor, input.id);
  const row = await db.byokCredential.update({ where: { id: existing.id }, data: { disabled: input.disabled } });
  return credentialOf(row);
}

/**
 * After a key rotation (a new key first in SWITCHYARD_SECRET_KEY): re-encrypts the organization's
 * secrets still sealed by an older key. Returns how many were re-encrypted.
 */
export async function resealByokSecrets(db: Db, box: SecretBox, actor: Actor): Promise<{ resealed: number }> {
  const rows = await db.byokCredential.findMany({
    where: { organization_id: actor.organizationId, NOT: { secret_ciphertext: { startsWith: `v1.${box.currentKeyId}.` } } },
    select: { id: true, secret_ciphertext: true },
  });
  for (const row of rows) {
    // Conditional on the ciphertext read, so a concurrent rotateSecret is never overwritten.
    await db.byokCredential.updateMany({
      where: { id: row.id, secret_ciphertext: row.secret_ciphertext },
      data: { secret_ciphertext: box.reseal(row.secret_ciphertext, row.id) },
    });
  }
  return { resealed: rows.length };
}
