// SCIM bearer tokens: an organization's identity provider authenticates /scim/v2 with one. Only
// the SHA-256 hex of a token is stored; the token is shown once, when it is made. A token is no API
// key: its hash is in scim_tokens, not api_keys, so /api/v1 and /trpc refuse it, and /scim/v2
// refuses API keys.
import { randomBytes } from 'node:crypto';
import type { ScimToken as TokenRow } from '@switchyard/db';
import type { ScimToken, ScimTokenIdInput } from '@switchyard/schema';
import type { Actor, AnonymousCaller } from '../../access/callers.js';
import { tenantData, tenantWhere, type Tenant } from '../../access/tenancy.js';
import { isUuid } from '../../access/workspaces.js';
import { assertHoldsEverything, assertWithinScopes, SCIM_TOKEN_SCOPES } from '../../access/ceiling.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { NotFound } from '../../lib/errors.js';
import { hashApiKey } from '../../access/key-format.js';
import { appendAudit, auditOfTenant, created, removed } from '../audit/audit.js';

export const SCIM_TOKEN_PREFIX = 'sy-scim-v1-';

function tokenOf(row: TokenRow): ScimToken {
  return {
    id: row.id,
    label: row.label,
    creator_user_id: row.creator_user_id,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
  } satisfies ScimToken;
}

/**
 * Makes a token for the caller's organization; the answer is the only place the token appears (its
 * audit entry names it by id and masked label, never by the token or its hash).
 */
export async function createScimToken(deps: Uses<'db' | Audited>, actor: Actor): Promise<{ token: string; data: ScimToken }> {
  // A token acts on the whole directory as an admin would: it deactivates any person, org:admin
  // included, disables their keys, and puts people in groups whose mappings grant a workspace's
  // admin role. No scoped key holds that much (access/ceiling.ts), so only an unscoped key makes one.
  assertHoldsEverything(actor, 'make a SCIM token (it deactivates any person, admins included, and grants roles through group mappings)');
  const audit = auditOfTenant(actor, deps);
  const secret = randomBytes(32).toString('hex');
  const token = SCIM_TOKEN_PREFIX + secret;
  const row = await deps.db.$transaction(async (tx) => {
    const row = await tx.scimToken.create({
      data: {
        ...tenantData(actor),
        hash: hashApiKey(token),
        label: `${SCIM_TOKEN_PREFIX}${secret.slice(0, 3)}...${secret.slice(-3)}`,
        creator_user_id: actor.userId,
        created_at: audit.at,
      },
    });
    await appendAudit(tx, audit, {
      action: 'scim.createToken',
      targetType: 'scim_token',
      targetId: row.id,
      changes: created({ label: row.label, creator_user_id: row.creator_user_id }),
    });
    return row;
  });
  return { token, data: tokenOf(row) };
}

/** The organization's tokens, oldest first (a handful per organization: no pages). */
export async function listScimTokens(deps: Uses<'db'>, actor: Actor): Promise<{ data: ScimToken[] }> {
  const rows = await deps.db.scimToken.findMany({ where: tenantWhere(actor), orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
  return { data: rows.map(tokenOf) };
}

/** Revokes (deletes) the organization's token: it authenticates nothing from the next request on. */
export async function revokeScimToken(deps: Uses<'db' | Audited>, actor: Actor, input: ScimTokenIdInput): Promise<{ deleted: true }> {
  assertWithinScopes(actor, SCIM_TOKEN_SCOPES, 'a SCIM token (to revoke it)');
  const audit = auditOfTenant(actor, deps);
  if (!isUuid(input.id)) throw new NotFound(`scim token ${input.id}`);
  const where = { id: input.id.toLowerCase(), ...tenantWhere(actor) };
  await deps.db.$transaction(async (tx) => {
    const [gone] = await tx.scimToken.findMany({ where, select: { id: true, label: true } });
    const { count } = gone ? await tx.scimToken.deleteMany({ where }) : { count: 0 };
    if (!gone || count === 0) throw new NotFound(`scim token ${input.id}`);
    await appendAudit(tx, audit, { action: 'scim.revokeToken', targetType: 'scim_token', targetId: gone.id, changes: removed({ label: gone.label }) });
  });
  return { deleted: true };
}

/** The SCIM caller: the organization a token belongs to. */
export interface ScimCaller extends Tenant {
  tokenId: string;
  /** The token's masked label (the audit log names the token by it). */
  label: string;
}

/**
 * The SCIM caller of a /scim/v2 request: the organization whose token hashes to `input.hash`, or null
 * (unknown, revoked, or its organization disabled). Anonymous: the token is its only credential.
 * Notes the token's last use (at most once a minute).
 */
export async function scimCallerOf(deps: Uses<'db' | 'now'>, _actor: AnonymousCaller, input: { hash: string }): Promise<ScimCaller | null> {
  const { db } = deps;
  const { hash } = input;
  const now = deps.now();
  const row = await db.scimToken.findUnique({
    where: { hash },
    select: { id: true, label: true, organization_id: true, last_used_at: true, organization: { select: { disabled_at: true } } },
  });
  // A disabled organization's tokens are refused, as its keys are.
  if (!row || row.organization.disabled_at) return null;
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() > 60_000) {
    await db.scimToken.updateMany({ where: { id: row.id }, data: { last_used_at: now } });
  }
  return { tokenId: row.id, label: row.label, organizationId: row.organization_id };
}
