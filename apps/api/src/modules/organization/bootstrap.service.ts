// First start: an empty database gets an organization, its `default` workspace, an owner user
// (org:admin) and a management key. Runs under an advisory lock, so two servers starting at once
// create one organization between them, and a restart creates nothing.
import type { Db } from '@switchyard/db';
import { newId } from '../../ids.js';
import { generateApiKey, hashApiKey, maskApiKey } from '../keys/key-format.js';

const BOOTSTRAP_LOCK = 0x5359_0001; // "SY" 1

export interface BootstrapOptions {
  /** The management key's secret; generated when absent. */
  managementKey?: string | undefined;
  ownerEmail?: string;
}

export type BootstrapResult =
  | { created: false }
  | { created: true; organizationId: string; managementKey: string; generated: boolean };

export async function bootstrapOrganization(db: Db, options: BootstrapOptions = {}): Promise<BootstrapResult> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`;
    if ((await tx.organization.count()) > 0) return { created: false as const };

    const organizationId = newId('org');
    const userId = newId('user');
    const secret = options.managementKey ?? generateApiKey();
    await tx.organization.create({ data: { id: organizationId, name: 'Switchyard' } });
    await tx.user.create({ data: { id: userId, email: options.ownerEmail ?? 'owner@switchyard.local' } });
    await tx.organizationMember.create({
      data: { organization_id: organizationId, user_id: userId, role: 'admin', first_name: 'Owner', last_name: '' },
    });
    const workspace = await tx.workspace.create({
      data: { organization_id: organizationId, slug: 'default', name: 'Default' },
    });
    await tx.organization.update({ where: { id: organizationId }, data: { default_workspace_id: workspace.id } });
    await tx.workspaceMember.create({
      data: { organization_id: organizationId, workspace_id: workspace.id, user_id: userId, role: 'admin' },
    });
    await tx.apiKey.create({
      data: {
        organization_id: organizationId,
        workspace_id: workspace.id,
        creator_user_id: userId,
        hash: hashApiKey(secret),
        label: maskApiKey(secret),
        name: 'Bootstrap management key',
        is_management_key: true,
      },
    });
    return { created: true as const, organizationId, managementKey: secret, generated: !options.managementKey };
  });
}
