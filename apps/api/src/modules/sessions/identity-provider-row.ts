// The stored identity provider, as the settings service and the sign-in both read it.
import type { Db, OidcProvider } from '@switchyard/db';
import { tenantWhere, type Tenant } from '../../access/tenancy.js';

/** What the client secret's ciphertext is bound to (a ciphertext copied onto another organization's row does not open). */
export const clientSecretAd = (organizationId: string) => `oidc-client-secret:${organizationId}`;

/** The row with its settings, for the sign-in (null: the organization has none). */
export function providerOf(db: Db, tenant: Tenant): Promise<OidcProvider | null> {
  return db.oidcProvider.findUnique({ where: tenantWhere(tenant) });
}
