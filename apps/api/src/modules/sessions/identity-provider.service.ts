// The organization's OpenID Connect identity provider (docs/sessions.md): set, read and delete
// (sessions.identityProvider, sessions.setIdentityProvider, sessions.deleteIdentityProvider). The
// client secret is sealed with the secret box, as BYOK keys are, bound to the organization's id,
// and never answered (a masked label and `has_secret`). Setting or deleting it decides who signs in
// as the organization's people, admins among them, so it needs an unscoped management key (the
// ceiling), as a SCIM token does.
import type { OidcProvider } from '@switchyard/db';
import { OIDC_CALLBACK_PATH, SESSION_PREFIX, type IdentityProvider, type SetIdentityProviderInput } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { assertHoldsEverything } from '../../access/ceiling.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import type { Uses } from '../../trpc/context.js';
import { storedUrlProblem } from '../../upstream/index.js';
import { Invalid } from '../../lib/errors.js';
import { appendAudit, auditOfTenant } from '../audit/audit.js';
import { maskSecret } from '../destinations/destinations-secrets.js';
import { clientSecretAd, providerOf } from './identity-provider-row.js';

function answerOf(row: OidcProvider): IdentityProvider {
  return {
    organization_id: row.organization_id,
    issuer: row.issuer,
    client_id: row.client_id,
    has_secret: true,
    client_secret_label: row.client_secret_label,
    allowed_email_domains: row.allowed_email_domains,
    redirect_uri_path: `${SESSION_PREFIX}${OIDC_CALLBACK_PATH}`,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The organization's identity provider, or null. */
export async function getIdentityProvider(deps: Uses<'db'>, actor: Actor): Promise<{ data: IdentityProvider | null }> {
  const row = await providerOf(deps.db, actor);
  return { data: row ? answerOf(row) : null };
}

/**
 * Sets (creates or replaces) the organization's identity provider. The issuer must be a URL the
 * server may fetch later (https, or http to a loopback host UPSTREAM_ALLOWED_HOSTS allows): its
 * discovery, keys and token endpoint are fetched under the upstream policy at each sign-in.
 */
export async function setIdentityProvider(
  deps: Uses<'db' | 'secrets' | 'media' | 'requestId' | 'clientAddress' | 'now'>,
  actor: Actor,
  input: SetIdentityProviderInput,
): Promise<{ data: IdentityProvider }> {
  assertHoldsEverything(actor, "set the organization's identity provider");
  const problem = storedUrlProblem(input.issuer, deps.media.upstreamAllowedHosts);
  if (problem) throw new Invalid(`issuer: ${problem}`);
  const organizationId = actor.organizationId;
  const domains = [...new Set(input.allowed_email_domains)];
  const columns = {
    issuer: input.issuer,
    client_id: input.client_id,
    client_secret_sealed: deps.secrets.seal(input.client_secret, clientSecretAd(organizationId)),
    client_secret_label: maskSecret(input.client_secret),
    allowed_email_domains: domains,
  };
  const audit = auditOfTenant(actor, deps);
  const row = await deps.db.$transaction(async (tx) => {
    const before = await tx.oidcProvider.findUnique({ where: tenantWhere(actor) });
    const saved = await tx.oidcProvider.upsert({
      where: tenantWhere(actor),
      create: { ...tenantData(actor), ...columns },
      update: columns,
    });
    const shown = (r: OidcProvider) => ({
      issuer: r.issuer,
      client_id: r.client_id,
      client_secret_label: r.client_secret_label,
      allowed_email_domains: r.allowed_email_domains,
    });
    await appendAudit(tx, audit, {
      action: 'sessions.setIdentityProvider',
      targetType: 'identity_provider',
      targetId: organizationId,
      changes: before ? { before: shown(before), after: shown(saved) } : { after: shown(saved) },
    });
    return saved;
  });
  return { data: answerOf(row) };
}

/** Deletes the organization's identity provider: nobody signs in through it any more (sessions it made run to their end, or a removal). */
export async function deleteIdentityProvider(deps: Uses<'db' | 'requestId' | 'clientAddress' | 'now'>, actor: Actor): Promise<{ deleted: boolean }> {
  assertHoldsEverything(actor, "delete the organization's identity provider");
  const audit = auditOfTenant(actor, deps);
  return deps.db.$transaction(async (tx) => {
    const before = await tx.oidcProvider.findUnique({ where: tenantWhere(actor) });
    if (before) await tx.oidcProvider.delete({ where: tenantWhere(actor) });
    // One entry per call, as everywhere: a call that found none is an entry with no fields.
    await appendAudit(tx, audit, {
      action: 'sessions.deleteIdentityProvider',
      targetType: 'identity_provider',
      targetId: actor.organizationId,
      ...(before ? { changes: { before: { issuer: before.issuer, client_id: before.client_id } } } : {}),
    });
    return { deleted: before !== null };
  });
}
