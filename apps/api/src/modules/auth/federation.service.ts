// Federation policies: which external JWTs the token exchange (D12) trusts, and which key
// of the organization their access tokens act as. An organization's management keys manage its own
// policies (tRPC federationPolicies.*, `switchyard federation-policies`); a policy names a key of the
// same organization, never a platform key (platform keys are another table: no policy can name one).
import type { FederationPolicy as PolicyRow, Prisma } from '@switchyard/db';
import { IssuerJwkSetSchema, type CreateFederationPolicyInput, type FederationPolicy } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { assertMayActOnKey } from '../../access/ceiling.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfTenant, created } from '../audit/audit.js';
import { isUuid } from '../../access/workspaces.js';
import { Invalid, NotFound } from '../../lib/errors.js';
import { storedUrlProblem, type AllowedHost } from '../../upstream/index.js';

export { IssuerJwkSetSchema as JwkSetSchema };

/** An organization holds at most this many policies. */
export const MAX_POLICIES = 100;

type Row = PolicyRow & { api_key: { hash: string } };

function recordOf(row: Row): FederationPolicy {
  return {
    id: row.id,
    name: row.name,
    issuer: row.issuer,
    audience: row.audience,
    subject: row.subject,
    jwks_url: row.jwks_url,
    jwks: row.jwks === null ? null : IssuerJwkSetSchema.parse(row.jwks),
    key_hash: row.api_key.hash,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** A JWKS URL the exchange may fetch: the rule of every URL stored for later fetching (https; http only to an allowed loopback host). */
function checkedJwksUrl(value: string, allowedHosts: readonly AllowedHost[]): string {
  const problem = storedUrlProblem(value, allowedHosts);
  if (problem) throw new Invalid(`jwks_url: ${problem}`, { parameter: 'jwks_url', reason: problem });
  return new URL(value).href;
}

/**
 * A policy for a key of the caller's organization (named by its hash). Its JWKS URL follows the rule
 * of every URL stored for later fetching (the media settings' allowed hosts); at most MAX_POLICIES.
 */
export async function createFederationPolicy(
  deps: Uses<'db' | 'media' | Audited>,
  actor: Actor,
  input: CreateFederationPolicyInput,
): Promise<FederationPolicy> {
  const audit = auditOfTenant(actor, deps);
  const jwksUrl = input.jwks_url === undefined ? null : checkedJwksUrl(input.jwks_url, deps.media.upstreamAllowedHosts);
  return deps.db.$transaction(async (tx) => {
    // The organization's row lock: two creates cannot both take the last place.
    await tx.$executeRaw`SELECT 1 FROM organizations WHERE id = ${actor.organizationId} FOR UPDATE`;
    const key = await tx.apiKey.findFirst({
      where: { ...tenantWhere(actor), hash: input.key_hash, deleted_at: null },
      select: { id: true, is_management_key: true, scopes: true },
    });
    if (!key) throw new NotFound('no key with that hash in the organization');
    // The policy's tokens act as the key: naming it hands out what it holds (access/ceiling.ts).
    assertMayActOnKey(actor, key, 'name in a federation policy');
    const held = await tx.federationPolicy.count({ where: tenantWhere(actor) });
    if (held >= MAX_POLICIES) {
      throw new Invalid(`an organization holds at most ${MAX_POLICIES} federation policies`, { parameter: 'key_hash', reason: 'too many policies' });
    }
    const row = await tx.federationPolicy.create({
      data: {
        ...tenantData(actor),
        name: input.name ?? null,
        issuer: input.issuer,
        audience: input.audience,
        subject: input.subject,
        jwks_url: jwksUrl,
        jwks: input.jwks === undefined ? undefined : (input.jwks as Prisma.InputJsonObject),
        api_key_id: key.id,
      },
      include: { api_key: { select: { hash: true } } },
    });
    const record = recordOf(row);
    await appendAudit(tx, audit, { action: 'federationPolicies.create', targetType: 'federation_policy', targetId: row.id, changes: created(record) });
    return record;
  });
}

/** The organization's policies, oldest first, a page of them. */
export async function listFederationPolicies(
  deps: Uses<'db'>,
  actor: Actor,
  input: { offset: number; limit: number },
): Promise<{ data: FederationPolicy[]; total_count: number }> {
  const { db } = deps;
  const where = tenantWhere(actor);
  const [rows, total] = await Promise.all([
    db.federationPolicy.findMany({
      where,
      orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
      skip: input.offset,
      take: input.limit,
      include: { api_key: { select: { hash: true } } },
    }),
    db.federationPolicy.count({ where }),
  ]);
  return { data: rows.map(recordOf), total_count: total };
}

/** Deletes a policy: no new exchange under it; tokens already issued live until they expire (at most 15 minutes). */
export async function deleteFederationPolicy(deps: Uses<'db' | Audited>, actor: Actor, input: { id: string }): Promise<{ deleted: true }> {
  const audit = auditOfTenant(actor, deps);
  const { id } = input;
  if (!isUuid(id)) throw new NotFound('no federation policy with that id in the organization');
  await deps.db.$transaction(async (tx) => {
    const policy = await tx.federationPolicy.findFirst({
      where: { ...tenantWhere(actor), id },
      select: { api_key: { select: { id: true, is_management_key: true, scopes: true } } },
    });
    // Ending a key's policy ends what its workloads can do as the key: as disabling it.
    if (policy) assertMayActOnKey(actor, policy.api_key, 'end a federation policy of');
    const { count } = await tx.federationPolicy.deleteMany({ where: { ...tenantWhere(actor), id } });
    if (count === 0) throw new NotFound('no federation policy with that id in the organization');
    await appendAudit(tx, audit, { action: 'federationPolicies.delete', targetType: 'federation_policy', targetId: id });
  });
  return { deleted: true };
}
