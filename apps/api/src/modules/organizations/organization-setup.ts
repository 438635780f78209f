// A new organization's rows, written in the caller's transaction: by organizations.create
// (organizations.service.ts) and by the first start's bootstrap (bootstrap.service.ts).
import type { Prisma } from '@switchyard/db';
import type { CreateOrganizationInput, CreateOrganizationOutput } from '@switchyard/schema';
import { tenantData } from '../../access/tenancy.js';
import { newId } from '../../lib/ids.js';
import { generateApiKey, hashApiKey, maskApiKey } from '../../access/key-format.js';
import { userIdForEmail } from '../members/users.js';
import { organizationOf } from './organization-rows.js';

/**
 * An organization with its `default` workspace, an owner (org:admin, in the default workspace) and
 * a management key owned by them, inside the caller's transaction. The key's secret is returned once.
 */
export async function createOrganizationIn(
  tx: Prisma.TransactionClient,
  input: CreateOrganizationInput & { managementKey?: string | undefined },
): Promise<CreateOrganizationOutput> {
  const organizationId = newId('org');
  const secret = input.managementKey ?? generateApiKey();
  await tx.organization.create({ data: { id: organizationId, name: input.name } });
  const userId = await userIdForEmail(tx, input.owner_email ?? `owner@${organizationId.replace('_', '-')}.invalid`);
  await tx.organizationMember.create({
    data: {
      ...tenantData({ organizationId }),
      user_id: userId,
      role: 'admin',
      first_name: input.owner_first_name ?? '',
      last_name: input.owner_last_name ?? '',
    },
  });
  const workspace = await tx.workspace.create({ data: { ...tenantData({ organizationId }), slug: 'default', name: 'Default' } });
  const organization = await tx.organization.update({ where: { id: organizationId }, data: { default_workspace_id: workspace.id } });
  await tx.workspaceMember.create({
    data: { ...tenantData({ organizationId }), workspace_id: workspace.id, user_id: userId, role: 'admin' },
  });
  const hash = hashApiKey(secret);
  await tx.apiKey.create({
    data: {
      ...tenantData({ organizationId }),
      workspace_id: workspace.id,
      creator_user_id: userId,
      hash,
      label: maskApiKey(secret),
      name: 'Management key',
      is_management_key: true,
    },
  });
  return {
    organization_id: organization.id,
    workspace_id: workspace.id,
    owner_user_id: userId,
    management_key: secret,
    management_key_hash: hash,
    organization: organizationOf(organization),
  };
}
